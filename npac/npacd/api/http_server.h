// HttpServer: a small HTTP/1.1 server (Boost.Beast) for npacd's admin API, in plain HTTP
// or, given Options::tls, HTTPS only.
//
// Three roles, as in the Beast examples: the listener accepts on one address, each
// connection is a session that owns its stream and reads one request at a time, and the
// handler (AdminApi) turns a request into a response. A handler may answer later (a long
// poll, a submission waiting for its commit): it is given a Responder to call exactly once.
// The session keeps the connection open between requests when the client asks for
// keep-alive (HTTP/1.1 default) and closes it otherwise. A handler may instead turn its
// session into a stream (Responder::stream(), for server-sent events): the header is
// written, then each piece the handler sends, until either side ends it; the connection
// closes after. One session template serves both transports (http_session.h); a TLS
// session first completes its handshake within
// Options::handshake_timeout: a failed handshake (a plain HTTP request on the TLS port, a
// client offering only TLS 1.0/1.1, garbage) closes the connection, is counted and logged
// in at most one line a minute.
//
// Limits: a request body over Options::body_limit is answered 413 and the connection is
// closed; a request line or headers Beast cannot parse get 400 and a close, headers over
// 8 KiB 431; a header whose framing is ambiguous or malformed (http_framing.h: a
// Transfer-Encoding other than chunked, Content-Length with Transfer-Encoding, no Host in
// HTTP/1.1, two Authorization headers) is answered 400 (or 501) and the connection closed
// before its body is read, so no body ever runs as a request of its own. A connection
// idle for Options::idle_timeout between requests is closed; an anonymous connection
// (below) must deliver each request's header within Options::header_timeout (slowloris).
// A stream is never idle (it is not closed for that, nor for room), but a stream whose
// client does not read — more than Options::stream_queue_limit bytes waiting, or one
// write not done within Options::stream_write_timeout — is closed and logged (at most
// one line a minute); its socket's kernel send buffer is Options::stream_send_buffer.
// After streams close the freed heap is given back to the system (common/heap.h: jemalloc's
// purge, or glibc's malloc_trim; at most once a second), so memory a burst of streams took
// does not stay with the process.
//
// Connections (ConnectionLimits, connection_limits.h; docs/API.md "Connection limits"):
// a connection is anonymous until a request with a valid credential (classify() above
// kAnonymous) arrives, and anonymous connections — TLS handshakes and headers under way
// included — have their own pool (max_anonymous, max_per_client per address, the oldest
// closed for a new one), so they never cost a connection that presented a credential.
//   max_connections       credentialed sessions at once; room is made by closing the
//                         longest-idle one that is not an operator's.
//   operator_reserve      of them, kept for requests classify() calls kOperator: the
//                         other roles together hold at most max_connections less this
//                         (past it 503 operator_reserve). Without classify every request
//                         is kReader and no slot is reserved.
//   max_per_client        per client IP address: anonymous connections (the oldest closed
//                         for a new one), and credentialed ones per role (the next is 503
//                         too_many_connections_per_client) — a role never counts against
//                         another, so a reader cannot crowd out an operator's address.
//   max_per_credential    sessions whose latest credentialed request carried the same
//                         Authorization value (compared by hash); the next is 503
//                         too_many_connections_per_credential.
// Every refusal is a JSON 503 with Retry-After and is counted (counters()). Descriptor
// exhaustion at accept (EMFILE, ENFILE) closes the oldest anonymous connection, else the
// longest-idle credentialed one that is not an operator's, once a connection is waiting
// (never one more than that connection needs), or backs off 50 ms doubling to 2 s,
// instead of spinning.
// Every answer carries X-Content-Type-Options: nosniff, and Cache-Control: no-store unless
// its handler set a Cache-Control of its own (an answer may carry a secret).
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
#include <type_traits>
#include <unordered_set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>

#include "common/timer.h"
#include "db/status.h"
#include "npac/npacd/api/api_response.h"
#include "npac/npacd/api/connection_limits.h"
#include "npac/npacd/api/http_message.h"
#include "npac/npacd/api/http_session_host.h"

namespace boost::asio::ssl {
class context;
}

namespace npac::npacd {

// Counts since start; the refusals are the 503s (and closes at accept) of the limits.
struct HttpServerCounters {
  std::uint64_t accepted = 0;                   // connections taken into a session
  std::uint64_t refused_max_connections = 0;    // 503 too_many_connections: full, nothing idle
  std::uint64_t refused_per_client = 0;         // 503 too_many_connections_per_client
  std::uint64_t refused_per_credential = 0;     // 503 too_many_connections_per_credential
  std::uint64_t refused_operator_reserve = 0;   // 503 operator_reserve
  std::uint64_t closed_idle_for_room = 0;       // longest-idle credentialed sessions closed for a new one
  std::uint64_t closed_anonymous_for_room = 0;  // oldest anonymous connections closed for a new one
  std::uint64_t closed_header_timeout = 0;      // anonymous connections with no request in header_timeout
  std::uint64_t refused_framing = 0;            // 400/501 for a header http_framing.h refuses
  std::uint64_t tls_handshake_failures = 0;     // includes handshake timeouts
  std::uint64_t accept_errors = 0;              // accept(2) failures (EMFILE, ...)
  std::uint64_t streams_closed_slow = 0;        // streams whose client did not read
  std::uint64_t sessions = 0;                   // open now
  std::uint64_t anonymous = 0;                  // of which anonymous now
  std::uint64_t streams = 0;                    // of which streaming now
};

class HttpServer : private HttpSessionHost {
 public:
  struct Options {
    std::string address = "127.0.0.1";
    std::uint16_t port = 10180;  // 0 = an ephemeral port (tests): see port()
    std::size_t body_limit = 1024 * 1024;
    std::chrono::seconds idle_timeout{60};
    std::size_t max_connections = 256;     // credentialed connections
    std::size_t operator_reserve = 8;      // below max_connections; needs classify
    std::size_t max_per_client = 32;       // per client IP address: anonymous, and per role
    std::size_t max_per_credential = 32;   // per Authorization header value
    std::size_t max_anonymous = 64;        // connections without a credential yet, in all
    // An anonymous connection's wait for each request header, from its first byte's
    // wait on (slowloris); a credentialed connection waits idle_timeout.
    std::chrono::milliseconds header_timeout{10'000};
    // Set: every connection is TLS (tls_context.h builds it); unset: plain HTTP.
    std::shared_ptr<boost::asio::ssl::context> tls;
    std::chrono::milliseconds handshake_timeout{10'000};
    // A stream's bytes queued and not yet written past which its client is closed.
    std::size_t stream_queue_limit = 512 * 1024;
    // One write of a stream not done within this: its client does not read; closed.
    std::chrono::milliseconds stream_write_timeout{15'000};
    // SO_SNDBUF of a streaming socket (Linux doubles it for its bookkeeping): what the
    // kernel holds for a client that does not read. 0 leaves the system's default.
    std::size_t stream_send_buffer = 64 * 1024;
    // Who a request is (its header: the body is not read yet). Unset: every request is
    // kReader and no slot is reserved.
    std::function<RequestPriority(const HttpRequest&)> classify;
  };

  // Binds and listens; a bad address or a port in use is an error value, nothing thrown.
  static Result<std::unique_ptr<HttpServer>> start(boost::asio::io_context& io,
                                                       Options options, HttpHandler handler);
  ~HttpServer() override;
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const { return port_; }  // the bound port
  bool tls() const { return options_.tls != nullptr; }
  void stop();
  HttpServerCounters counters() const;

 private:
  HttpServer(boost::asio::io_context& io, Options options, HttpHandler handler);
  void accept();
  void onAccepted(boost::asio::ip::tcp::socket socket);
  void onAcceptError(const boost::system::error_code& ec);
  // Accepts again after backoff_ (50 ms doubling to 2 s), logging at most once a minute.
  void backOffAccepting(const boost::system::error_code& ec);
  // Descriptor exhaustion: closes one connection (ConnectionLimits::takeForRoom()).
  bool closeOneForRoom();
  // Closes `session`, already out of the limits' book, to make room for another.
  void closeForRoom(HttpSessionBase& session);
  // HttpSessionHost: what the sessions ask of their server (http_server.cc).
  const HttpSessionLimits& sessionLimits() const override { return session_limits_; }
  void handle(HttpRequest&& request, Responder respond) override { handler_(std::move(request), std::move(respond)); }
  void forget(HttpSessionBase* session) override;
  std::uint64_t nextIdleMark() override { return limits_.nextMark(); }
  std::optional<HttpResponse> admit(HttpSessionBase& session, const HttpRequest& request) override;
  void onHandshakeFailed(const std::string& peer, const boost::system::error_code& ec) override;
  void onHeaderTimeout() override { ++counters_.closed_header_timeout; }
  void onFramingRefused() override { ++counters_.refused_framing; }
  void onStreamStarted() override { counters_.streams = ++streams_; }
  void onStreamEnded() override;
  void onSlowStream(const std::string& peer, std::size_t queued) override;
  void updateGauges();

  boost::asio::io_context& io_;
  Options options_;
  HttpSessionLimits session_limits_;
  HttpHandler handler_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::unique_ptr<common::Timer> backoff_timer_;
  std::chrono::milliseconds backoff_{0};
  std::uint16_t port_ = 0;
  bool stopped_ = false;
  std::unordered_set<HttpSessionBase*> sessions_;  // live sessions, for stop()
  ConnectionLimits limits_;       // the sessions' accounting
  std::uint64_t streams_ = 0;     // sessions streaming now
  std::unique_ptr<common::Timer> heap_trim_timer_;  // pending while a trim is due
  bool heap_trim_due_ = false;
  std::shared_ptr<bool> alive_;   // sessions check it before forget()
  // Rate-limited log lines (steady clock: only their cadence depends on it).
  struct LogLimiter {
    std::optional<std::chrono::steady_clock::time_point> last;
    std::uint64_t suppressed = 0;
    bool due(std::uint64_t* skipped);
  };
  LogLimiter handshake_log_, accept_log_, limit_log_, slow_stream_log_, room_log_;
  struct AtomicCounters {
    std::atomic<std::uint64_t> accepted{0}, refused_max_connections{0}, refused_per_client{0},
        refused_per_credential{0}, refused_operator_reserve{0}, closed_idle_for_room{0},
        closed_anonymous_for_room{0}, closed_header_timeout{0}, refused_framing{0}, tls_handshake_failures{0},
        accept_errors{0}, streams_closed_slow{0}, sessions{0}, anonymous{0}, streams{0};
  };
  AtomicCounters counters_;
};

}  // namespace npac::npacd
