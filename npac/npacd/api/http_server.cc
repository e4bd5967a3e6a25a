#include "npac/npacd/api/http_server.h"


#include <cerrno>
#include <optional>
#include <string_view>
#include <utility>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/heap.h"
#include "common/time_source.h"
#include "npac/npacd/accept_errors.h"
#include "npac/npacd/api/http_session.h"
#include "npac/npacd/asio_timers.h"

namespace npac::npacd {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using PlainSession = HttpSession<beast::tcp_stream>;
using TlsSession = HttpSession<beast::ssl_stream<beast::tcp_stream>>;

namespace {

constexpr std::chrono::seconds kLogInterval{60};
constexpr std::chrono::milliseconds kApiAcceptBackoffFirst{50};
constexpr std::chrono::milliseconds kApiAcceptBackoffMax{2000};
// After a stream closes, the heap is trimmed this much later (and so at most this often).
constexpr std::chrono::milliseconds kHeapTrimDelay{1000};

HttpResponse limitRefusal(const std::string& code, const std::string& message) {
  HttpResponse response = jsonErrorResponse(http::status::service_unavailable, code, message);
  response.set(http::field::retry_after, "1");
  return response;
}

}  // namespace

bool HttpServer::LogLimiter::due(std::uint64_t* skipped) {
  const auto now = common::realTimeSource().now();
  if (last && now - *last < kLogInterval) {
    ++suppressed;
    return false;
  }
  last = now;
  *skipped = suppressed;
  suppressed = 0;
  return true;
}

HttpServer::HttpServer(asio::io_context& io, Options options, HttpHandler handler)
    : io_(io),
      options_(std::move(options)),
      session_limits_{options_.body_limit,         options_.idle_timeout,       options_.header_timeout,
                      options_.handshake_timeout,  options_.stream_queue_limit, options_.stream_write_timeout,
                      options_.stream_send_buffer},
      handler_(std::move(handler)),
      acceptor_(io),
      backoff_timer_(AsioTimers(io).makeTimer()),
      limits_(ConnectionLimits::Limits{options_.max_connections,
                                       options_.classify ? options_.operator_reserve : 0,
                                       options_.max_per_client, options_.max_per_credential,
                                       options_.max_anonymous}),
      heap_trim_timer_(AsioTimers(io).makeTimer()),
      alive_(std::make_shared<bool>(true)) {}

HttpServer::~HttpServer() {
  stop();
  *alive_ = false;
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(asio::io_context& io, Options options,
                                                          HttpHandler handler) {
  beast::error_code ec;
  asio::ip::address address = asio::ip::make_address(options.address, ec);
  if (ec) {
    return Status::badOption("admin API listen address '" + options.address + "' is not an IP address");
  }
  std::unique_ptr<HttpServer> server(new HttpServer(io, std::move(options), std::move(handler)));
  tcp::endpoint endpoint{address, server->options_.port};
  std::string where = server->options_.address + ":" + std::to_string(server->options_.port);
  server->acceptor_.open(endpoint.protocol(), ec);
  if (!ec) server->acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) server->acceptor_.bind(endpoint, ec);
  if (!ec) server->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::error(StatusCode::kCannotListen, "admin API cannot listen on " + where + ": " + ec.message());
  }
  server->port_ = server->acceptor_.local_endpoint().port();
  server->accept();
  return server;
}

void HttpServer::accept() {
  acceptor_.async_accept([this, alive = alive_](beast::error_code ec, tcp::socket socket) {
    if (!*alive || stopped_ || ec == asio::error::operation_aborted) return;
    if (ec) return onAcceptError(ec);
    backoff_ = std::chrono::milliseconds(0);
    onAccepted(std::move(socket));
    accept();
  });
}

void HttpServer::onAcceptError(const beast::error_code& ec) {
  ++counters_.accept_errors;
  if (!isDescriptorError(ec) && ec != asio::error::no_memory && ec != asio::error::no_buffer_space) {
    return accept();  // ECONNABORTED and the like: that connection is gone, the next is fine
  }
  if (!isDescriptorError(ec)) return backOffAccepting(ec);
  // Out of descriptors. accept(2) fails so whether or not a connection waits (Linux looks
  // for a free descriptor first), so an idle session is closed only once one does: when
  // the listening socket is readable. It gives its descriptor back and the waiting
  // connection is served at once; with none idle the condition lasts a while and an
  // immediate retry would only spin.
  acceptor_.async_wait(tcp::acceptor::wait_read, [this, alive = alive_, ec](beast::error_code wait_ec) {
    if (wait_ec || !*alive || stopped_) return;
    if (closeOneForRoom()) return accept();
    backOffAccepting(ec);
  });
}

void HttpServer::backOffAccepting(const beast::error_code& ec) {
  backoff_ = std::max(kApiAcceptBackoffFirst, std::min(backoff_ * 2, kApiAcceptBackoffMax));
  std::uint64_t skipped = 0;
  if (accept_log_.due(&skipped)) {
    spdlog::error("admin API: accepting failed: {}; accepting again in {} ms{}", ec.message(),
                  backoff_.count(), suppressedNote(skipped));
  }
  backoff_timer_->after(backoff_, [this, alive = alive_] {
    if (!*alive || stopped_) return;
    accept();
  });
}

void HttpServer::onAccepted(tcp::socket socket) {
  beast::error_code peer_ec;
  const tcp::endpoint peer = socket.remote_endpoint(peer_ec);
  if (peer_ec) return;  // already gone
  std::shared_ptr<HttpSessionBase> session;
  std::function<void()> start;
  if (options_.tls) {
    auto tls = std::make_shared<TlsSession>(static_cast<HttpSessionHost&>(*this), alive_, std::move(socket), *options_.tls);
    start = [tls] { tls->start(); };
    session = tls;
  } else {
    auto plain = std::make_shared<PlainSession>(static_cast<HttpSessionHost&>(*this), alive_, std::move(socket));
    start = [plain] { plain->start(); };
    session = plain;
  }
  session->address = peer.address().to_string();
  // Anonymous until a request presents a credential: it may close an older anonymous
  // connection, never one that presented a credential.
  for (ConnectionAccount* older : limits_.accept(*session)) {
    closeForRoom(static_cast<HttpSessionBase&>(*older));
  }
  sessions_.insert(session.get());
  ++counters_.accepted;
  updateGauges();
  start();
}

bool HttpServer::closeOneForRoom() {
  ConnectionAccount* victim = limits_.takeForRoom();
  if (victim == nullptr) return false;
  closeForRoom(static_cast<HttpSessionBase&>(*victim));
  return true;
}

void HttpServer::closeForRoom(HttpSessionBase& session) {
  const bool anonymous = session.priority == RequestPriority::kAnonymous;
  ++(anonymous ? counters_.closed_anonymous_for_room : counters_.closed_idle_for_room);
  std::uint64_t skipped = 0;
  if (room_log_.due(&skipped)) {
    spdlog::warn("admin API: {} connections open ({} anonymous; --api-max-connections {}, {} kept for "
                 "operators): the {} one, from {}, was closed to make room for a new one{}",
                 sessions_.size(), limits_.anonymous(), options_.max_connections,
                 limits_.limits().operator_reserve, anonymous ? "oldest anonymous" : "longest-idle",
                 session.address, suppressedNote(skipped));
  }
  // Closing ends its pending read (or its handler's answer fails); the session forgets
  // itself when that handler runs. It is out of the limits' book already.
  session.idle = false;
  session.close();
  forget(&session);
}

std::optional<HttpResponse> HttpServer::admit(HttpSessionBase& session, const HttpRequest& request) {
  const RequestPriority priority = options_.classify ? options_.classify(request) : RequestPriority::kReader;
  std::optional<std::size_t> credential;
  if (auto header = request.find(http::field::authorization); header != request.end()) {
    credential = std::hash<std::string_view>{}(std::string_view(header->value().data(), header->value().size()));
  }
  ConnectionLimits::Admission admission = limits_.admit(session, priority, credential);
  for (ConnectionAccount* idle : admission.closed_for_room) {
    closeForRoom(static_cast<HttpSessionBase&>(*idle));
  }
  updateGauges();
  const std::string holding = std::to_string(admission.holding);
  switch (admission.refusal) {
    case ConnectionLimits::Refusal::kNone: return std::nullopt;
    case ConnectionLimits::Refusal::kPerClient:
      ++counters_.refused_per_client;
      return limitRefusal("too_many_connections_per_client",
                          "this client already has " + holding + " " + toString(priority) +
                              " connections to the admin API, the most allowed from one address for one "
                              "role (max_per_client); reuse a keep-alive connection");
    case ConnectionLimits::Refusal::kPerCredential:
      ++counters_.refused_per_credential;
      return limitRefusal("too_many_connections_per_credential",
                          "this token already has " + holding +
                              " connections to the admin API, the most allowed for one token "
                              "(max_per_credential); reuse a keep-alive connection");
    case ConnectionLimits::Refusal::kOperatorReserve:
      ++counters_.refused_operator_reserve;
      return limitRefusal("operator_reserve",
                          "reader and application tokens hold " + holding +
                              " connections to the admin API, all it keeps for them: the last " +
                              std::to_string(limits_.limits().operator_reserve) +
                              " are kept for operator tokens (operator_reserve); retry shortly");
    case ConnectionLimits::Refusal::kFull:
      ++counters_.refused_max_connections;
      {
        std::uint64_t skipped = 0;
        if (limit_log_.due(&skipped)) {
          spdlog::warn("admin API: {} connections with a credential, none idle: a request from {} was "
                       "refused{}",
                       holding, session.address, suppressedNote(skipped));
        }
      }
      return limitRefusal("too_many_connections",
                          "the admin API has " + holding + " connections with a credential, the most it "
                              "takes (max_connections), and none is idle; retry shortly");
  }
  return std::nullopt;
}

void HttpServer::onHandshakeFailed(const std::string& peer, const beast::error_code& ec) {
  ++counters_.tls_handshake_failures;
  std::uint64_t skipped = 0;
  if (handshake_log_.due(&skipped)) {
    spdlog::warn("admin API: TLS handshake with {} failed: {} (a plain HTTP client, an old TLS version "
                 "or not TLS at all); {} so far{}",
                 peer, ec == beast::error::timeout ? "timed out" : ec.message(),
                 counters_.tls_handshake_failures.load(), suppressedNote(skipped));
  }
}

void HttpServer::onSlowStream(const std::string& peer, std::size_t queued) {
  ++counters_.streams_closed_slow;
  std::uint64_t skipped = 0;
  if (slow_stream_log_.due(&skipped)) {
    spdlog::warn("admin API: closed a stream to {}: its client does not read ({} bytes waiting; the limit is {}){}",
                 peer, queued, options_.stream_queue_limit, suppressedNote(skipped));
  }
}

void HttpServer::forget(HttpSessionBase* session) {
  limits_.remove(*session);
  if (sessions_.erase(session) == 0) return;
  updateGauges();
}

void HttpServer::updateGauges() {
  counters_.sessions = sessions_.size();
  counters_.anonymous = limits_.anonymous();
}

void HttpServer::onStreamEnded() {
  counters_.streams = --streams_;
  // A stream's queue and bodies are freed now, but the allocator keeps freed heap for reuse, and
  // what a burst of unread streams took (hundreds of MB) would stay with the process:
  // give it back, once for all the streams that close within kHeapTrimDelay.
  if (heap_trim_due_ || stopped_) return;
  heap_trim_due_ = true;
  heap_trim_timer_->after(kHeapTrimDelay, [this, alive = alive_] {
    if (!*alive) return;
    heap_trim_due_ = false;
    common::returnFreedHeap();
  });
}

HttpServerCounters HttpServer::counters() const {
  HttpServerCounters c;
  c.accepted = counters_.accepted.load();
  c.refused_max_connections = counters_.refused_max_connections.load();
  c.refused_per_client = counters_.refused_per_client.load();
  c.refused_per_credential = counters_.refused_per_credential.load();
  c.refused_operator_reserve = counters_.refused_operator_reserve.load();
  c.closed_idle_for_room = counters_.closed_idle_for_room.load();
  c.closed_anonymous_for_room = counters_.closed_anonymous_for_room.load();
  c.closed_header_timeout = counters_.closed_header_timeout.load();
  c.refused_framing = counters_.refused_framing.load();
  c.tls_handshake_failures = counters_.tls_handshake_failures.load();
  c.accept_errors = counters_.accept_errors.load();
  c.streams_closed_slow = counters_.streams_closed_slow.load();
  c.sessions = counters_.sessions.load();
  c.anonymous = counters_.anonymous.load();
  c.streams = counters_.streams.load();
  return c;
}

void HttpServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  beast::error_code ignored;
  acceptor_.close(ignored);
  backoff_timer_->cancel();
  heap_trim_timer_->cancel();
  // Closing cancels each session's pending read/write; their handlers then finish().
  for (HttpSessionBase* session : std::unordered_set<HttpSessionBase*>(sessions_)) session->close();
}

}  // namespace npac::npacd
