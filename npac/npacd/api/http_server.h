// HttpServer: a small HTTP/1.1 server (Boost.Beast) for npacd's admin API, in plain HTTP
// or, given Options::tls, HTTPS only.
//
// Three roles, as in the Beast examples: the listener accepts on one address, each
// connection is a session that owns its stream and reads one request at a time, and the
// handler (AdminApi) turns a request into a response. A handler may answer later (a long
// poll, a submission waiting for its commit): it is given a Responder to call exactly once.
// The session keeps the connection open between requests when the client asks for
// keep-alive (HTTP/1.1 default) and closes it otherwise. One session template serves both
// transports (http_session.h); a TLS session first completes its handshake within
// Options::handshake_timeout: a failed handshake (a plain HTTP request on the TLS port, a
// client offering only TLS 1.0/1.1, garbage) closes the connection, is counted and logged
// in at most one line a minute.
//
// Limits: a request body over Options::body_limit is answered 413 and the connection is
// closed; a request line or headers Beast cannot parse get 400 and a close; a connection
// idle for Options::idle_timeout between requests is closed. Connections (docs/API.md
// "Connection limits"):
//   max_connections       sessions at once. A new connection when fewer than
//                         operator_reserve + 1 slots are free closes the longest-idle
//                         session (one waiting for a request) to make room; with none
//                         idle and none free it is closed at accept.
//   operator_reserve      the last slots: a connection accepted into one is served only
//                         for requests classify() calls kOperator (others 503
//                         operator_reserve). Without classify every request is equal and
//                         no slot is reserved.
//   max_per_client        sessions from one client IP address; the next is answered 503
//                         too_many_connections_per_client.
//   max_per_credential    sessions whose latest request carried the same Authorization
//                         value (compared by hash); the next is 503
//                         too_many_connections_per_credential.
// Every refusal is a JSON 503 with Retry-After and is counted (counters()). Descriptor
// exhaustion at accept (EMFILE, ENFILE) closes the longest-idle session, or backs off
// 50 ms doubling to 2 s, instead of spinning.
// Every error answer is the API's JSON error body. A handler that throws is answered 500
// "internal" (unless it already answered) and logged once with its route; the exception
// never leaves the session, so the server stays up.
//
// Threading: everything runs on the io_context given to start() (one thread is expected
// to run it), classify() included. A Responder must be called on that thread (AdminApi
// posts completions from other threads there first). stop() must also be called on that
// thread, or after the io_context stopped; it closes the acceptor and every open session.
// counters() may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>

#include "db/status.h"

namespace boost::asio::ssl {
class context;
}

namespace npac::npacd {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;
// Delivers the response to its session; call exactly once, on the io_context's thread.
using Responder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest&& request, Responder respond)>;

// A JSON error body {"error":{"code":..,"message":..}} with `status`.
HttpResponse jsonErrorResponse(boost::beast::http::status status, const std::string& code,
                               const std::string& message, unsigned version = 11);

// `text` with every byte outside printable ASCII written as \xNN: for echoing client
// input into a log line or an error message.
std::string printableAscii(std::string_view text);

// Who a request is for the operator reserve: the classify callback's answer.
enum class RequestPriority { kNormal, kOperator };

// Counts since start; the refusals are the 503s (and closes at accept) of the limits.
struct HttpServerCounters {
  std::uint64_t accepted = 0;                   // connections taken into a session
  std::uint64_t refused_max_connections = 0;    // closed at accept: full, nothing idle
  std::uint64_t refused_per_client = 0;         // 503 too_many_connections_per_client
  std::uint64_t refused_per_credential = 0;     // 503 too_many_connections_per_credential
  std::uint64_t refused_operator_reserve = 0;   // 503 operator_reserve
  std::uint64_t closed_idle_for_room = 0;       // longest-idle sessions closed for a new one
  std::uint64_t tls_handshake_failures = 0;     // includes handshake timeouts
  std::uint64_t accept_errors = 0;              // accept(2) failures (EMFILE, ...)
  std::uint64_t sessions = 0;                   // open now
};

class HttpSessionBase;
template <class Stream>
class HttpSession;

class HttpServer {
 public:
  struct Options {
    std::string address = "127.0.0.1";
    std::uint16_t port = 10180;  // 0 = an ephemeral port (tests): see port()
    std::size_t body_limit = 1024 * 1024;
    std::chrono::seconds idle_timeout{60};
    std::size_t max_connections = 256;
    std::size_t operator_reserve = 8;      // below max_connections; needs classify
    std::size_t max_per_client = 32;       // per client IP address
    std::size_t max_per_credential = 32;   // per Authorization header value
    // Set: every connection is TLS (tls_context.h builds it); unset: plain HTTP.
    std::shared_ptr<boost::asio::ssl::context> tls;
    std::chrono::milliseconds handshake_timeout{10'000};
    // Unset: every request is kNormal and no slot is reserved.
    std::function<RequestPriority(const HttpRequest&)> classify;
  };

  // Binds and listens; a bad address or a port in use is an error value, nothing thrown.
  static db::Result<std::unique_ptr<HttpServer>> start(boost::asio::io_context& io,
                                                       Options options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const { return port_; }  // the bound port
  bool tls() const { return options_.tls != nullptr; }
  void stop();
  HttpServerCounters counters() const;

 private:
  template <class Stream>
  friend class HttpSession;
  friend class HttpSessionBase;
  HttpServer(boost::asio::io_context& io, Options options, HttpHandler handler);
  void accept();
  void onAccepted(boost::asio::ip::tcp::socket socket);
  void onAcceptError(const boost::system::error_code& ec);
  bool closeLongestIdle();
  // Session hooks (http_server.cc).
  void forget(HttpSessionBase* session);
  std::uint64_t nextIdleMark() { return ++idle_marks_; }
  // nullopt: serve `request`; else the 503 to answer before closing.
  std::optional<HttpResponse> admit(HttpSessionBase& session, const HttpRequest& request);
  void onHandshakeFailed(const std::string& peer, const boost::system::error_code& ec);

  boost::asio::io_context& io_;
  Options options_;
  HttpHandler handler_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer backoff_timer_;
  std::chrono::milliseconds backoff_{0};
  std::uint16_t port_ = 0;
  bool stopped_ = false;
  std::unordered_set<HttpSessionBase*> sessions_;  // live sessions, for stop() and limits
  std::unordered_map<std::string, std::size_t> per_client_;   // sessions by peer address
  std::unordered_map<std::size_t, std::size_t> per_credential_;  // by Authorization hash
  std::uint64_t idle_marks_ = 0;  // orders idle sessions: lower mark = idle longer
  std::shared_ptr<bool> alive_;   // sessions check it before forget()
  // Rate-limited log lines (steady clock: only their cadence depends on it).
  struct LogLimiter {
    std::optional<std::chrono::steady_clock::time_point> last;
    std::uint64_t suppressed = 0;
    bool due(std::uint64_t* skipped);
  };
  LogLimiter handshake_log_, accept_log_, limit_log_;
  struct AtomicCounters {
    std::atomic<std::uint64_t> accepted{0}, refused_max_connections{0}, refused_per_client{0},
        refused_per_credential{0}, refused_operator_reserve{0}, closed_idle_for_room{0},
        tls_handshake_failures{0}, accept_errors{0}, sessions{0};
  };
  AtomicCounters counters_;
};

}  // namespace npac::npacd
