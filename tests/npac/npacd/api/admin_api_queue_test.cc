// GET /v1/providers/{spid}/queue and the wait reason of GET /v1/messages/{id}, in-process
// over real loopback HTTP against a real SQLite file: counts by state and function from
// SQLite, the live part from a CoreService (QueueBackedCore's queue_views), the
// not-bound rule without one, and refusals of unknown or malformed SPIDs.
#include <catch2/catch.hpp>

#include "db/outbound_queue.h"
#include "npac/npacd/api/json.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using testing::AdminApiFixture;
using testing::QueueBackedCore;
using testing::Reply;
using nlohmann::json;
using V = boost::beast::http::verb;

constexpr std::uint32_t kSoaManagement = 1u << 0;
constexpr std::uint32_t kNotificationsMask = 1u << 3;

// Rows written straight to the queue, created `ago` ms before the API's clock.
std::vector<db::MessageId> queueRows(AdminApiFixture& f, const std::string& spid, std::uint32_t mask, int count,
                                     db::TimeMs ago) {
  auto connection = f.openConnection();
  db::OutboundQueue queue(*connection);
  std::vector<db::NewMessage> rows;
  for (int i = 0; i < count; ++i) {
    rows.push_back(db::NewMessage{spid, mask, 0, db::Bytes{0x30, 0x03, 0x02, 0x01, static_cast<std::uint8_t>(i)}});
  }
  auto ids = queue.appendBatch(rows, AdminApiFixture::kNow - ago);
  INFO(ids.status().toString());
  REQUIRE(ids.isOk());
  return ids.value();
}

void markSent(AdminApiFixture& f, db::MessageId id) {
  auto connection = f.openConnection();
  db::OutboundQueue queue(*connection);
  REQUIRE(queue.markSent(id, 5, AdminApiFixture::kNow).isOk());
}

Reply queueOf(AdminApiFixture& f, const std::string& spid) {
  Reply r = f.call(V::get, "/v1/providers/" + spid + "/queue");
  INFO(r.raw);
  return r;
}

// A core attached for the test's scope, answering `views` per provider.
struct AttachedCore {
  AdminApiFixture& f;
  std::unique_ptr<db::QueueWriter> writer;
  std::unique_ptr<QueueBackedCore> core;
  explicit AttachedCore(AdminApiFixture& fixture) : f(fixture) {
    auto started = db::QueueWriter::start(f.path(), {}, AdminApiFixture::clock());
    REQUIRE(started.isOk());
    writer = std::move(started).value();
    core = std::make_unique<QueueBackedCore>(*writer);
    f.onApiThread([&] { f.api->attachCore(core.get()); });
  }
  ~AttachedCore() {
    f.onApiThread([&] { f.api->attachCore(nullptr); });
  }
  void set(const ProviderQueueView& view) {
    std::lock_guard lock(core->mutex);
    core->queue_views[view.spid] = view;
  }
};

TEST_CASE("The queue view counts a provider's messages by state and function with the oldest queued age") {
  AdminApiFixture f;
  f.addProvider("0001");
  f.addProvider("0002");
  std::vector<db::MessageId> early = queueRows(f, "0001", kNotificationsMask, 2, 5000);
  queueRows(f, "0001", kNotificationsMask, 1, 2000);
  queueRows(f, "0002", kNotificationsMask, 4, 9000);  // another provider's rows are not counted
  markSent(f, early[0]);

  Reply r = queueOf(f, "0001");
  REQUIRE(r.status == 200);
  CHECK(r.body["spid"] == "0001");
  CHECK(r.body["totals"] == json{{"queued", 2}, {"sent", 1}, {"acknowledged", 0}, {"failed", 0}});
  REQUIRE(r.body["counts"].size() == 2);
  CHECK(r.body["counts"][0]["state"] == "queued");
  CHECK(r.body["counts"][0]["functions"] == "notifications");
  CHECK(r.body["counts"][0]["count"] == 2);
  CHECK(r.body["counts"][1]["state"] == "sent");
  CHECK(r.body["counts"][1]["count"] == 1);
  // The oldest still queued is the second of the early pair, 5000 ms before the clock.
  CHECK(r.body["oldest_queued_age_ms"] == 5000);
  CHECK(r.body["oldest_queued_at"] == formatTime(AdminApiFixture::kNow - 5000));
}

TEST_CASE("Without a core every function with queued messages waits for not-bound") {
  AdminApiFixture f;
  f.addProvider("0001");
  queueRows(f, "0001", kNotificationsMask, 2, 3000);
  queueRows(f, "0001", kSoaManagement | kNotificationsMask, 1, 1000);  // routed by soa-management

  Reply r = queueOf(f, "0001");
  REQUIRE(r.status == 200);
  CHECK(r.body["live"] == false);
  CHECK(r.body["bound"] == false);
  json expected = json::array({
      {{"function", "soa-management"}, {"queued", 1}, {"oldest_queued_age_ms", 1000}, {"reason", "not-bound"},
       {"core_waiting", nullptr}},
      {{"function", "notifications"}, {"queued", 2}, {"oldest_queued_age_ms", 3000}, {"reason", "not-bound"},
       {"core_waiting", nullptr}},
  });
  CHECK(r.body["waits"] == expected);
  // What only the core knows is not guessed.
  CHECK(r.body["throttle"].is_null());
  CHECK(r.body["storage_ok"].is_null());
  CHECK(r.body["associations"].empty());
}

TEST_CASE("A provider the core never saw has its queued messages waiting for not-bound") {
  AdminApiFixture f;
  f.addProvider("0001");
  queueRows(f, "0001", kNotificationsMask, 1, 10);
  AttachedCore core(f);  // answers bound=false and no waits for 0001

  Reply r = queueOf(f, "0001");
  REQUIRE(r.status == 200);
  CHECK(r.body["live"] == true);
  CHECK(r.body["bound"] == false);
  REQUIRE(r.body["waits"].size() == 1);
  CHECK(r.body["waits"][0]["reason"] == "not-bound");
  CHECK(r.body["throttle"] == json{{"level", 0}, {"detail", ""}, {"group", nullptr}, {"group_level", 0}});
  CHECK(r.body["storage_ok"] == true);
}

TEST_CASE("The queue view takes wait reasons throttle storage and association load from the core") {
  AdminApiFixture f;
  f.addProvider("0001");
  queueRows(f, "0001", kNotificationsMask, 3, 700);
  AttachedCore core(f);
  ProviderQueueView view;
  view.spid = "0001";
  view.bound = true;
  view.waits = {{"notifications", WaitReason::kAllCongested, 3}, {"queries", WaitReason::kThrottled, 0}};
  view.throttle_level = 2;
  view.throttle_detail = "rate 21/20 msg/s";
  view.storage_ok = false;
  view.associations = {{7, 10, true, false}, {8, 4, false, true}};
  core.set(view);

  Reply r = queueOf(f, "0001");
  REQUIRE(r.status == 200);
  CHECK(r.body["bound"] == true);
  json expected = json::array({
      {{"function", "notifications"}, {"queued", 3}, {"oldest_queued_age_ms", 700}, {"reason", "all-congested"},
       {"core_waiting", 3}},
      // The core's reason is shown even for a function SQLite has nothing queued for.
      {{"function", "queries"}, {"queued", 0}, {"oldest_queued_age_ms", nullptr}, {"reason", "throttled"},
       {"core_waiting", 0}},
  });
  CHECK(r.body["waits"] == expected);
  // Not a member of a provisioned throttle group: no group, and no level of one.
  CHECK(r.body["throttle"] ==
        json{{"level", 2}, {"detail", "rate 21/20 msg/s"}, {"group", nullptr}, {"group_level", 0}});
  CHECK(r.body["storage_ok"] == false);
  CHECK(r.body["associations"] ==
        json::array({{{"id", 7}, {"outstanding", 10}, {"congested", true}, {"silent", false}},
                     {{"id", 8}, {"outstanding", 4}, {"congested", false}, {"silent", true}}}));
}

TEST_CASE("A bound provider whose core holds nothing back has no wait reason for its queued function") {
  AdminApiFixture f;
  f.addProvider("0001");
  queueRows(f, "0001", kNotificationsMask, 1, 0);
  AttachedCore core(f);
  ProviderQueueView view;
  view.spid = "0001";
  view.bound = true;
  core.set(view);
  Reply r = queueOf(f, "0001");
  REQUIRE(r.status == 200);
  REQUIRE(r.body["waits"].size() == 1);
  CHECK(r.body["waits"][0]["reason"].is_null());
}

TEST_CASE("An empty queue has no oldest age and no waits") {
  AdminApiFixture f;
  f.addProvider("0001");
  Reply r = queueOf(f, "0001");
  REQUIRE(r.status == 200);
  CHECK(r.body["counts"].empty());
  CHECK(r.body["waits"].empty());
  CHECK(r.body["oldest_queued_age_ms"].is_null());
  CHECK(r.body["oldest_queued_at"].is_null());
}

TEST_CASE("The queue of an unknown provider is 404 provider_not_found") {
  AdminApiFixture f;
  Reply r = queueOf(f, "0009");
  CHECK(r.status == 404);
  CHECK(r.errorCode() == "provider_not_found");
  CHECK_THAT(r.errorMessage(), Catch::Contains("0009"));
}

TEST_CASE("A malformed SPID in the queue route is refused 400 with the reason") {
  AdminApiFixture f;
  f.addProvider("0001");
  for (const char* bad : {"001", "00001", "00-1", "0%2001", "%C3%A9%C3%A9"}) {
    INFO(bad);
    Reply r = queueOf(f, bad);
    CHECK(r.status == 400);
    CHECK(r.errorCode() == "invalid_spid");
    CHECK_THAT(r.errorMessage(), Catch::Contains("is not a SPID"));
  }
  Reply not_utf8 = queueOf(f, "00%ff1");
  CHECK(not_utf8.status == 400);
  CHECK(not_utf8.errorCode() == "bad_utf8");
  CHECK_THAT(not_utf8.errorMessage(), Catch::Contains("path segment 3"));
}

TEST_CASE("The queue route answers only GET and no deeper path") {
  AdminApiFixture f;
  f.addProvider("0001");
  CHECK(f.call(V::post, "/v1/providers/0001/queue", json{{"actor", "x"}}).errorCode() == "method_not_allowed");
  CHECK(f.call(V::delete_, "/v1/providers/0001/queue?actor=x").errorCode() == "method_not_allowed");
  CHECK(f.call(V::get, "/v1/providers/0001/queue/notifications").errorCode() == "unknown_route");
  // A query string changes nothing.
  CHECK(f.call(V::get, "/v1/providers/0001/queue?x=%ff%").errorCode() == "bad_target");
  CHECK(f.call(V::get, "/v1/providers/0001/queue?state=queued").status == 200);
}

TEST_CASE("A queued message's status names the core's wait reason for its routing function") {
  AdminApiFixture f;
  f.addProvider("0001");
  const db::MessageId id = queueRows(f, "0001", kSoaManagement | kNotificationsMask, 1, 0)[0];
  AttachedCore core(f);
  ProviderQueueView view;
  view.spid = "0001";
  view.bound = true;
  // The message is routed by its lowest function, soa-management, not by notifications.
  view.waits = {{"soa-management", WaitReason::kNoAssociationForFunction, 1},
                {"notifications", WaitReason::kAllCongested, 9}};
  core.set(view);
  Reply r = f.call(V::get, "/v1/messages/" + std::to_string(id));
  INFO(r.raw);
  REQUIRE(r.status == 200);
  CHECK(r.body["state"] == "queued");
  CHECK(r.body["wait_reason"] == "no-association-for-function");
}

TEST_CASE("Without a core a queued message's status waits for not-bound") {
  AdminApiFixture f;
  f.addProvider("0001");
  const db::MessageId id = queueRows(f, "0001", kNotificationsMask, 1, 0)[0];
  Reply r = f.call(V::get, "/v1/messages/" + std::to_string(id));
  REQUIRE(r.status == 200);
  CHECK(r.body["wait_reason"] == "not-bound");
}

TEST_CASE("A message that left the queue has no wait reason") {
  AdminApiFixture f;
  f.addProvider("0001");
  const db::MessageId id = queueRows(f, "0001", kNotificationsMask, 1, 0)[0];
  markSent(f, id);
  AttachedCore core(f);
  Reply r = f.call(V::get, "/v1/messages/" + std::to_string(id));
  REQUIRE(r.status == 200);
  CHECK(r.body["state"] == "sent");
  CHECK_FALSE(r.body.contains("wait_reason"));
}

TEST_CASE("A queued message the core holds nothing back for has a null wait reason") {
  AdminApiFixture f;
  f.addProvider("0001");
  const db::MessageId id = queueRows(f, "0001", kNotificationsMask, 1, 0)[0];
  AttachedCore core(f);
  ProviderQueueView view;
  view.spid = "0001";
  view.bound = true;
  core.set(view);
  Reply r = f.call(V::get, "/v1/messages/" + std::to_string(id));
  REQUIRE(r.status == 200);
  REQUIRE(r.body.contains("wait_reason"));
  CHECK(r.body["wait_reason"].is_null());
}

TEST_CASE("The egress route refuses a malformed SPID 400 and an unknown provider 404") {
  AdminApiFixture f;
  f.addProvider("0001");
  for (const char* bad : {"001", "00-1", "%C3%A9%C3%A9"}) {
    INFO(bad);
    Reply r = f.call(V::get, std::string("/v1/providers/") + bad + "/egress");
    CHECK(r.status == 400);
    CHECK(r.errorCode() == "invalid_spid");
  }
  CHECK(f.call(V::get, "/v1/providers/00%ff1/egress").errorCode() == "bad_utf8");
  CHECK(f.call(V::get, "/v1/providers/0009/egress").status == 404);
  CHECK(f.call(V::post, "/v1/providers/0001/egress", json{{"actor", "x"}}).errorCode() == "method_not_allowed");
  // Without a core: the provisioned policy and no picks.
  Reply shown = f.call(V::get, "/v1/providers/0001/egress");
  REQUIRE(shown.status == 200);
  CHECK(shown.body["policy"] == "round-robin");
  CHECK(shown.body["recent"].empty());
}

}  // namespace
}  // namespace npac::npacd
