// HttpSession<Stream>: one admin API connection, plain (beast::tcp_stream) or TLS
// (beast::ssl_stream<beast::tcp_stream>): handshake (TLS only), then read a request, let
// the server admit it against its limits, hand it to the handler, write the answer,
// repeat. HttpSessionBase is what the server keeps of every session, whatever its stream:
// the accounting its limits need and close().
//
// Internal to http_server.cc (the only includer); the contract is HttpServer's.
// Threading: the server's io_context thread only.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <spdlog/spdlog.h>

#include "npac/npacd/api/http_server.h"

namespace npac::npacd {

class HttpSessionBase {
 public:
  virtual ~HttpSessionBase() = default;
  virtual void close() = 0;

  // Accounting, kept by HttpServer.
  std::string peer_address;                 // the client's IP address, per_client_'s key
  std::optional<std::size_t> credential;    // hash of the latest Authorization value
  bool idle = true;                         // waiting for a request (or the handshake)
  std::uint64_t idle_mark = 0;              // HttpServer::nextIdleMark() when it became idle
  bool reserved_slot = false;               // accepted into the operator reserve
  std::optional<HttpResponse> refusal;      // answered to its first request, then closed
};

template <class Stream>
class HttpSession : public HttpSessionBase, public std::enable_shared_from_this<HttpSession<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, boost::beast::tcp_stream>;

 public:
  template <class... Args>
  HttpSession(HttpServer& server, Args&&... stream_args)
      : stream_(std::forward<Args>(stream_args)...),
        server_(&server),
        alive_(server.alive_),
        body_limit_(server.options_.body_limit),
        idle_timeout_(server.options_.idle_timeout) {}

  ~HttpSession() override {
    if (*alive_) server_->forget(this);
  }

  void start() {
    if constexpr (kTls) {
      markIdle();
      boost::beast::get_lowest_layer(stream_).expires_after(server_->options_.handshake_timeout);
      stream_.async_handshake(boost::asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](boost::beast::error_code ec) {
                                self->onHandshake(ec);
                              });
    } else {
      read();
    }
  }

  void close() override {
    boost::beast::error_code ignored;
    auto& lowest = boost::beast::get_lowest_layer(stream_);
    lowest.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    lowest.close();
  }

 private:
  using error_code = boost::beast::error_code;

  void markIdle() {
    idle = true;
    idle_mark = server_->nextIdleMark();
  }

  void onHandshake(error_code ec) {
    if (ec) {
      if (*alive_ && ec != boost::asio::error::operation_aborted) server_->onHandshakeFailed(peer_address, ec);
      return close();
    }
    read();
  }

  void read() {
    markIdle();
    parser_.emplace();
    parser_->body_limit(body_limit_);
    boost::beast::get_lowest_layer(stream_).expires_after(idle_timeout_);
    boost::beast::http::async_read(stream_, buffer_, *parser_,
                                   [self = this->shared_from_this()](error_code ec, std::size_t) {
                                     self->onRead(ec);
                                   });
  }

  static bool isQuietEnd(const error_code& ec) {
    namespace asio = boost::asio;
    return ec == boost::beast::http::error::end_of_stream || ec == boost::beast::error::timeout ||
           ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
           ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
  }

  void onRead(error_code ec);  // below: the request's way through the server
  void write(HttpResponse response);

  void writeFinal(HttpResponse response) {
    keep_alive_ = false;
    write(std::move(response));
  }

  Stream stream_;
  HttpServer* server_;
  std::shared_ptr<bool> alive_;  // false once the server is destroyed: server_ dangles
  std::size_t body_limit_;
  std::chrono::seconds idle_timeout_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  bool keep_alive_ = false;
  unsigned version_ = 11;
};

template <class Stream>
void HttpSession<Stream>::onRead(error_code ec) {
  namespace http = boost::beast::http;
  idle = false;
  if (isQuietEnd(ec)) return close();
  if (ec == http::error::body_limit) {
    return writeFinal(jsonErrorResponse(http::status::payload_too_large, "body_too_large",
                                        "request body exceeds " + std::to_string(body_limit_) + " bytes"));
  }
  if (ec) {
    return writeFinal(jsonErrorResponse(http::status::bad_request, "bad_http",
                                        "malformed HTTP request: " + ec.message()));
  }
  HttpRequest request = parser_->release();
  keep_alive_ = request.keep_alive();
  version_ = request.version();
  if (!*alive_) {  // the server is gone: nobody to hand the request to
    return writeFinal(jsonErrorResponse(http::status::service_unavailable, "shutting_down",
                                        "the admin API is stopping"));
  }
  if (std::optional<HttpResponse> refused = server_->admit(*this, request)) {
    return writeFinal(std::move(*refused));
  }
  boost::beast::get_lowest_layer(stream_).expires_never();  // a long poll may take its time; the handler bounds it
  // The responder keeps the session alive while the handler works (a long poll, a
  // commit): no socket operation is pending meanwhile. It answers once: a second call
  // (a handler that answered and then threw) is dropped.
  auto answered = std::make_shared<bool>(false);
  Responder respond = [self = this->shared_from_this(), answered](HttpResponse response) {
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

template <class Stream>
void HttpSession<Stream>::write(HttpResponse response) {
  response.version(version_);
  response.keep_alive(keep_alive_);
  response.prepare_payload();
  auto shared = std::make_shared<HttpResponse>(std::move(response));
  boost::beast::get_lowest_layer(stream_).expires_after(idle_timeout_);
  boost::beast::http::async_write(stream_, *shared,
                                  [self = this->shared_from_this(), shared](error_code ec, std::size_t) {
                                    if (ec || !self->keep_alive_) return self->close();
                                    self->read();
                                  });
}

}  // namespace npac::npacd
