// /v1/throttle-groups over real loopback HTTP against a real SQLite file (docs/API.md
// "Throttle groups"): the round trip, each change audited, and every malformed input on
// every route refused with its specific reason and status.
#include <catch2/catch.hpp>

#include "db/audit_store.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using testing::AdminApiFixture;
using testing::Reply;
using nlohmann::json;
using V = boost::beast::http::verb;

json bureau() {
  return {{"name", "bureau-a"}, {"members", {"0002", "0001", "0003"}}, {"max_rate", 10000}, {"max_pending", 12000}};
}

struct Fixture : AdminApiFixture {
  Fixture() {
    for (const char* spid : {"0001", "0002", "0003", "0004"}) addProvider(spid, "lsms");
  }
  Reply create(const json& body = bureau()) { return call(V::post, "/v1/throttle-groups", body); }
};

// The 400 a POST of `body` gets, with the message it must contain.
void refused(Fixture& f, const json& body, const std::string& says) {
  Reply r = f.create(body);
  INFO(body.dump() << " → " << r.raw);
  CHECK(r.status == 400);
  CHECK(r.errorCode() == "invalid_throttle_group");
  CHECK(r.errorMessage().find(says) != std::string::npos);
}

json with(json body, const std::string& field, json value) {
  body[field] = std::move(value);
  return body;
}

json without(json body, const std::string& field) {
  body.erase(field);
  return body;
}

}  // namespace

TEST_CASE("A throttle group is created with the seed's defaults, listed, shown, changed and removed") {
  Fixture f;
  Reply created = f.create();
  INFO(created.raw);
  REQUIRE(created.status == 201);
  CHECK(created.body["members"] == json({"0001", "0002", "0003"}));  // sorted
  CHECK(created.body["onset_1"] == 100);
  CHECK(created.body["abatement_1"] == 80);
  CHECK(created.body["min_abatement_time"] == "2s");
  CHECK(created.body["peer_loss_reduction_percent"] == 50);
  CHECK(created.body["updated_by"] == "test-operator");
  Reply list = f.call(V::get, "/v1/throttle-groups");
  REQUIRE(list.status == 200);
  REQUIRE(list.body["throttle_groups"].size() == 1);
  CHECK(list.body["throttle_groups"][0]["name"] == "bureau-a");
  Reply shown = f.call(V::get, "/v1/throttle-groups/bureau-a");
  REQUIRE(shown.status == 200);
  CHECK(shown.body["max_rate"] == 10000);
  CHECK(shown.body["live"].is_null());  // no core in this fixture: the definition only
  Reply changed = f.call(V::put, "/v1/throttle-groups/bureau-a",
                         json{{"max_rate", 5000}, {"members", {"0001", "0004"}}, {"peer_loss_reduction_percent", 25}});
  INFO(changed.raw);
  REQUIRE(changed.status == 200);
  CHECK(changed.body["max_rate"] == 5000);
  CHECK(changed.body["max_pending"] == 12000);  // not given: kept
  CHECK(changed.body["members"] == json({"0001", "0004"}));
  CHECK(changed.body["peer_loss_reduction_percent"] == 25);
  Reply removed = f.call(V::delete_, "/v1/throttle-groups/bureau-a");
  REQUIRE(removed.status == 200);
  CHECK(removed.body["removed"] == "bureau-a");
  CHECK(f.call(V::get, "/v1/throttle-groups/bureau-a").status == 404);
  CHECK(f.call(V::get, "/v1/throttle-groups").body["throttle_groups"].empty());
}

TEST_CASE("Each throttle group change is audited with the group before and after") {
  Fixture f;
  REQUIRE(f.create().status == 201);
  REQUIRE(f.call(V::put, "/v1/throttle-groups/bureau-a", json{{"max_rate", 7000}}).status == 200);
  REQUIRE(f.call(V::delete_, "/v1/throttle-groups/bureau-a").status == 200);
  auto connection = f.openConnection();
  auto entries = db::AuditStore(*connection).recent(10);
  REQUIRE(entries.isOk());
  std::vector<db::AuditEntry> ours;
  for (const db::AuditEntry& e : entries.value()) {
    if (e.action.rfind("throttle-group.", 0) == 0) ours.push_back(e);
  }
  REQUIRE(ours.size() == 3);  // newest first
  CHECK(ours[2].action == "throttle-group.add");
  CHECK_FALSE(ours[2].old_value.has_value());
  CHECK(json::parse(*ours[2].new_value)["max_rate"] == 10000);
  CHECK(ours[1].action == "throttle-group.set");
  CHECK(json::parse(*ours[1].old_value)["max_rate"] == 10000);
  CHECK(json::parse(*ours[1].new_value)["max_rate"] == 7000);
  CHECK(ours[0].action == "throttle-group.remove");
  CHECK_FALSE(ours[0].new_value.has_value());
  for (const db::AuditEntry& e : ours) {
    CHECK(e.subject == "throttle group bureau-a");
    CHECK(e.actor == "test-operator");
  }
}

TEST_CASE("A throttle group body with a missing, mistyped or out-of-range field is refused naming it") {
  Fixture f;
  refused(f, without(bureau(), "name"), "name: required");
  refused(f, without(bureau(), "members"), "members: required");
  refused(f, with(bureau(), "name", 7), "name: must be a string");
  refused(f, with(bureau(), "name", ""), "is not 1..64 of");
  refused(f, with(bureau(), "name", std::string(65, 'x')), "is not 1..64 of");
  refused(f, with(bureau(), "name", "a/b"), "is not 1..64 of");
  refused(f, with(bureau(), "members", "0001"), "members: must be a list of SPIDs");
  refused(f, with(bureau(), "members", json::array()), "members: must name at least one SPID");
  refused(f, with(bureau(), "members", {"0001", "12345"}), "members[1]: not a SPID");
  refused(f, with(bureau(), "members", {"0001", 2}), "members[1]: not a SPID");
  refused(f, with(bureau(), "members", {"0001", "0001"}), "members[1]: SPID 0001 is named twice");
  refused(f, with(bureau(), "max_rate", "10"), "max_rate: must be a whole number");
  refused(f, with(bureau(), "max_rate", 1.5), "max_rate: must be a whole number");
  refused(f, with(bureau(), "max_rate", -1), "max_rate: -1 is outside 0..1000000");
  refused(f, with(bureau(), "max_pending", 1000001), "max_pending: 1000001 is outside");
  refused(f, with(bureau(), "max_pending", 18446744073709551615ull), "max_pending: 18446744073709551615 is outside 0..1000000");
  refused(f, with(with(bureau(), "max_rate", 0), "max_pending", 0), "give at least one limit");
  refused(f, with(bureau(), "onset_1", 0), "onset_1: 0 is outside 1..100");
  refused(f, with(bureau(), "abatement_2", 101), "abatement_2: 101 is outside 0..100");
  refused(f, with(bureau(), "peer_loss_reduction_percent", 101), "peer_loss_reduction_percent: 101 is outside 0..100");
  refused(f, with(bureau(), "peer_loss_reduction_percent", true), "peer_loss_reduction_percent: must be a whole number");
  refused(f, with(bureau(), "min_abatement_time", "2 hours"), "min_abatement_time: must be a duration 0..1min");
  refused(f, with(bureau(), "min_abatement_time", "2min"), "min_abatement_time: must be a duration 0..1min");
  refused(f, with(bureau(), "min_abatement_time", 2000), "min_abatement_time: must be a duration");
  refused(f, with(bureau(), "max_rte", 5), "max_rte: not a field of a throttle group");
  Reply array = f.call(V::post, "/v1/throttle-groups", json::array({bureau()}));
  CHECK(array.status == 400);
  Reply not_json = f.call(V::post, "/v1/throttle-groups", std::string("{\"name\":"));
  CHECK(not_json.status == 400);
  CHECK(f.call(V::get, "/v1/throttle-groups").body["throttle_groups"].empty());  // none was made
}

TEST_CASE("Throttle group levels follow the throttle_* tunables' rules") {
  Fixture f;
  refused(f, with(with(bureau(), "onset_1", 80), "abatement_1", 80), "abatement_1 (80%) must be below onset_1 (80%)");
  json two = bureau();
  two.update({{"onset_1", 80}, {"abatement_1", 60}, {"onset_2", 70}, {"abatement_2", 65}});
  refused(f, two, "onset_2 (70%) must exceed onset_1 (80%)");
  json three = bureau();
  three.update({{"onset_1", 80}, {"abatement_1", 60}, {"onset_3", 95}, {"abatement_3", 85}});
  refused(f, three, "throttle level 3 is set but level 2 is not");
  json good = bureau();
  good.update({{"onset_1", 80}, {"abatement_1", 60}, {"onset_2", 100}, {"abatement_2", 70}});
  CHECK(f.create(good).status == 201);
}

TEST_CASE("A member that is not a provisioned provider is refused with 404") {
  Fixture f;
  Reply r = f.create(with(bureau(), "members", {"0001", "0999"}));
  CHECK(r.status == 404);
  CHECK(r.errorCode() == "provider_not_found");
  CHECK(r.errorMessage().find("0999") != std::string::npos);
}

TEST_CASE("A taken name and a SPID already in another group are refused with 409 naming the conflict") {
  Fixture f;
  REQUIRE(f.create().status == 201);
  Reply again = f.create(with(bureau(), "members", {"0004"}));
  CHECK(again.status == 409);
  CHECK(again.errorCode() == "throttle_group_conflict");
  CHECK(again.errorMessage().find("bureau-a") != std::string::npos);
  Reply shared = f.create(with(with(bureau(), "name", "bureau-b"), "members", {"0004", "0002"}));
  CHECK(shared.status == 409);
  CHECK(shared.errorMessage().find("0002") != std::string::npos);
  CHECK(shared.errorMessage().find("bureau-a") != std::string::npos);
  REQUIRE(f.create(with(with(bureau(), "name", "bureau-b"), "members", {"0004"})).status == 201);
  Reply moved = f.call(V::put, "/v1/throttle-groups/bureau-b", json{{"members", {"0004", "0001"}}});
  CHECK(moved.status == 409);
  CHECK(moved.errorMessage().find("0001") != std::string::npos);
}

TEST_CASE("PUT and DELETE of an unknown throttle group answer 404, and PUT may not rename or take bad fields") {
  Fixture f;
  CHECK(f.call(V::put, "/v1/throttle-groups/nope", json{{"max_rate", 5}}).errorCode() == "throttle_group_not_found");
  CHECK(f.call(V::delete_, "/v1/throttle-groups/nope").status == 404);
  CHECK(f.call(V::get, "/v1/throttle-groups/nope").status == 404);
  REQUIRE(f.create().status == 201);
  Reply rename = f.call(V::put, "/v1/throttle-groups/bureau-a", json{{"name", "bureau-z"}});
  CHECK(rename.status == 400);
  CHECK(rename.errorMessage().find("not renamed") != std::string::npos);
  Reply bad = f.call(V::put, "/v1/throttle-groups/bureau-a", json{{"max_rate", 0}, {"max_pending", 0}});
  CHECK(bad.status == 400);
  Reply typo = f.call(V::put, "/v1/throttle-groups/bureau-a", json{{"members", json::array()}});
  CHECK(typo.status == 400);
  CHECK(f.call(V::get, "/v1/throttle-groups/bureau-a").body["max_rate"] == 10000);  // unchanged
}

TEST_CASE("Only an operator token changes throttle groups, and a reader reads them") {
  Fixture f;
  const std::string reader = f.token("watcher", db::TokenRole::kReader);
  const std::string body = bureau().dump();
  CHECK(f.callWith("Bearer " + reader, V::post, "/v1/throttle-groups", body).status == 403);
  REQUIRE(f.create().status == 201);
  CHECK(f.callWith("Bearer " + reader, V::get, "/v1/throttle-groups/bureau-a").status == 200);
  CHECK(f.callWith("Bearer " + reader, V::put, "/v1/throttle-groups/bureau-a", "{\"max_rate\":1}").status == 403);
  CHECK(f.callWith("Bearer " + reader, V::delete_, "/v1/throttle-groups/bureau-a").status == 403);
  CHECK(f.callWith(std::nullopt, V::get, "/v1/throttle-groups").status == 401);
}

}  // namespace npac::npacd
