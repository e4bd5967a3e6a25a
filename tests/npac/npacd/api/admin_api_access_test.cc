// The admin API's authentication and roles, in-process over real TCP and a real SQLite
// file: table driven over AdminApi::routes(), so a route added to the table is covered
// (and one without a declared role cannot be written).
#include <catch2/catch.hpp>

#include <set>

#include "db/audit_store.h"
#include "db/token_store.h"
#include "fuzz/admin_api_input.h"
#include "npac/npacd/api/access.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using testing::AdminApiFixture;
using testing::Reply;
using nlohmann::json;
using V = http::verb;
using db::TokenRole;

// A concrete path for a pattern: every "{...}" segment becomes "x".
std::string concrete(const std::string& pattern) {
  std::string out;
  std::size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '{') {
      out += "x";
      i = pattern.find('}', i) + 1;
    } else {
      out += pattern[i++];
    }
  }
  return out;
}

std::string nameOf(const AdminApi::RouteInfo& route) {
  return std::string(http::to_string(route.method)) + " " + route.pattern;
}

std::vector<AdminApi::RouteInfo> guarded() {
  std::vector<AdminApi::RouteInfo> out;
  for (const auto& route : AdminApi::routes()) {
    if (route.access != RouteAccess::kPublic) out.push_back(route);
  }
  return out;
}

std::vector<db::AuditEntry> refusals(AdminApiFixture& f) {
  auto db = f.openConnection();
  db::AuditStore audit(*db);
  auto recent = audit.recent(1000);
  REQUIRE(recent.isOk());
  std::vector<db::AuditEntry> out;
  for (const auto& e : *recent) {
    if (e.action == "api.refused") out.push_back(e);
  }
  return out;
}

TEST_CASE("Every route in the table has a path pattern its own concrete path matches and appears once") {
  std::set<std::string> seen;
  const auto routes = AdminApi::routes();
  REQUIRE(routes.size() >= 30);
  for (const auto& route : routes) {
    INFO(nameOf(route));
    CHECK(route.pattern.rfind("/", 0) == 0);
    CHECK(seen.insert(nameOf(route)).second);
    std::vector<std::string> path;
    std::map<std::string, std::string> query;
    REQUIRE(parseTarget(concrete(route.pattern), &path, &query));
    CHECK(AdminApi::matches(route.pattern, path));
  }
}

TEST_CASE("The roles of the routes follow the documented rule") {
  // reader: every GET but the inbound poll; application: submitting messages and
  // broadcasts, and taking and answering providers' requests; the probes are public;
  // everything else operator.
  const std::set<std::string> application{"POST /v1/messages", "POST /v1/broadcasts", "POST /v1/pdu-batches", "GET /v1/inbound",
                                          "POST /v1/inbound/{id}/response"};
  const std::set<std::string> operator_gets{"GET /v1/tokens"};
  const std::set<std::string> public_routes{"GET /health", "GET /ready", "GET /console", "GET /console/{file}"};
  for (const auto& route : AdminApi::routes()) {
    INFO(nameOf(route));
    const std::string name = nameOf(route);
    RouteAccess expected = RouteAccess::kOperator;
    if (public_routes.count(name)) expected = RouteAccess::kPublic;
    else if (application.count(name)) expected = RouteAccess::kApplication;
    else if (route.method == V::get && !operator_gets.count(name)) expected = RouteAccess::kReader;
    CHECK(toString(route.access) == std::string(toString(expected)));
  }
}

TEST_CASE("Every guarded route refuses a request without a token with 401 and a Bearer challenge") {
  AdminApiFixture f;
  for (const auto& route : guarded()) {
    INFO(nameOf(route));
    Reply r = f.callWith(std::nullopt, route.method, concrete(route.pattern));
    CHECK(r.status == 401);
    CHECK(r.errorCode() == "unauthenticated");
    CHECK_THAT(r.errorMessage(), Catch::Contains("no Authorization header"));
    CHECK(r.www_authenticate == "Bearer realm=\"npacd\"");
  }
}

TEST_CASE("Every route refuses a token whose role is below the one it declares with 403 naming both roles") {
  AdminApiFixture f;
  const std::string reader = f.token("viewer", TokenRole::kReader);
  const std::string application = f.token("app", TokenRole::kApplication);
  int refused = 0;
  for (const auto& route : guarded()) {
    INFO(nameOf(route));
    for (auto [secret, role, name] : {std::tuple{reader, RouteAccess::kReader, "viewer"},
                                      std::tuple{application, RouteAccess::kApplication, "app"}}) {
      if (role >= route.access) continue;
      Reply r = f.callWith("Bearer " + secret, route.method, concrete(route.pattern), "{}");
      CHECK(r.status == 403);
      CHECK(r.errorCode() == "forbidden");
      CHECK_THAT(r.errorMessage(), Catch::Contains(std::string("needs the ") + toString(route.access) + " role") &&
                                       Catch::Contains(std::string("token '") + name + "' has the " +
                                                       toString(role) + " role"));
      ++refused;
    }
  }
  CHECK(refused > 20);
  CHECK(f.api->accessCounters().forbidden == static_cast<std::uint64_t>(refused));
}

TEST_CASE("Every guarded route refuses a revoked token with 401 saying it was revoked") {
  AdminApiFixture f;
  const std::string secret = f.token("leaver", TokenRole::kOperator);
  REQUIRE(f.call(V::post, "/v1/tokens/leaver/revoke").status == 200);
  for (const auto& route : guarded()) {
    INFO(nameOf(route));
    Reply r = f.callWith("Bearer " + secret, route.method, concrete(route.pattern), "{}");
    CHECK(r.status == 401);
    CHECK_THAT(r.errorMessage(), Catch::Contains("token 'leaver' was revoked at"));
    CHECK(r.www_authenticate == "Bearer realm=\"npacd\", error=\"invalid_token\"");
  }
}

TEST_CASE("Every route admits a token of exactly the role it declares") {
  AdminApiFixture f;
  const std::map<RouteAccess, std::string> secrets{{RouteAccess::kReader, f.token("r", TokenRole::kReader)},
                                                   {RouteAccess::kApplication, f.token("a", TokenRole::kApplication)},
                                                   {RouteAccess::kOperator, f.token("o", TokenRole::kOperator)}};
  for (const auto& route : AdminApi::routes()) {
    INFO(nameOf(route));
    std::optional<std::string> authorization;
    if (route.access != RouteAccess::kPublic) authorization = "Bearer " + secrets.at(route.access);
    // The placeholders make most answers 400 or 404 — but never a refusal of the caller.
    // The event stream is asked with a bad interval: a 400 shows it was admitted, and
    // the call does not wait for a stream that never ends.
    const std::string query = route.pattern == "/v1/events" ? "?interval_ms=0" : "";
    Reply r = f.callWith(authorization, route.method, concrete(route.pattern) + query, "{}");
    INFO(r.raw);
    CHECK(r.status != 401);
    CHECK(r.status != 403);
    CHECK(r.status != 405);
  }
  CHECK(f.api->accessCounters().unauthenticated == 0);
  CHECK(f.api->accessCounters().forbidden == 0);
}

TEST_CASE("A path no route has is 401 to an anonymous caller and 404 to a reader") {
  AdminApiFixture f;
  CHECK(f.callWith(std::nullopt, V::get, "/v1/nothing-here").status == 401);
  Reply r = f.callWith("Bearer " + f.token("viewer", TokenRole::kReader), V::get, "/v1/nothing-here");
  CHECK(r.status == 404);
  CHECK(r.errorCode() == "unknown_route");
}

TEST_CASE("A known path with a method it lacks is 405 to a caller who may use the path") {
  AdminApiFixture f;
  Reply r = f.callWith("Bearer " + f.token("viewer", TokenRole::kReader), V::patch, "/v1/providers");
  CHECK(r.status == 405);
  CHECK(f.callWith(std::nullopt, V::patch, "/v1/providers").status == 401);
}

TEST_CASE("Malformed Authorization headers are refused 401 each with its own reason") {
  AdminApiFixture f;
  const std::string good = f.token(AdminApiFixture::kDefaultTokenName);
  const std::vector<std::pair<std::string, std::string>> cases{
      {good, "has no scheme"},
      {"Basic dXNlcjpwYXNz", "scheme 'Basic' is not accepted"},
      {"", "is empty"},
      {"   ", "is empty"},
      {"Bearer", "names the Bearer scheme but no token"},
      {"Bearer   ", "names the Bearer scheme but no token"},
      {"Bearer " + std::string(2048, 'a'), "bytes, more than 1024"},
      {"Bearer npac_\xC3\xA9" + good.substr(7), "0xc3 at offset 12, which is not printable ASCII"},
      {"Bearer " + good + " extra", "holds a space"},
      {"Bearer npac_123", "not an npacd token"},
      {"Bearer npac_" + std::string(64, '0'), "unknown token"},
  };
  for (const auto& [header, reason] : cases) {
    INFO(header.substr(0, 80));
    Reply r = f.callWith(header, V::get, "/v1/providers");
    CHECK(r.status == 401);
    CHECK(r.errorCode() == "unauthenticated");
    CHECK_THAT(r.errorMessage(), Catch::Contains(reason));
  }
  // The scheme is case-insensitive (RFC 7235 §2.1).
  CHECK(f.callWith("bearer " + good, V::get, "/v1/providers").status == 200);
  CHECK(f.callWith("BEARER  " + good, V::get, "/v1/providers").status == 200);
  CHECK(f.api->accessCounters().unauthenticated == cases.size());
}

TEST_CASE("A 10 KiB Authorization header is refused and the server keeps answering") {
  AdminApiFixture f;
  Reply r = f.callWith("Bearer " + std::string(10 * 1024, 'a'), V::get, "/v1/providers");
  CHECK((r.status == 401 || r.status == 400 || r.status == 431));
  CHECK_FALSE(r.errorMessage().empty());
  CHECK(f.call(V::get, "/v1/providers").status == 200);
}

TEST_CASE("The audit entry of a refusal names the token or anonymous and the route") {
  AdminApiFixture f;
  REQUIRE(f.callWith("Bearer " + f.token("viewer", TokenRole::kReader), V::post, "/v1/providers",
                     json{{"spid", "0001"}, {"name", "x"}, {"system_type", "soa"}}.dump())
              .status == 403);
  REQUIRE(f.callWith(std::nullopt, V::get, "/v1/tunables").status == 401);
  auto entries = refusals(f);
  REQUIRE(entries.size() == 2);
  CHECK(entries[1].actor == "viewer");
  CHECK(entries[1].subject == "POST /v1/providers");
  CHECK_THAT(*entries[1].new_value, Catch::Contains("\"status\":403"));
  CHECK(entries[0].actor == "anonymous");
  CHECK(entries[0].subject == "GET /v1/tunables");
  CHECK_THAT(*entries[0].new_value, Catch::Contains("no Authorization header"));
}

TEST_CASE("A flood of refusals writes at most the per-minute cap of audit rows but counts every one") {
  AdminApiFixture f;  // its clock stands still: every refusal falls in one minute
  const int flood = kAuditedRefusalsPerMinute + 15;
  for (int i = 0; i < flood; ++i) REQUIRE(f.callWith("Basic x", V::get, "/v1/providers").status == 401);
  CHECK(refusals(f).size() == static_cast<std::size_t>(kAuditedRefusalsPerMinute));
  CHECK(f.api->accessCounters().unauthenticated == static_cast<std::uint64_t>(flood));
}

TEST_CASE("The actor of a change is the token's name whatever the body or X-Npac-Actor say") {
  AdminApiFixture f;
  Reply r = f.callWith("Bearer " + f.token("ops-carol"), V::post, "/v1/providers",
                       json{{"spid", "0001"}, {"name", "x"}, {"system_type", "soa"}, {"actor", "mallory"}}.dump(),
                       "eve");
  REQUIRE(r.status == 201);
  auto db = f.openConnection();
  db::AuditStore audit(*db);
  auto recent = audit.recent(1);
  REQUIRE(recent.isOk());
  REQUIRE(recent->size() == 1);
  CHECK((*recent)[0].action == "provider.add");
  CHECK((*recent)[0].actor == "ops-carol");
}

TEST_CASE("A revoked token is refused from the very next request") {
  AdminApiFixture f;
  const std::string secret = f.token("shortlived", TokenRole::kReader);
  CHECK(f.callWith("Bearer " + secret, V::get, "/v1/providers").status == 200);
  REQUIRE(f.call(V::post, "/v1/tokens/shortlived/revoke").status == 200);
  CHECK(f.callWith("Bearer " + secret, V::get, "/v1/providers").status == 401);
}

TEST_CASE("POST /v1/tokens answers the secret once and the secret works with its role") {
  AdminApiFixture f;
  Reply created = f.call(V::post, "/v1/tokens", json{{"name", "feed"}, {"role", "application"}});
  REQUIRE(created.status == 201);
  CHECK(created.body["name"] == "feed");
  CHECK(created.body["role"] == "application");
  CHECK(created.body["created_by"] == AdminApiFixture::kDefaultTokenName);
  CHECK(created.body["revoked_at"].is_null());
  const std::string secret = created.body["token"].get<std::string>();
  CHECK(secret.size() == db::kTokenLength);
  CHECK(f.callWith("Bearer " + secret, V::get, "/v1/inbound?wait=0").status != 403);
  CHECK(f.callWith("Bearer " + secret, V::post, "/v1/tokens", json{{"name", "x"}, {"role", "reader"}}.dump())
            .status == 403);
  // Neither the listing nor the audit log ever shows it.
  Reply listed = f.call(V::get, "/v1/tokens");
  REQUIRE(listed.status == 200);
  CHECK(listed.raw.find(secret.substr(5)) == std::string::npos);
  CHECK(f.call(V::get, "/v1/audit-log?limit=100").raw.find(secret.substr(5)) == std::string::npos);
  bool found = false;
  for (const auto& t : listed.body["tokens"]) found = found || (t["name"] == "feed" && t["role"] == "application");
  CHECK(found);
}

TEST_CASE("Token creation refuses a bad name, a bad role and a name used before") {
  AdminApiFixture f;
  CHECK(f.call(V::post, "/v1/tokens", json{{"name", "two words"}, {"role", "reader"}}).errorCode() ==
        "invalid_token_request");
  CHECK(f.call(V::post, "/v1/tokens", json{{"name", std::string(65, 'n')}, {"role", "reader"}}).status == 400);
  CHECK(f.call(V::post, "/v1/tokens", json{{"name", "n"}, {"role", "admin"}}).errorCode() == "invalid_token_request");
  CHECK(f.call(V::post, "/v1/tokens", json{{"role", "reader"}}).status == 400);
  REQUIRE(f.call(V::post, "/v1/tokens", json{{"name", "n"}, {"role", "reader"}}).status == 201);
  CHECK(f.call(V::post, "/v1/tokens", json{{"name", "n"}, {"role", "reader"}}).errorCode() == "token_exists");
  REQUIRE(f.call(V::post, "/v1/tokens/n/revoke").status == 200);
  CHECK(f.call(V::post, "/v1/tokens", json{{"name", "n"}, {"role", "reader"}}).status == 409);
}

TEST_CASE("Revoking an unknown token is 404 and revoking twice is 409") {
  AdminApiFixture f;
  CHECK(f.call(V::post, "/v1/tokens/nobody/revoke").errorCode() == "token_not_found");
  REQUIRE(f.call(V::post, "/v1/tokens", json{{"name", "n"}, {"role", "reader"}}).status == 201);
  Reply first = f.call(V::post, "/v1/tokens/n/revoke");
  REQUIRE(first.status == 200);
  CHECK(first.body["revoked_at"].is_string());
  CHECK(f.call(V::post, "/v1/tokens/n/revoke").errorCode() == "token_revoked");
}

TEST_CASE("Token changes are audited with the token name as actor and without the secret") {
  AdminApiFixture f;
  Reply created = f.call(V::post, "/v1/tokens", json{{"name", "n"}, {"role", "reader"}});
  REQUIRE(created.status == 201);
  REQUIRE(f.call(V::post, "/v1/tokens/n/revoke").status == 200);
  auto db = f.openConnection();
  db::AuditStore audit(*db);
  auto recent = audit.recent(2);
  REQUIRE(recent.isOk());
  REQUIRE(recent->size() == 2);
  CHECK((*recent)[0].action == "token.revoke");
  CHECK((*recent)[1].action == "token.create");
  CHECK((*recent)[1].actor == AdminApiFixture::kDefaultTokenName);
  CHECK((*recent)[1].subject == "token n");
  CHECK((*recent)[1].new_value->find(created.body["token"].get<std::string>()) == std::string::npos);
}

}  // namespace
}  // namespace npac::npacd

namespace npac::npacd {
namespace {

TEST_CASE("Hostile Authorization headers run through the fuzz target's path without a crash") {
  const std::vector<std::string> inputs{
      "GET /v1/providers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\n\r\n",
      "GET /v1/providers HTTP/1.1\r\nHost: x\r\nAuthorization: \r\n\r\n",
      "GET /v1/providers HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \xff\xfe\r\n\r\n",
      "GET /v1/providers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + std::string(5000, 'A') + "\r\n\r\n",
      "GET /v1/providers HTTP/1.1\r\nHost: x\r\nAuthorization: \tBearer\t\tnpac_x\t\r\n\r\n",
      "GET /v1/providers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a b c\r\n\r\n",
      std::string("Bearer \x00\x01 npac_", 14),
      "bEaReR npac_" + std::string(64, 'f'),
  };
  for (const std::string& input : inputs) {
    npac::fuzz::runAdminApiInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
  }
  CHECK(parseBearerAuthorization(std::string_view("bEaReR npac_1")).token == "npac_1");
  CHECK(parseBearerAuthorization(std::string_view("\tBearer\t\tnpac_x\t")).token == "npac_x");
}

}  // namespace
}  // namespace npac::npacd
