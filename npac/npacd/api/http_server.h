// HttpServer: a small HTTP/1.1 server (Boost.Beast) for npacd's local admin API.
//
// Three roles, as in the Beast examples: the listener accepts on one address, each
// connection is a session that owns its socket and reads one request at a time, and the
// handler (AdminApi) turns a request into a response. A handler may answer later (a long
// poll, a submission waiting for its commit): it is given a Responder to call exactly once.
// The session keeps the connection open between requests when the client asks for
// keep-alive (HTTP/1.1 default) and closes it otherwise.
//
// Limits: a request body over Options::body_limit is answered 413 and the connection is
// closed; a request line or headers Beast cannot parse get 400 and a close; a connection
// idle for Options::idle_timeout between requests is closed. At most
// Options::max_connections sessions run at once; beyond it new connections are closed at
// accept. Every error answer is the API's JSON error body. A handler that throws is
// answered 500 "internal" (unless it already answered) and logged once with its route;
// the exception never leaves the session, so the server stays up.
//
// Threading: everything runs on the io_context given to start() (one thread is expected
// to run it). A Responder must be called on that thread (AdminApi posts completions from
// other threads there first). stop() must also be called on that thread, or after the
// io_context stopped; it closes the acceptor and every open session.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http.hpp>

#include "db/status.h"

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

class HttpSession;

class HttpServer {
 public:
  struct Options {
    std::string address = "127.0.0.1";
    std::uint16_t port = 10180;  // 0 = an ephemeral port (tests): see port()
    std::size_t body_limit = 1024 * 1024;
    std::chrono::seconds idle_timeout{60};
    std::size_t max_connections = 256;
  };

  // Binds and listens; a bad address or a port in use is an error value, nothing thrown.
  static db::Result<std::unique_ptr<HttpServer>> start(boost::asio::io_context& io,
                                                       Options options, HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  std::uint16_t port() const { return port_; }  // the bound port
  void stop();

 private:
  friend class HttpSession;
  HttpServer(boost::asio::io_context& io, Options options, HttpHandler handler);
  void accept();
  void forget(HttpSession* session);

  boost::asio::io_context& io_;
  Options options_;
  HttpHandler handler_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  bool stopped_ = false;
  std::unordered_set<HttpSession*> sessions_;  // live sessions, for stop()
  std::shared_ptr<bool> alive_;                // sessions check it before forget()
};

}  // namespace npac::npacd
