// The admin API's log views: GET /v1/association-log and GET /v1/audit-log (real HTTP on
// loopback, a real SQLite file written through the stores npacd uses).
#include <catch2/catch.hpp>

#include "db/association_log_store.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using testing::AdminApiFixture;
using testing::Reply;
using nlohmann::json;
using V = boost::beast::http::verb;

void logEvent(db::AssociationLogStore& store, db::AssociationEventKind kind, const std::string& spid,
              std::optional<std::int64_t> association, const std::string& reason) {
  db::AssociationEvent e;
  e.at = AdminApiFixture::kNow;
  e.kind = kind;
  e.spid = spid;
  e.nsap = {0x54, 0x00, 0x72, 0x87, 0x22, 0x03, 0x12, 0x70, 0x00, 0x00, 0x00, 0x02};
  e.association_id = association;
  e.function_mask = 0x3;
  e.reason = reason;
  REQUIRE(store.append(e).isOk());
}

TEST_CASE("The association log lists every event newest first and one provider's on request") {
  AdminApiFixture f;
  auto connection = f.openConnection();
  db::AssociationLogStore store(*connection);
  logEvent(store, db::AssociationEventKind::kBind, "0001", 1, "");
  logEvent(store, db::AssociationEventKind::kReject, "0002", std::nullopt, "key list 7 key 1 is not provisioned (unknown-key)");
  logEvent(store, db::AssociationEventKind::kRelease, "0001", 1, "released by peer");

  Reply all = f.call(V::get, "/v1/association-log");
  INFO(all.raw);
  REQUIRE(all.status == 200);
  REQUIRE(all.body["events"].size() == 3);
  CHECK(all.body["events"][0]["event"] == "release");
  CHECK(all.body["events"][1]["event"] == "reject");
  CHECK(all.body["events"][1]["association"].is_null());
  CHECK(all.body["events"][1]["reason"] == "key list 7 key 1 is not provisioned (unknown-key)");
  CHECK(all.body["events"][2]["event"] == "bind");
  CHECK(all.body["events"][2]["nsap"] == "540072872203127000000002");

  Reply one = f.call(V::get, "/v1/association-log?spid=0001&limit=1");
  REQUIRE(one.status == 200);
  REQUIRE(one.body["events"].size() == 1);
  CHECK(one.body["events"][0]["event"] == "release");
  CHECK(one.body["events"][0]["spid"] == "0001");
}

TEST_CASE("A log request with a bad limit or SPID is refused with its reason") {
  AdminApiFixture f;
  for (const char* target : {"/v1/association-log?limit=0", "/v1/association-log?limit=x",
                             "/v1/audit-log?limit=10001"}) {
    Reply r = f.call(V::get, target);
    INFO(target);
    CHECK(r.status == 400);
    CHECK(r.body["error"]["code"] == "invalid_limit");
  }
  Reply bad = f.call(V::get, "/v1/association-log?spid=toolong");
  CHECK(bad.status == 400);
  CHECK(bad.body["error"]["code"] == "invalid_spid");
  CHECK(f.call(V::post, "/v1/audit-log", json::object()).status == 405);
}

TEST_CASE("The audit log lists configuration changes newest first with actor, old and new value") {
  AdminApiFixture f;
  REQUIRE(f.call(V::post, "/v1/providers",
                 json{{"spid", "0001"}, {"name", "P"}, {"system_type", "soa"}, {"actor", "alice"}}).status == 201);
  REQUIRE(f.call(V::post, "/v1/providers/0001/disable", "", "bob").status == 200);
  Reply r = f.call(V::get, "/v1/audit-log?limit=10");
  INFO(r.raw);
  REQUIRE(r.status == 200);
  REQUIRE(r.body["entries"].size() == 2);
  CHECK(r.body["entries"][0]["action"] == "provider.disable");
  CHECK(r.body["entries"][0]["actor"] == "bob");
  CHECK(r.body["entries"][0]["old_value"] == "enabled");
  CHECK(r.body["entries"][0]["new_value"] == "disabled");
  CHECK(r.body["entries"][1]["action"] == "provider.add");
  CHECK(r.body["entries"][1]["old_value"].is_null());
}

}  // namespace
}  // namespace npac::npacd
