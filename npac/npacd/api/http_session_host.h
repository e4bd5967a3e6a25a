// HttpSessionHost: what an admin API session (http_session.h) asks of the server that
// accepted it — its limits, the handler, the accounting of the connection limits and the
// counters — so that a session depends on this small interface and not on HttpServer
// (http_server.h implements it; data and calls flow from the server down to its sessions).
//
// Threading: every call on the server's io_context thread, like the sessions themselves.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <boost/system/error_code.hpp>

#include "npac/npacd/api/http_message.h"

namespace npac::npacd {

class HttpSessionBase;  // http_session.h

// A session's share of HttpServer::Options (http_server.h explains each).
struct HttpSessionLimits {
  std::size_t body_limit = 0;
  std::chrono::seconds idle_timeout{0};
  std::chrono::milliseconds header_timeout{0};
  std::chrono::milliseconds handshake_timeout{0};
  std::size_t stream_queue_limit = 0;
  std::chrono::milliseconds stream_write_timeout{0};
  std::size_t stream_send_buffer = 0;
};

class HttpSessionHost {
 public:
  virtual const HttpSessionLimits& sessionLimits() const = 0;
  // The request, to the handler (AdminApi); `respond` answers it.
  virtual void handle(HttpRequest&& request, Responder respond) = 0;
  // The session is gone: out of the server's book and the limits'.
  virtual void forget(HttpSessionBase* session) = 0;
  // The mark of a session going idle now: the least is the longest idle.
  virtual std::uint64_t nextIdleMark() = 0;
  // At a request's header: nullopt: serve it; else the 503 to answer (after its body)
  // before closing.
  virtual std::optional<HttpResponse> admit(HttpSessionBase& session, const HttpRequest& request) = 0;
  virtual void onHandshakeFailed(const std::string& peer, const boost::system::error_code& ec) = 0;
  virtual void onHeaderTimeout() = 0;
  virtual void onFramingRefused() = 0;
  virtual void onStreamStarted() = 0;
  virtual void onStreamEnded() = 0;
  virtual void onSlowStream(const std::string& peer, std::size_t queued) = 0;

 protected:
  virtual ~HttpSessionHost() = default;
};

}  // namespace npac::npacd
