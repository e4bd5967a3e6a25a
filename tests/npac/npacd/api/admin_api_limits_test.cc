// The admin API's connection limits (HttpServer::Options, docs/API.md "Connection
// limits"): per client address, per credential, the longest-idle session closed for a
// new one, and the operator reserve. Real HttpServer on loopback; each client is its own
// 127.0.0.0/8 source address. classifyByToken against a real TokenStore.
#include "tests/npac/npacd/api/http_server_fixture.h"

#include "db/database.h"
#include "db/token_store.h"
#include "npac/npacd/api/connection_priority.h"

namespace npac::npacd {
namespace {

std::string loopbackAddress(int n) { return "127.0.0." + std::to_string(n); }

using namespace testing;

// "Bearer operator" is the operator; any other Authorization a reader; none anonymous.
RequestPriority byHeader(const HttpRequest& request) {
  auto header = request.find(http::field::authorization);
  if (header == request.end()) return RequestPriority::kAnonymous;
  return header->value() == "Bearer operator" ? RequestPriority::kOperator : RequestPriority::kReader;
}

}  // namespace

TEST_CASE("One client holding every connection it can open does not stop another client") {
  HttpServer::Options options;
  options.max_connections = 16;
  options.max_per_client = 4;
  TestServer server(options);
  // Client 2 tries to hold all 16 slots with idle keep-alive connections.
  std::vector<std::unique_ptr<Connection>> held;
  int served = 0;
  for (int i = 0; i < 16; ++i) {
    held.push_back(std::make_unique<Connection>(loopbackAddress(2), server.port()));
    served += answered200(held.back()->get("/v1/providers"));
  }
  CHECK(served == 4);
  Connection other(loopbackAddress(3), server.port());
  CHECK(answered200(other.get("/v1/providers")));
}

TEST_CASE("A client past its connection limit is answered 503 too_many_connections_per_client") {
  HttpServer::Options options;
  options.max_per_client = 2;
  TestServer server(options);
  Connection first(loopbackAddress(2), server.port()), second(loopbackAddress(2), server.port());
  CHECK(answered200(first.get("/")));
  CHECK(answered200(second.get("/")));
  // Connected only now: accepted while the first two were still anonymous (no request
  // read yet), it would take the place of the oldest of them instead (the anonymous pool,
  // connection_limits.h) — a race the test must not run.
  Connection third(loopbackAddress(2), server.port());
  std::optional<TestReply> refused = third.get("/");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->errorCode() == "too_many_connections_per_client");
  CHECK_FALSE(third.get("/"));  // closed after the answer
  CHECK(server.counters().refused_per_client == 1);
  CHECK(answered200(first.get("/")));  // the client's admitted connections carry on
}

TEST_CASE("One token past its connection limit is answered 503 too_many_connections_per_credential") {
  HttpServer::Options options;
  options.max_per_credential = 2;
  TestServer server(options);
  Connection a(loopbackAddress(2), server.port()), b(loopbackAddress(3), server.port()), c(loopbackAddress(4), server.port());
  CHECK(answered200(a.get("/", "Bearer shared")));
  CHECK(answered200(b.get("/", "Bearer shared")));
  std::optional<TestReply> refused = c.get("/", "Bearer shared");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->errorCode() == "too_many_connections_per_credential");
  CHECK(server.counters().refused_per_credential == 1);
  Connection d(loopbackAddress(5), server.port());
  CHECK(answered200(d.get("/", "Bearer another")));
}

TEST_CASE("A connection that changes its token moves its count to the new token") {
  HttpServer::Options options;
  options.max_per_credential = 1;
  TestServer server(options);
  Connection a(loopbackAddress(2), server.port()), b(loopbackAddress(3), server.port());
  CHECK(answered200(a.get("/", "Bearer first")));
  CHECK(answered200(a.get("/", "Bearer second")));  // a no longer holds "first"
  CHECK(answered200(b.get("/", "Bearer first")));
}

TEST_CASE("When the server is full a new connection closes the longest-idle keep-alive connection") {
  HttpServer::Options options;
  options.max_connections = 4;
  TestServer server(options);
  std::vector<std::unique_ptr<Connection>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<Connection>(loopbackAddress(2 + i), server.port()));
    REQUIRE(answered200(idle.back()->get("/")));
  }
  Connection newcomer(loopbackAddress(9), server.port());
  CHECK(answered200(newcomer.get("/")));
  CHECK(server.counters().closed_idle_for_room == 1);
  CHECK_FALSE(idle[0]->get("/"));  // the first one served, idle the longest, was closed
}

TEST_CASE("A full server with no idle connection answers a new connection's request 503 too_many_connections") {
  HttpServer::Options options;
  options.max_connections = 2;
  TestServer server(options);
  Connection a(loopbackAddress(2), server.port()), b(loopbackAddress(3), server.port());
  a.send("/hold");
  b.send("/hold");
  REQUIRE(server.waitForHeld(2));  // both in their handlers: neither is idle
  Connection c(loopbackAddress(5), server.port());
  std::optional<TestReply> refused = c.get("/");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->errorCode() == "too_many_connections");
  CHECK_FALSE(c.get("/"));  // closed after the answer
  CHECK(server.counters().refused_max_connections == 1);
}

TEST_CASE("An operator gets a reserved connection when every other client is refused") {
  HttpServer::Options options;
  options.max_connections = 4;
  options.operator_reserve = 1;
  options.classify = byHeader;
  TestServer server(options);
  std::vector<std::unique_ptr<Connection>> busy;
  for (int i = 0; i < 3; ++i) {
    busy.push_back(std::make_unique<Connection>(loopbackAddress(2 + i), server.port()));
    busy.back()->send("/hold", "Bearer app" + std::to_string(i));  // a long poll each: none idle
  }
  REQUIRE(server.waitForHeld(3));  // three sessions busy in their handlers: the fourth slot is the operator's
  Connection normal(loopbackAddress(10), server.port());
  std::optional<TestReply> refused = normal.get("/", "Bearer app9");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->errorCode() == "operator_reserve");
  REQUIRE(server.waitFor([](const HttpServerCounters& c) { return c.sessions == 3; }));
  Connection operator_connection(loopbackAddress(20), server.port());
  std::optional<TestReply> admitted = operator_connection.get("/v1/tokens", "Bearer operator");
  REQUIRE(admitted);
  CHECK(admitted->status == 200);
  // The last slot stays the operators': anyone else is still refused.
  Connection late(loopbackAddress(11), server.port());
  CHECK_FALSE(answered200(late.get("/", "Bearer app9")));
  CHECK(server.counters().refused_operator_reserve >= 1);
}

TEST_CASE("Without a classifier no connection slot is reserved") {
  HttpServer::Options options;
  options.max_connections = 2;
  options.operator_reserve = 1;
  TestServer server(options);
  Connection a(loopbackAddress(2), server.port()), b(loopbackAddress(3), server.port());
  a.send("/hold");
  CHECK(answered200(b.get("/")));
  CHECK(server.counters().refused_operator_reserve == 0);
}

TEST_CASE("classifyByToken calls a request its valid token's role and every other request anonymous") {
  std::string pattern = (fs::temp_directory_path() / "npac-classify-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  {
    auto opened = db::Database::open(pattern + "/npacd.db");
    REQUIRE(opened.isOk());
    db::Database& db = *opened.value();
    db::TokenStore store(db);
    auto op = store.create("ops", db::TokenRole::kOperator, "test", 1);
    auto app = store.create("app", db::TokenRole::kApplication, "test", 1);
    auto reader = store.create("dash", db::TokenRole::kReader, "test", 1);
    auto revoked = store.create("gone", db::TokenRole::kOperator, "test", 1);
    REQUIRE(op.isOk());
    REQUIRE(app.isOk());
    REQUIRE(reader.isOk());
    REQUIRE(revoked.isOk());
    REQUIRE(store.revoke("gone", 2).isOk());
    auto with = [](const std::string& authorization) {
      HttpRequest request{http::verb::get, "/", 11};
      if (!authorization.empty()) request.set(http::field::authorization, authorization);
      return request;
    };
    CHECK(classifyByToken(db, with("Bearer " + op.value().secret)) == RequestPriority::kOperator);
    CHECK(classifyByToken(db, with("Bearer " + app.value().secret)) == RequestPriority::kApplication);
    CHECK(classifyByToken(db, with("Bearer " + reader.value().secret)) == RequestPriority::kReader);
    CHECK(classifyByToken(db, with("Bearer " + revoked.value().secret)) == RequestPriority::kAnonymous);
    CHECK(classifyByToken(db, with("Bearer npac_nonsense")) == RequestPriority::kAnonymous);
    CHECK(classifyByToken(db, with("")) == RequestPriority::kAnonymous);
  }
  std::error_code ec;
  fs::remove_all(pattern, ec);
}

}  // namespace npac::npacd

namespace npac::npacd {

TEST_CASE("A request whose headers exceed 8 KiB is answered 431 headers_too_large") {
  testing::TestServer server(HttpServer::Options{});
  testing::Connection connection("127.0.0.2", server.port());
  const std::optional<testing::TestReply> reply =
      connection.get("/v1/providers", "Bearer npac_" + std::string(10 * 1024, 'a'));
  REQUIRE(reply.has_value());
  CHECK(reply->status == 431);
  CHECK(reply->errorCode() == "headers_too_large");
}

}  // namespace npac::npacd
