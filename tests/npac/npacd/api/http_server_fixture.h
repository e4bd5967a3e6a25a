// Fixtures for the admin API's transport tests: a self-signed certificate made by the
// `openssl` CLI in a fresh temporary directory (a P-256 key, SAN IP:127.0.0.1), a real
// HttpServer on an ephemeral loopback port with its io_context on a background thread,
// and blocking clients over real TCP — plain keep-alive connections from a chosen
// 127.0.0.0/8 source address (each address is another client) and HTTPS requests that
// verify the server against a CA file.
//
// The test handler answers 200 {"target": ...} at once, except "/hold", which it keeps
// unanswered (a long poll) until the fixture is destroyed.
#pragma once

#include <unistd.h>

#include <array>
#include <atomic>
#include <functional>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <openssl/ssl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "npac/npacd/api/http_server.h"
#include "npac/npacd/api/tls_context.h"
#include "tests/support/eventually.h"

namespace npac::npacd::testing {

namespace fs = std::filesystem;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using namespace std::chrono_literals;

// cert.pem (self-signed, SAN IP:127.0.0.1) with key.pem, and other-key.pem that matches
// nothing, in a temporary directory removed at destruction.
struct TestCertificate {
  fs::path dir, cert, key, other_key;
  TestCertificate() {
    std::string pattern = (fs::temp_directory_path() / "npac-tls-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    cert = dir / "cert.pem";
    key = dir / "key.pem";
    other_key = dir / "other-key.pem";
    const std::string made =
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=npacd-test"
        " -addext subjectAltName=IP:127.0.0.1 -keyout " + key.string() + " -out " + cert.string() +
        " >/dev/null 2>&1 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " +
        other_key.string() + " >/dev/null 2>&1";
    REQUIRE(std::system(made.c_str()) == 0);
  }
  ~TestCertificate() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  TestCertificate(const TestCertificate&) = delete;
  TestCertificate& operator=(const TestCertificate&) = delete;

  std::shared_ptr<ssl::context> serverContext() const {
    auto loaded = loadServerTlsContext(cert.string(), key.string());
    INFO(loaded.status().toString());
    REQUIRE(loaded.isOk());
    return loaded.value();
  }
};

class TestServer {
 public:
  explicit TestServer(HttpServer::Options options) {
    options.address = "127.0.0.1";
    options.port = 0;
    auto started = HttpServer::start(io_, std::move(options), [this](HttpRequest&& request, Responder respond) {
      if (request.target() == "/hold") {
        held_.push_back(std::move(respond));
        ++held_count_;
        return;
      }
      HttpResponse response{http::status::ok, 11};
      response.set(http::field::content_type, "application/json");
      response.body() = nlohmann::json{{"target", std::string(request.target())}}.dump();
      respond(std::move(response));
    });
    INFO(started.status().toString());
    REQUIRE(started.isOk());
    server_ = std::move(started).value();
    port_ = server_->port();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TestServer() {
    std::promise<void> stopped;
    boost::asio::post(io_, [&] {
      for (Responder& respond : held_) respond(HttpResponse{http::status::ok, 11});
      held_.clear();
      server_->stop();
      server_.reset();
      stopped.set_value();
    });
    stopped.get_future().wait();
    thread_.join();
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  std::uint16_t port() const { return port_; }
  HttpServerCounters counters() const { return server_->counters(); }
  // Polls counters() until `done` holds, for at most 5 s; whether it did.
  template <class Predicate>
  bool waitFor(Predicate done) const {
    return ::npac::testing::eventually([&] { return done(counters()); }, 5s, 5ms);
  }
  // Waits (at most 5 s) until `n` "/hold" requests are in the handler, unanswered.
  bool waitForHeld(int n) const {
    return ::npac::testing::eventually([&] { return held_count_.load() >= n; }, 5s, 5ms);
  }

 private:
  boost::asio::io_context io_;
  std::unique_ptr<HttpServer> server_;
  std::vector<Responder> held_;  // API thread only
  std::atomic<int> held_count_{0};
  std::uint16_t port_ = 0;
  std::thread thread_;
};

struct TestReply {
  int status = 0;
  nlohmann::json body;
  std::string errorCode() const {
    return body.is_object() && body.contains("error") ? body["error"].value("code", "") : "";
  }
};

// Whether a reply came and was 200 OK.
inline bool answered200(const std::optional<TestReply>& reply) { return reply && reply->status == 200; }

// One keep-alive client connection from `from` (a 127.0.0.0/8 address); `receive_buffer`
// > 0 sets its SO_RCVBUF before connecting (a small one: a client that reads nothing
// closes its window at once instead of letting the kernel hold megabytes).
class Connection {
 public:
  Connection(const std::string& from, std::uint16_t port, int receive_buffer = 0) {
    stream_.socket().open(tcp::v4());
    if (receive_buffer > 0) stream_.socket().set_option(boost::asio::socket_base::receive_buffer_size(receive_buffer));
    stream_.socket().bind({boost::asio::ip::make_address(from), 0});
    stream_.expires_after(5s);
    stream_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }
  // Sends a request; the answer, or nullopt when the server closed the connection instead.
  std::optional<TestReply> get(const std::string& target, const std::string& authorization = "") {
    send(target, authorization);
    return receive();
  }
  void send(const std::string& target, const std::string& authorization = "") {
    http::request<http::string_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "127.0.0.1");
    if (!authorization.empty()) request.set(http::field::authorization, authorization);
    beast::error_code ec;
    stream_.expires_after(5s);
    http::write(stream_, request, ec);
  }
  // Writes `bytes` as they are (a partial header, say).
  void sendBytes(const std::string& bytes) {
    beast::error_code ec;
    stream_.expires_after(5s);
    boost::asio::write(stream_, boost::asio::buffer(bytes), ec);
  }
  // Whether the server closes this connection within `within` (it reads and drops
  // anything the server sends meanwhile).
  bool closedByServer(std::chrono::milliseconds within) {
    // Asynchronous reads on this connection's own io_context, run for `within` at most
    // (a synchronous read would ignore the stream's expiry); the socket stays open.
    bool closed = false, pending = false;
    std::function<void()> readOn = [&] {
      pending = true;
      stream_.socket().async_read_some(boost::asio::buffer(drained_), [&](beast::error_code ec, std::size_t) {
        pending = false;
        if (ec) {
          closed = ec != boost::asio::error::operation_aborted;
          return;
        }
        readOn();
      });
    };
    readOn();
    io_.restart();
    io_.run_for(within);
    if (pending) {
      stream_.socket().cancel();
      io_.restart();
      io_.run();
    }
    return closed;
  }
  std::optional<TestReply> receive() {
    beast::error_code ec;
    http::response<http::string_body> response;
    stream_.expires_after(5s);
    http::read(stream_, buffer_, response, ec);
    if (ec) return std::nullopt;
    return TestReply{static_cast<int>(response.result_int()), nlohmann::json::parse(response.body(), nullptr, false)};
  }

 private:
  boost::asio::io_context io_;
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
  std::array<char, 4096> drained_{};
};

// One HTTPS GET verifying the server's certificate against `ca_file` and 127.0.0.1;
// `max_version` 0 = any. The answer, or the failure's text.
struct TlsOutcome {
  std::optional<TestReply> reply;
  std::string failure;
};
inline TlsOutcome httpsGet(std::uint16_t port, const std::string& target, const fs::path& ca_file,
                           int max_version = 0) {
  TlsOutcome outcome;
  boost::asio::io_context io;
  ssl::context context(ssl::context::tls_client);
  context.set_verify_mode(ssl::verify_peer);
  context.load_verify_file(ca_file.string());
  if (max_version != 0) {
    SSL_CTX_set_min_proto_version(context.native_handle(), 0);
    SSL_CTX_set_max_proto_version(context.native_handle(), max_version);
    SSL_CTX_set_security_level(context.native_handle(), 0);  // let the client offer TLS 1.1 at all
  }
  beast::ssl_stream<beast::tcp_stream> stream(io, context);
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(stream.native_handle()), "127.0.0.1");
  beast::error_code ec;
  beast::get_lowest_layer(stream).expires_after(5s);
  beast::get_lowest_layer(stream).connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  if (!ec) stream.handshake(ssl::stream_base::client, ec);
  if (ec) {
    outcome.failure = "handshake: " + ec.message();
    return outcome;
  }
  http::request<http::string_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  http::write(stream, request, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  if (!ec) http::read(stream, buffer, response, ec);
  if (ec) {
    outcome.failure = "exchange: " + ec.message();
    return outcome;
  }
  outcome.reply = TestReply{static_cast<int>(response.result_int()), nlohmann::json::parse(response.body(), nullptr, false)};
  return outcome;
}

// Writes `bytes` on a fresh plain connection and reads until the server closes it (at most
// 5 s): what came back.
inline std::optional<std::string> sendRaw(std::uint16_t port, const std::string& bytes) {
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(5s);
  beast::error_code ec;
  stream.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  if (ec) return std::nullopt;
  boost::asio::write(stream, boost::asio::buffer(bytes), ec);
  std::string received;
  char chunk[4096];
  for (;;) {
    std::size_t n = stream.read_some(boost::asio::buffer(chunk), ec);
    received.append(chunk, n);
    if (ec) break;
  }
  if (ec == beast::error::timeout) return std::nullopt;  // still open after 5 s
  return received;
}

}  // namespace npac::npacd::testing
