#include "npac/npacd/api/http_server.h"

#include <optional>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/core.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace npac::npacd {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

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

// One connection: read a request, hand it to the handler, write the answer, repeat.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, HttpServer& server)
      : stream_(std::move(socket)),
        server_(&server),
        alive_(server.alive_),
        body_limit_(server.options_.body_limit),
        idle_timeout_(server.options_.idle_timeout) {}

  ~HttpSession() {
    if (*alive_) server_->forget(this);
  }

  void start() { read(); }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(body_limit_);
    stream_.expires_after(idle_timeout_);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->onRead(ec);
                     });
  }

  void onRead(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof) {
      return finish();
    }
    if (ec == http::error::body_limit) {
      return writeFinal(jsonErrorResponse(
          http::status::payload_too_large, "body_too_large",
          "request body exceeds " + std::to_string(body_limit_) + " bytes"));
    }
    if (ec) {
      return writeFinal(jsonErrorResponse(http::status::bad_request, "bad_http",
                                          "malformed HTTP request: " + ec.message()));
    }
    HttpRequest request = parser_->release();
    keep_alive_ = request.keep_alive();
    version_ = request.version();
    stream_.expires_never();  // a long poll may take its time; the handler bounds it
    if (!*alive_) {  // the server is gone: nobody to hand the request to
      return writeFinal(jsonErrorResponse(http::status::service_unavailable, "shutting_down",
                                          "the admin API is stopping"));
    }
    // The responder keeps the session alive while the handler works (a long poll, a
    // commit): no socket operation is pending meanwhile. It answers once: a second call
    // (a handler that answered and then threw) is dropped.
    auto answered = std::make_shared<bool>(false);
    Responder respond = [self = shared_from_this(), answered](HttpResponse response) {
      if (*answered) return;
      *answered = true;
      self->write(std::move(response));
    };
    const std::string route = std::string(request.method_string()) + " " + std::string(request.target());
    // No exception may end the server: a handler that throws is a bug in that route, so
    // it is logged once with the route and answered 500; the other sessions carry on.
    std::string failure;
    try {
      server_->handler_(std::move(request), respond);
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "a non-standard exception";
    }
    if (failure.empty()) return;
    spdlog::error("admin API: {} failed with an exception: {}", printableAscii(route), failure);
    if (!*answered) {
      respond(jsonErrorResponse(http::status::internal_server_error, "internal",
                                "npacd failed to handle this request (an internal error, logged); "
                                "check with a GET whether it took effect before retrying"));
    }
  }

  void write(HttpResponse response) {
    response.version(version_);
    response.keep_alive(keep_alive_);
    response.prepare_payload();
    auto shared = std::make_shared<HttpResponse>(std::move(response));
    stream_.expires_after(idle_timeout_);
    http::async_write(stream_, *shared,
                      [self = shared_from_this(), shared](beast::error_code ec, std::size_t) {
                        if (ec || !self->keep_alive_) return self->finish();
                        self->read();
                      });
  }

  void writeFinal(HttpResponse response) {
    keep_alive_ = false;
    write(std::move(response));
  }

  void finish() { close(); }

  beast::tcp_stream stream_;
  HttpServer* server_;
  std::shared_ptr<bool> alive_;  // false once the server is destroyed: server_ dangles
  std::size_t body_limit_;
  std::chrono::seconds idle_timeout_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = false;
  unsigned version_ = 11;
};

HttpServer::HttpServer(asio::io_context& io, Options options, HttpHandler handler)
    : io_(io),
      options_(std::move(options)),
      handler_(std::move(handler)),
      acceptor_(io),
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
    if (!*alive || stopped_) return;
    if (!ec) {
      if (sessions_.size() >= options_.max_connections) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        auto session = std::make_shared<HttpSession>(std::move(socket), *this);
        sessions_.insert(session.get());
        session->start();
      }
    }
    if (ec != asio::error::operation_aborted) accept();
  });
}

void HttpServer::forget(HttpSession* session) { sessions_.erase(session); }

void HttpServer::stop() {
  if (stopped_) return;
  stopped_ = true;
  beast::error_code ignored;
  acceptor_.close(ignored);
  // Closing cancels each session's pending read/write; their handlers then finish().
  for (HttpSession* session : std::unordered_set<HttpSession*>(sessions_)) session->close();
}

}  // namespace npac::npacd
