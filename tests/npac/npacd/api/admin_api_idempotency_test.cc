// POST /v1/messages with idempotency keys over real loopback HTTP, a real SQLite file and
// a real QueueWriter group commit: a retry answers the original ids, a key reused for
// other content is refused 409, a malformed or repeated key 400.
#include <catch2/catch.hpp>

#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using namespace testing;

json notification(const std::string& spid, const std::string& info_hex, const std::string& key) {
  json m = {{"spid", spid},
            {"function", "notifications"},
            {"operation", "event-report"},
            {"object_class", "1.3.6.1.4.1.103.7.0.0.1.3"},
            {"instance", {{"dn", json::array({json::array({{{"id", "2.5.4.3"}, {"value", "13044e504143"}}})})}}},
            {"type", "1.3.6.1.4.1.103.7.0.0.5.1"},
            {"information", info_hex}};
  if (!key.empty()) m["idempotency_key"] = key;
  return m;
}

}  // namespace

TEST_CASE("A keyed submission repeated answers 200 with the original ids marked duplicate and adds no row") {
  QueuedApiFixture k;
  json batch = {{"messages", json::array({notification("0001", "0401aa", "a-1"), notification("0001", "0401bb", "a-2")})}};
  Reply first = k.f.call(V::post, "/v1/messages", batch);
  INFO(first.raw);
  REQUIRE(first.status == 201);
  CHECK(first.body["messages"][0]["duplicate"] == false);
  Reply again = k.f.call(V::post, "/v1/messages", batch);
  INFO(again.raw);
  REQUIRE(again.status == 200);
  CHECK(again.body["ids"] == first.body["ids"]);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(again.body["messages"][i]["id"] == first.body["ids"][i]);
    CHECK(again.body["messages"][i]["duplicate"] == true);
  }
  CHECK(k.rowCount() == 2);
  Reply status = k.f.call(V::get, "/v1/messages/" + std::to_string(first.body["ids"][1].get<std::int64_t>()));
  CHECK(status.body["idempotency_key"] == "a-2");
}

TEST_CASE("A retry that adds a new keyed message answers 201 and marks only the repeated one duplicate") {
  QueuedApiFixture k;
  Reply first = k.f.call(V::post, "/v1/messages", notification("0001", "0401aa", "b-1"));
  REQUIRE(first.status == 201);
  json batch = {{"messages", json::array({notification("0001", "0401aa", "b-1"), notification("0001", "0401cc", "b-2")})}};
  Reply mixed = k.f.call(V::post, "/v1/messages", batch);
  INFO(mixed.raw);
  REQUIRE(mixed.status == 201);
  CHECK(mixed.body["messages"][0]["id"] == first.body["ids"][0]);
  CHECK(mixed.body["messages"][0]["duplicate"] == true);
  CHECK(mixed.body["messages"][1]["duplicate"] == false);
  CHECK(k.rowCount() == 2);
}

TEST_CASE("A key reused with different content is refused 409 naming the key and the original message") {
  QueuedApiFixture k;
  Reply first = k.f.call(V::post, "/v1/messages", notification("0001", "0401aa", "c-1"));
  REQUIRE(first.status == 201);
  Reply other = k.f.call(V::post, "/v1/messages", notification("0001", "0401ff", "c-1"));
  INFO(other.raw);
  CHECK(other.status == 409);
  CHECK(other.errorCode() == "conflict");
  CHECK_THAT(other.errorMessage(), Catch::Contains("'c-1'") && Catch::Contains("different content") &&
                                       Catch::Contains("message " + std::to_string(first.body["ids"][0].get<std::int64_t>())));
  CHECK(k.rowCount() == 1);
}

TEST_CASE("A key given twice in one submission is refused 400 before the core") {
  QueuedApiFixture k;
  json batch = {{"messages", json::array({notification("0001", "0401aa", "d-1"), notification("0001", "0401aa", "d-1")})}};
  Reply twice = k.f.call(V::post, "/v1/messages", batch);
  INFO(twice.raw);
  CHECK(twice.status == 400);
  CHECK(twice.errorCode() == "repeated_idempotency_key");
  CHECK_THAT(twice.errorMessage(), Catch::Contains("messages[1]") && Catch::Contains("messages[0]"));
  CHECK(k.core->seen().keys.empty());
  CHECK(k.rowCount() == 0);
}

TEST_CASE("A malformed idempotency key is refused 400 with the rule") {
  QueuedApiFixture k;
  for (const json& key : {json(""), json(std::string(129, 'x')), json("with space"), json(7), json("caf\u00e9")}) {
    json m = notification("0001", "0400", "");
    m["idempotency_key"] = key;
    Reply r = k.f.call(V::post, "/v1/messages", m);
    INFO(key.dump() << " " << r.raw);
    CHECK(r.status == 400);
    CHECK(r.errorCode() == "invalid_idempotency_key");
    CHECK_THAT(r.errorMessage(), Catch::Contains("1..128 visible ASCII"));
  }
  CHECK(k.rowCount() == 0);
}

}  // namespace npac::npacd
