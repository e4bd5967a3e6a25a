// The admin API's HTTP server survives a handler that throws: the request is answered 500
// "internal" once (or keeps the answer the handler already gave), and the same server
// keeps answering. Real HttpServer on loopback, real TCP clients.
#include <catch2/catch.hpp>

#include <future>
#include <stdexcept>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "npac/npacd/api/http_server.h"

namespace npac::npacd {
namespace {

namespace http = boost::beast::http;

HttpResponse ok() {
  HttpResponse response{http::status::ok, 11};
  response.body() = "{}";
  return response;
}

// /throw throws before answering, /answer-then-throw answers and then throws, anything
// else is answered 200.
void throwingHandler(HttpRequest&& request, Responder respond) {
  if (request.target() == "/throw") throw std::runtime_error("route bug");
  if (request.target() == "/answer-then-throw") {
    respond(ok());
    throw std::logic_error("late bug");
  }
  respond(ok());
}

struct Server {
  boost::asio::io_context io;
  std::unique_ptr<HttpServer> server;
  std::thread thread;
  Server() {
    HttpServer::Options options;
    options.port = 0;
    auto started = HttpServer::start(io, options, throwingHandler);
    REQUIRE(started.isOk());
    server = std::move(started).value();
    thread = std::thread([this] { io.run(); });
  }
  ~Server() {
    std::promise<void> stopped;
    boost::asio::post(io, [&] {
      server->stop();
      server.reset();
      stopped.set_value();
    });
    stopped.get_future().wait();
    thread.join();  // nothing is left to run once the server and its sessions are gone
  }
  // One request on its own connection: the status and body.
  std::pair<int, std::string> get(const std::string& target) {
    boost::asio::io_context client;
    boost::beast::tcp_stream stream(client);
    stream.expires_after(std::chrono::seconds(10));
    stream.connect({boost::asio::ip::make_address("127.0.0.1"), server->port()});
    http::request<http::string_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "127.0.0.1");
    http::write(stream, request);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    return {static_cast<int>(response.result_int()), response.body()};
  }
};

}  // namespace

TEST_CASE("A handler that throws is answered 500 internal and the server keeps answering") {
  Server s;
  auto [status, body] = s.get("/throw");
  CHECK(status == 500);
  nlohmann::json error = nlohmann::json::parse(body, nullptr, false);
  REQUIRE(error.is_object());
  CHECK(error["error"]["code"] == "internal");
  CHECK(s.get("/fine").first == 200);
}

TEST_CASE("A handler that answered and then threw keeps its answer and the server keeps answering") {
  Server s;
  CHECK(s.get("/answer-then-throw").first == 200);
  CHECK(s.get("/fine").first == 200);
}

TEST_CASE("An error message with bytes that are not UTF-8 is sent with them replaced") {
  HttpResponse response = jsonErrorResponse(http::status::bad_request, "x", std::string("bad \xff byte"));
  nlohmann::json body = nlohmann::json::parse(response.body(), nullptr, false);
  REQUIRE(body.is_object());
  CHECK(body["error"]["message"] == "bad \xEF\xBF\xBD byte");
}

TEST_CASE("Bytes outside printable ASCII are echoed as hex escapes") {
  CHECK(printableAscii(std::string("a\xff\n/b")) == "a\\xff\\x0a/b");
}

}  // namespace npac::npacd
