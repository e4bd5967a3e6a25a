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

#include "npac/npacd/api/http_session.h"

namespace npac::npacd {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using PlainSession = HttpSession<beast::tcp_stream>;
using TlsSession = HttpSession<beast::ssl_stream<beast::tcp_stream>>;

namespace {

constexpr std::chrono::seconds kLogInterval{60};
constexpr std::chrono::milliseconds kAcceptBackoffFirst{50};
constexpr std::chrono::milliseconds kAcceptBackoffMax{2000};

bool isDescriptorError(const beast::error_code& ec) {
  return ec == asio::error::no_descriptors ||  // EMFILE
         (ec.category() == boost::system::system_category() && ec.value() == ENFILE);
}

std::string suppressedNote(std::uint64_t skipped) {
  return skipped == 0 ? "" : " (" + std::to_string(skipped) + " more since the last such line)";
}

HttpResponse limitRefusal(const std::string& code, const std::string& message) {
  HttpResponse response = jsonErrorResponse(http::status::service_unavailable, code, message);
  response.set(http::field::retry_after, "1");
  return response;
}

}  // namespace

bool HttpServer::LogLimiter::due(std::uint64_t* skipped) {
  const auto now = std::chrono::steady_clock::now();
  if (last && now - *last < kLogInterval) {
    ++suppressed;
    return false;
  }
  last = now;
  *skipped = suppressed;
  suppressed = 0;
  return true;
}

HttpResponse jsonErrorResponse(http::status status, const std::string& code,
                               const std::string& message, unsigned version) {
  HttpResponse response{status, version};
  response.set(http::field::content_type, "application/json");
  nlohmann::json body = {{"error", {{"code", code}, {"message", message}}}};
  // `message` may echo client input: bytes that are not UTF-8 become U+FFFD, never a throw.
  response.body() = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  response.prepare_payload();
  return response;
}

std::string printableAscii(std::string_view text) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

HttpServer::HttpServer(asio::io_context& io, Options options, HttpHandler handler)
    : io_(io),
      options_(std::move(options)),
      handler_(std::move(handler)),
      acceptor_(io),
      backoff_timer_(io),
      alive_(std::make_shared<bool>(true)) {}

HttpServer::~HttpServer() {
  stop();
  *alive_ = false;
}

db::Result<std::unique_ptr<HttpServer>> HttpServer::start(asio::io_context& io, Options options,
                                                          HttpHandler handler) {
  beast::error_code ec;
  asio::ip::address address = asio::ip::make_address(options.address, ec);
  if (ec) {
    return db::Status::invalidArgument("admin API listen address '" + options.address +
                                       "' is not an IP address");
  }
  std::unique_ptr<HttpServer> server(new HttpServer(io, std::move(options), std::move(handler)));
  tcp::endpoint endpoint{address, server->options_.port};
  std::string where = server->options_.address + ":" + std::to_string(server->options_.port);
  server->acceptor_.open(endpoint.protocol(), ec);
  if (!ec) server->acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) server->acceptor_.bind(endpoint, ec);
  if (!ec) server->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return db::Status::make(db::Status::Code::kCantOpen,
                            "admin API cannot listen on " + where + ": " + ec.message(), {},
                            "choose another --api-listen address or stop the other process");
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
    if (closeLongestIdle()) return accept();
    backOffAccepting(ec);
  });
}

void HttpServer::backOffAccepting(const beast::error_code& ec) {
  backoff_ = std::max(kAcceptBackoffFirst, std::min(backoff_ * 2, kAcceptBackoffMax));
  std::uint64_t skipped = 0;
  if (accept_log_.due(&skipped)) {
    spdlog::error("admin API: accepting failed: {}; accepting again in {} ms{}", ec.message(),
                  backoff_.count(), suppressedNote(skipped));
  }
  backoff_timer_.expires_after(backoff_);
  backoff_timer_.async_wait([this, alive = alive_](beast::error_code wait_ec) {
    if (wait_ec || !*alive || stopped_) return;
    accept();
  });
}

void HttpServer::onAccepted(tcp::socket socket) {
  beast::error_code peer_ec;
  const tcp::endpoint peer = socket.remote_endpoint(peer_ec);
  if (peer_ec) return;  // already gone
  std::string address = peer.address().to_string();
  // Room for this one, and the operator reserve kept free while anything is idle.
  const std::size_t reserve = options_.classify ? options_.operator_reserve : 0;
  const std::size_t normal_slots = options_.max_connections > reserve ? options_.max_connections - reserve : 0;
  if (sessions_.size() >= normal_slots) closeLongestIdle();
  if (sessions_.size() >= options_.max_connections) {
    ++counters_.refused_max_connections;
    std::uint64_t skipped = 0;
    if (limit_log_.due(&skipped)) {
      spdlog::warn("admin API: {} connections, none idle: a connection from {} was closed at accept{}",
                   sessions_.size(), address, suppressedNote(skipped));
    }
    beast::error_code ignored;
    socket.close(ignored);
    return;
  }
  std::size_t& from_client = per_client_[address];
  // Past the limit a connection is still read once, to answer its request 503; past twice
  // the limit it is closed at once, so one client's refusals cannot fill the server.
  if (from_client >= 2 * options_.max_per_client) {
    ++counters_.refused_per_client;
    beast::error_code ignored;
    socket.close(ignored);
    return;
  }
  std::shared_ptr<HttpSessionBase> session;
  std::function<void()> start;
  if (options_.tls) {
    auto tls = std::make_shared<TlsSession>(*this, std::move(socket), *options_.tls);
    start = [tls] { tls->start(); };
    session = tls;
  } else {
    auto plain = std::make_shared<PlainSession>(*this, std::move(socket));
    start = [plain] { plain->start(); };
    session = plain;
  }
  session->peer_address = std::move(address);
  session->reserved_slot = sessions_.size() >= normal_slots && reserve > 0;
  if (from_client >= options_.max_per_client) {
    session->refusal = limitRefusal(
        "too_many_connections_per_client",
        "this client already has " + std::to_string(from_client) + " connections to the admin API, the most " +
            "allowed from one address (max_per_client); reuse a keep-alive connection");
  }
  ++from_client;
  sessions_.insert(session.get());
  ++counters_.accepted;
  counters_.sessions = sessions_.size();
  start();
}

bool HttpServer::closeLongestIdle() {
  HttpSessionBase* oldest = nullptr;
  for (HttpSessionBase* session : sessions_) {
    if (session->idle && (oldest == nullptr || session->idle_mark < oldest->idle_mark)) oldest = session;
  }
  if (oldest == nullptr) return false;
  ++counters_.closed_idle_for_room;
  std::uint64_t skipped = 0;
  if (room_log_.due(&skipped)) {
    spdlog::warn("admin API: {} connections open (--api-max-connections {}, {} kept for operators): the "
                 "longest-idle one, from {}, was closed to make room for a new one{}",
                 sessions_.size(), options_.max_connections, options_.classify ? options_.operator_reserve : 0,
                 oldest->peer_address, suppressedNote(skipped));
  }
  // Closing ends its pending read; the session forgets itself when its handler runs. It no
  // longer counts as idle (nor as a candidate) meanwhile.
  oldest->idle = false;
  oldest->close();
  forget(oldest);
  return true;
}

std::optional<HttpResponse> HttpServer::admit(HttpSessionBase& session, const HttpRequest& request) {
  if (session.refusal) {
    ++counters_.refused_per_client;
    return std::move(session.refusal);
  }
  if (session.reserved_slot &&
      (!options_.classify || options_.classify(request) != RequestPriority::kOperator)) {
    ++counters_.refused_operator_reserve;
    return limitRefusal("operator_reserve",
                        "the admin API has " + std::to_string(sessions_.size()) +
                            " connections: the last " + std::to_string(options_.operator_reserve) +
                            " are kept for operator tokens (operator_reserve); retry shortly");
  }
  auto header = request.find(http::field::authorization);
  if (header == request.end()) return std::nullopt;
  const std::size_t credential = std::hash<std::string_view>{}(
      std::string_view(header->value().data(), header->value().size()));
  if (session.credential == credential) return std::nullopt;
  if (session.credential) {
    if (auto it = per_credential_.find(*session.credential); it != per_credential_.end() && --it->second == 0) {
      per_credential_.erase(it);
    }
    session.credential.reset();
  }
  std::size_t& holding = per_credential_[credential];
  if (holding >= options_.max_per_credential) {
    if (holding == 0) per_credential_.erase(credential);
    ++counters_.refused_per_credential;
    return limitRefusal("too_many_connections_per_credential",
                        "this token already has " + std::to_string(holding) +
                            " connections to the admin API, the most allowed for one token "
                            "(max_per_credential); reuse a keep-alive connection");
  }
  ++holding;
  session.credential = credential;
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
  if (sessions_.erase(session) == 0) return;  // forgotten already (closed for room)
  if (auto it = per_client_.find(session->peer_address); it != per_client_.end() && --it->second == 0) {
    per_client_.erase(it);
  }
  if (session->credential) {
    if (auto it = per_credential_.find(*session->credential); it != per_credential_.end() && --it->second == 0) {
      per_credential_.erase(it);
    }
  }
  counters_.sessions = sessions_.size();
}

HttpServerCounters HttpServer::counters() const {
  HttpServerCounters c;
  c.accepted = counters_.accepted.load();
  c.refused_max_connections = counters_.refused_max_connections.load();
  c.refused_per_client = counters_.refused_per_client.load();
  c.refused_per_credential = counters_.refused_per_credential.load();
  c.refused_operator_reserve = counters_.refused_operator_reserve.load();
  c.closed_idle_for_room = counters_.closed_idle_for_room.load();
  c.tls_handshake_failures = counters_.tls_handshake_failures.load();
  c.accept_errors = counters_.accept_errors.load();
  c.streams_closed_slow = counters_.streams_closed_slow.load();
  c.sessions = counters_.sessions.load();
  c.streams = counters_.streams.load();
  return c;
}

void HttpServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  beast::error_code ignored;
  acceptor_.close(ignored);
  backoff_timer_.cancel();
  // Closing cancels each session's pending read/write; their handlers then finish().
  for (HttpSessionBase* session : std::unordered_set<HttpSessionBase*>(sessions_)) session->close();
}

}  // namespace npac::npacd
