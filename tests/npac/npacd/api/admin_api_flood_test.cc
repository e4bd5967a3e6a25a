// The admin API under a connection flood from the operator's own address (issue 24 item
// 1; docs/API.md "Connection limits", connection_limits.h): connections that presented
// no credential — idle, slowloris headers, stalled TLS handshakes — and a lower role's
// connections never cost a connection that presented a credential, nor an operator's.
// Real HttpServer on loopback; every flood comes from 127.0.0.2, the operator's address.
#include "tests/npac/npacd/api/http_server_fixture.h"

namespace npac::npacd {
namespace {

using namespace testing;

const std::string kOperatorAddress = "127.0.0.2";

// "Bearer operator" is the operator, "Bearer app..." an application, any other
// Authorization a reader, none anonymous.
RequestPriority byRole(const HttpRequest& request) {
  auto header = request.find(http::field::authorization);
  if (header == request.end()) return RequestPriority::kAnonymous;
  const std::string value(header->value());
  if (value == "Bearer operator") return RequestPriority::kOperator;
  if (value.rfind("Bearer app", 0) == 0) return RequestPriority::kApplication;
  return RequestPriority::kReader;
}

HttpServer::Options classified(std::size_t max_per_client) {
  HttpServer::Options options;
  options.max_per_client = max_per_client;
  options.classify = byRole;
  return options;
}

int status(const std::optional<TestReply>& reply) { return reply ? reply->status : 0; }

// `n` connections from `from` that send `bytes` (nothing: idle) and never finish a request.
std::vector<std::unique_ptr<Connection>> flood(const TestServer& server, int n, const std::string& bytes = "",
                                               const std::string& from = kOperatorAddress) {
  const std::uint64_t accepted = server.counters().accepted + static_cast<std::uint64_t>(n);
  std::vector<std::unique_ptr<Connection>> held;
  for (int i = 0; i < n; ++i) {
    held.push_back(std::make_unique<Connection>(from, server.port()));
    if (!bytes.empty()) held.back()->sendBytes(bytes);
  }
  REQUIRE(server.waitFor([&](const HttpServerCounters& c) { return c.accepted >= accepted; }));
  return held;
}

}  // namespace

TEST_CASE("Idle connections without a token from the operator's address do not stop the operator") {
  TestServer server(classified(4));
  auto idle = flood(server, 40);
  Connection operator_connection(kOperatorAddress, server.port());
  CHECK(status(operator_connection.get("/v1/providers", "Bearer operator")) == 200);
  Connection reader(kOperatorAddress, server.port());
  CHECK(status(reader.get("/v1/providers", "Bearer dash")) == 200);
}

TEST_CASE("Unfinished request headers from the operator's address do not stop the operator") {
  TestServer server(classified(4));
  auto slowloris = flood(server, 40, "GET /v1/providers HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
  Connection operator_connection(kOperatorAddress, server.port());
  CHECK(status(operator_connection.get("/v1/providers", "Bearer operator")) == 200);
}

TEST_CASE("Stalled TLS handshakes from a client's address do not stop an HTTPS request from it") {
  TestCertificate certificate;
  HttpServer::Options options;
  options.max_per_client = 4;
  options.tls = certificate.serverContext();
  TestServer server(options);
  auto stalled = flood(server, 40, "", "127.0.0.1");  // TCP connected, no ClientHello
  TlsOutcome outcome = httpsGet(server.port(), "/v1/providers", certificate.cert);
  INFO(outcome.failure);
  REQUIRE(outcome.reply);
  CHECK(outcome.reply->status == 200);
}

TEST_CASE("A reader's connections from the operator's address count against readers only") {
  TestServer server(classified(2));
  Connection first(kOperatorAddress, server.port()), second(kOperatorAddress, server.port());
  REQUIRE(status(first.get("/", "Bearer dash")) == 200);
  REQUIRE(status(second.get("/", "Bearer dash")) == 200);
  Connection third(kOperatorAddress, server.port());
  std::optional<TestReply> refused = third.get("/", "Bearer dash");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->errorCode() == "too_many_connections_per_client");
  Connection application(kOperatorAddress, server.port());
  CHECK(status(application.get("/", "Bearer app")) == 200);
  Connection operator_connection(kOperatorAddress, server.port());
  CHECK(status(operator_connection.get("/", "Bearer operator")) == 200);
}

TEST_CASE("A new anonymous connection closes the oldest anonymous one of its address past the per-client limit") {
  TestServer server(classified(3));
  auto idle = flood(server, 3);
  Connection newest(kOperatorAddress, server.port());
  CHECK(idle[0]->closedByServer(5s));
  CHECK(server.counters().closed_anonymous_for_room == 1);
  CHECK(status(idle[1]->get("/health")) == 200);
  CHECK(status(newest.get("/health")) == 200);
}

TEST_CASE("A new anonymous connection closes the oldest anonymous one when max_anonymous are open") {
  HttpServer::Options options = classified(32);
  options.max_anonymous = 3;
  TestServer server(options);
  std::vector<std::unique_ptr<Connection>> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(std::make_unique<Connection>("127.0.0." + std::to_string(10 + i), server.port()));
  REQUIRE(server.waitFor([](const HttpServerCounters& c) { return c.anonymous == 3; }));
  Connection newest("127.0.0.20", server.port());
  CHECK(idle[0]->closedByServer(5s));
  CHECK(server.counters().closed_anonymous_for_room == 1);
  CHECK(server.counters().anonymous == 3);
  CHECK(status(idle[2]->get("/health")) == 200);
}

TEST_CASE("A new connection does not close an idle connection that presented a token before it presents one") {
  HttpServer::Options options = classified(32);
  options.max_connections = 2;
  options.operator_reserve = 0;
  TestServer server(options);
  Connection a("127.0.0.10", server.port()), b("127.0.0.11", server.port());
  REQUIRE(status(a.get("/", "Bearer dash-a")) == 200);
  REQUIRE(status(b.get("/", "Bearer dash-b")) == 200);
  auto newcomers = flood(server, 5, "", "127.0.0.12");
  CHECK(status(a.get("/", "Bearer dash-a")) == 200);
  CHECK(status(b.get("/", "Bearer dash-b")) == 200);
  CHECK(server.counters().closed_idle_for_room == 0);
  // Presenting a token, a newcomer takes the place of the longest-idle one.
  CHECK(status(newcomers[0]->get("/", "Bearer dash-c")) == 200);
  CHECK(server.counters().closed_idle_for_room == 1);
  CHECK_FALSE(a.get("/", "Bearer dash-a"));
}

TEST_CASE("An operator's idle connection is not closed to make room") {
  HttpServer::Options options = classified(32);
  options.max_connections = 3;
  options.operator_reserve = 1;
  TestServer server(options);
  // Full: an operator (idle the longest), a reader and an application.
  Connection operator_connection("127.0.0.10", server.port()), reader("127.0.0.11", server.port()),
      application("127.0.0.13", server.port());
  REQUIRE(status(operator_connection.get("/", "Bearer operator")) == 200);
  REQUIRE(status(reader.get("/", "Bearer dash")) == 200);
  REQUIRE(status(application.get("/", "Bearer app")) == 200);
  Connection newcomer("127.0.0.12", server.port());
  CHECK(status(newcomer.get("/", "Bearer dash-2")) == 200);
  CHECK_FALSE(reader.get("/", "Bearer dash"));  // the reader's was closed for it
  CHECK(status(operator_connection.get("/", "Bearer operator")) == 200);
}

TEST_CASE("A request without a token is answered while every connection for credentials is busy") {
  HttpServer::Options options = classified(32);
  options.max_connections = 1;
  options.operator_reserve = 0;
  TestServer server(options);
  Connection busy("127.0.0.10", server.port());
  busy.send("/hold", "Bearer app");
  REQUIRE(server.waitForHeld(1));
  Connection probe("127.0.0.11", server.port());
  CHECK(status(probe.get("/health")) == 200);
}

TEST_CASE("An anonymous connection that does not finish its request header within header_timeout is closed and counted") {
  HttpServer::Options options = classified(32);
  options.header_timeout = 300ms;
  TestServer server(options);
  Connection slow(kOperatorAddress, server.port());
  slow.sendBytes("GET / HTTP/1.1\r\nHost: x\r\n");
  CHECK(slow.closedByServer(5s));
  CHECK(server.waitFor([](const HttpServerCounters& c) { return c.closed_header_timeout == 1; }));
}

TEST_CASE("A connection that presented a token waits idle_timeout, not header_timeout, for its next request") {
  HttpServer::Options options = classified(32);
  options.header_timeout = 200ms;
  TestServer server(options);
  Connection reader(kOperatorAddress, server.port());
  REQUIRE(status(reader.get("/", "Bearer dash")) == 200);
  CHECK_FALSE(reader.closedByServer(1s));  // five header timeouts later, still open
  CHECK(status(reader.get("/", "Bearer dash")) == 200);
}

}  // namespace npac::npacd
