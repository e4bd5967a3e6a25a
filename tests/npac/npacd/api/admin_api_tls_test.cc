// The admin API over TLS: a real HttpServer with a certificate the test makes, real
// OpenSSL clients on loopback. The handshake and a request succeed; TLS 1.1, plain HTTP,
// garbage and a truncated ClientHello are refused at the handshake, counted, logged in
// one line a minute, and the server keeps serving. loadServerTlsContext refuses bad files
// naming the file and the reason.
#include <fstream>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "tests/npac/npacd/api/http_server_fixture.h"

namespace npac::npacd {
namespace {

using namespace testing;

HttpServer::Options tlsOptions(const TestCertificate& certificate) {
  HttpServer::Options options;
  options.tls = certificate.serverContext();
  return options;
}

// The default logger's lines while it lives, for counting what a test made npacd log.
class CapturedLog {
 public:
  CapturedLog()
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)), previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink_));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  std::size_t count(const std::string& text) const {
    std::size_t n = 0;
    for (const std::string& line : sink_->last_formatted()) n += line.find(text) != std::string::npos;
    return n;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace

TEST_CASE("An HTTPS request to the admin API's TLS port completes its handshake and is answered") {
  TestCertificate certificate;
  TestServer server(tlsOptions(certificate));
  TlsOutcome outcome = httpsGet(server.port(), "/v1/providers", certificate.cert);
  INFO(outcome.failure);
  REQUIRE(outcome.reply);
  CHECK(outcome.reply->status == 200);
  CHECK(outcome.reply->body["target"] == "/v1/providers");
  CHECK(server.counters().tls_handshake_failures == 0);
}

TEST_CASE("A client offering only TLS 1.1 is refused at the handshake") {
  TestCertificate certificate;
  TestServer server(tlsOptions(certificate));
  TlsOutcome old = httpsGet(server.port(), "/", certificate.cert, TLS1_1_VERSION);
  CHECK_FALSE(old.reply);
  CHECK(old.failure.rfind("handshake:", 0) == 0);
  CHECK(server.waitFor([](const HttpServerCounters& c) { return c.tls_handshake_failures == 1; }));
  TlsOutcome current = httpsGet(server.port(), "/", certificate.cert);  // TLS 1.2+ still served
  CHECK(current.reply);
}

TEST_CASE("A plain HTTP request on the TLS port is closed without an HTTP answer and HTTPS keeps working") {
  TestCertificate certificate;
  TestServer server(tlsOptions(certificate));
  std::optional<std::string> answer = sendRaw(server.port(), "GET /v1/providers HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  REQUIRE(answer);  // closed, not left hanging
  CHECK(answer->find("HTTP/1.1") == std::string::npos);
  CHECK(server.waitFor([](const HttpServerCounters& c) { return c.tls_handshake_failures == 1; }));
  TlsOutcome after = httpsGet(server.port(), "/after", certificate.cert);
  REQUIRE(after.reply);
  CHECK(after.reply->status == 200);
}

TEST_CASE("Garbage bytes on the TLS port are closed without an answer and counted") {
  TestCertificate certificate;
  TestServer server(tlsOptions(certificate));
  std::string garbage;
  for (int i = 0; i < 2048; ++i) garbage.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  std::optional<std::string> answer = sendRaw(server.port(), garbage);
  REQUIRE(answer);
  CHECK(answer->find("HTTP/") == std::string::npos);
  CHECK(server.waitFor([](const HttpServerCounters& c) { return c.tls_handshake_failures == 1; }));
  CHECK(httpsGet(server.port(), "/", certificate.cert).reply);
}

TEST_CASE("A truncated ClientHello is closed when the handshake timeout passes") {
  TestCertificate certificate;
  HttpServer::Options options = tlsOptions(certificate);
  options.handshake_timeout = std::chrono::milliseconds(200);
  TestServer server(options);
  // A TLS record header announcing a 512-byte handshake message, then its first bytes only
  // (RFC 8446 §5.1: type 22, legacy version 3.1, length; §4.1.2 ClientHello type 1).
  const std::string truncated("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\x00\x01\x02\x03", 15);
  const auto started = std::chrono::steady_clock::now();
  std::optional<std::string> answer = sendRaw(server.port(), truncated);
  REQUIRE(answer);  // sendRaw gives up after 5 s: the server closed it well before
  CHECK(std::chrono::steady_clock::now() - started < 4s);
  CHECK(server.waitFor([](const HttpServerCounters& c) { return c.tls_handshake_failures == 1; }));
}

TEST_CASE("Twenty failed TLS handshakes in a minute are logged in one line") {
  TestCertificate certificate;
  CapturedLog log;
  TestServer server(tlsOptions(certificate));
  for (int i = 0; i < 20; ++i) REQUIRE(sendRaw(server.port(), "GET / HTTP/1.0\r\n\r\n"));
  CHECK(server.waitFor([](const HttpServerCounters& c) { return c.tls_handshake_failures == 20; }));
  CHECK(log.count("TLS handshake with 127.0.0.1 failed") == 1);
}

TEST_CASE("A missing certificate file is refused naming the file and the reason") {
  TestCertificate certificate;
  const std::string missing = (certificate.dir / "none.pem").string();
  auto loaded = loadServerTlsContext(missing, certificate.key.string());
  REQUIRE_FALSE(loaded.isOk());
  CHECK(loaded.status().message() == "--api-cert " + missing + ": No such file or directory");
}

TEST_CASE("A key path that cannot be read is refused naming the file and the reason") {
  TestCertificate certificate;
  // A directory: unreadable as a file even for root (a chmod 000 file is not, for root).
  const std::string directory = certificate.dir.string();
  auto loaded = loadServerTlsContext(certificate.cert.string(), directory);
  REQUIRE_FALSE(loaded.isOk());
  CHECK(loaded.status().message() == "--api-key " + directory + ": Is a directory");
}

TEST_CASE("A certificate file that is not PEM is refused as not a certificate") {
  TestCertificate certificate;
  const fs::path text = certificate.dir / "text.pem";
  std::ofstream(text) << "not a certificate\n";
  auto loaded = loadServerTlsContext(text.string(), certificate.key.string());
  REQUIRE_FALSE(loaded.isOk());
  CHECK(loaded.status().message().rfind("--api-cert " + text.string() + ": not a PEM certificate", 0) == 0);
}

TEST_CASE("A key that does not match the certificate is refused naming both files") {
  TestCertificate certificate;
  auto loaded = loadServerTlsContext(certificate.cert.string(), certificate.other_key.string());
  REQUIRE_FALSE(loaded.isOk());
  CHECK(loaded.status().message().rfind("--api-key " + certificate.other_key.string() +
                                            ": does not match the certificate in " + certificate.cert.string(),
                                        0) == 0);
}

}  // namespace npac::npacd
