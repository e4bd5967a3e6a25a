#include "db/throttle_group_store.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "db/database.h"
#include "db/transaction.h"
#include "fixtures.h"

using namespace npac::db;
using npac::db::testing::TempDir;
using npac::db::testing::openFresh;

namespace {

ThrottleGroupDefinition group(std::string name, std::vector<std::string> members) {
  ThrottleGroupDefinition out;
  out.name = std::move(name);
  out.members = std::move(members);
  out.max_rate = 50;
  out.max_pending = 200;
  out.onset = {100, 120, 140};
  out.abatement = {80, 100, 120};
  out.min_abatement_ms = 3000;
  out.peer_loss_reduction_percent = 40;
  out.updated_at = 1000;
  out.updated_by = "alice";
  return out;
}

ThrottleReport report(std::string group, double rate, std::int64_t pending, bool wanting) {
  return ThrottleReport{std::move(group), "", rate, pending, wanting, 0};
}

void require(const Status& status) {
  INFO(status.toString());
  REQUIRE(status.isOk());
}

std::vector<ThrottleReport> allReports(ThrottleGroupStore& store) {
  Result<std::vector<ThrottleReport>> got = store.reports();
  INFO(got.status().toString());
  REQUIRE(got.isOk());
  return std::move(got).value();
}

// Moves the stored time of `node`'s report for `name` by `delta_ms`, as if it had been written
// that much later (negative: earlier), without waiting for the database's clock.
void shiftReport(Database& db, const std::string& name, const std::string& node, std::int64_t delta_ms) {
  Result<Statement> shift = db.prepare("UPDATE throttle_reports SET at = at + ? WHERE name = ? AND node = ?");
  REQUIRE(shift.isOk());
  shift->bindInt64(0, delta_ms).bindText(1, name).bindText(2, node);
  require(shift->run());
  REQUIRE(db.changes() == 1);
}

}  // namespace

TEST_CASE("A created throttle group reads back with its limits and members") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  const ThrottleGroupDefinition bureau = group("bureau-a", {"0001", "0002"});
  require(store.create(bureau));
  Result<ThrottleGroupDefinition> got = store.get("bureau-a");
  REQUIRE(got.isOk());
  CHECK(*got == bureau);
  CHECK(store.list().value() == std::vector<ThrottleGroupDefinition>{bureau});
}

TEST_CASE("Listing throttle groups orders them by name, each with its members ascending") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-b", {"0003", "0004"})));
  require(store.create(group("bureau-a", {"0001", "0002"})));
  require(store.create(group("bureau-c", {})));
  Result<std::vector<ThrottleGroupDefinition>> all = store.list();
  REQUIRE(all.isOk());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].name == "bureau-a");
  CHECK((*all)[0].members == std::vector<std::string>{"0001", "0002"});
  CHECK((*all)[1].name == "bureau-b");
  CHECK((*all)[1].members == std::vector<std::string>{"0003", "0004"});
  CHECK((*all)[2].name == "bureau-c");
  CHECK((*all)[2].members.empty());
}

TEST_CASE("A throttle group that does not exist is not found, by its name") {
  TempDir dir;
  auto db = openFresh(dir);
  Result<ThrottleGroupDefinition> got = ThrottleGroupStore(*db).get("bureau-x");
  REQUIRE_FALSE(got.isOk());
  CHECK(got.status().code() == Status::Code::kNotFound);
  CHECK(got.status().message() == "no throttle group named bureau-x");
}

TEST_CASE("Creating a throttle group under a name taken is refused naming it, the first group kept") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  const ThrottleGroupDefinition first = group("bureau-a", {"0001"});
  require(store.create(first));
  ThrottleGroupDefinition second = group("bureau-a", {"0002"});
  second.max_rate = 7;
  Status status = store.create(second);
  CHECK(status.code() == Status::Code::kConstraint);
  CHECK(status.message() == "throttle group bureau-a exists");
  CHECK(store.get("bureau-a").value() == first);
}

TEST_CASE("Creating a throttle group with a SPID of another group is refused naming that group, and writes nothing") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-b", {"0002"})));
  Status status = store.create(group("bureau-a", {"0001", "0002"}));
  CHECK(status.code() == Status::Code::kConstraint);
  CHECK(status.message() == "SPID 0002 is a member of throttle group bureau-b");
  CHECK(store.get("bureau-a").status().code() == Status::Code::kNotFound);
  // 0001, written before 0002 was refused, went with the rest.
  require(store.create(group("bureau-c", {"0001"})));
}

TEST_CASE("A refused create inside the caller's transaction leaves that transaction usable") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-b", {"0002"})));
  {
    Transaction txn(*db);
    require(txn.begin());
    require(store.create(group("bureau-a", {"0001"})));
    CHECK(store.create(group("bureau-c", {"0003", "0002"})).code() == Status::Code::kConstraint);
    require(store.create(group("bureau-d", {"0004"})));
    require(txn.commit());
  }
  Result<std::vector<ThrottleGroupDefinition>> all = store.list();
  REQUIRE(all.isOk());
  std::vector<std::string> names;
  for (const ThrottleGroupDefinition& each : *all) names.push_back(each.name);
  CHECK(names == std::vector<std::string>{"bureau-a", "bureau-b", "bureau-d"});
}

TEST_CASE("Replacing a throttle group changes its limits and members") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001", "0002"})));
  ThrottleGroupDefinition changed = group("bureau-a", {"0002", "0003"});
  changed.max_rate = 20;
  changed.max_pending = 0;
  changed.onset = {90, 0, 0};
  changed.abatement = {70, 0, 0};
  changed.min_abatement_ms = 500;
  changed.peer_loss_reduction_percent = 0;
  changed.updated_at = 2000;
  changed.updated_by = "bob";
  require(store.replace(changed));
  CHECK(store.get("bureau-a").value() == changed);
  // 0001 left the group: another may take it.
  require(store.create(group("bureau-b", {"0001"})));
}

TEST_CASE("Replacing a throttle group that does not exist is not found") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  Status status = store.replace(group("bureau-a", {"0001"}));
  CHECK(status.code() == Status::Code::kNotFound);
  CHECK(status.message() == "no throttle group named bureau-a");
  CHECK(store.list().value().empty());
}

TEST_CASE("Replacing a throttle group with a SPID of another group is refused and leaves it as it was") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  const ThrottleGroupDefinition before = group("bureau-a", {"0001"});
  require(store.create(before));
  require(store.create(group("bureau-b", {"0002"})));
  ThrottleGroupDefinition changed = group("bureau-a", {"0001", "0002"});
  changed.max_rate = 1;
  Status status = store.replace(changed);
  CHECK(status.code() == Status::Code::kConstraint);
  CHECK(status.message() == "SPID 0002 is a member of throttle group bureau-b");
  CHECK(store.get("bureau-a").value() == before);
}

TEST_CASE("Removing a throttle group removes its members and its reports") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001", "0002"})));
  require(store.create(group("bureau-b", {"0003"})));
  require(store.report("node-1", {report("bureau-a", 3, 1, false), report("bureau-b", 4, 2, true)}));
  require(store.remove("bureau-a"));
  CHECK(store.get("bureau-a").status().code() == Status::Code::kNotFound);
  const std::vector<ThrottleReport> left = allReports(store);
  REQUIRE(left.size() == 1);
  CHECK(left[0].group == "bureau-b");
  // Its SPIDs are in no group any more.
  require(store.create(group("bureau-c", {"0001", "0002"})));
}

TEST_CASE("Removing a throttle group that does not exist is not found") {
  TempDir dir;
  auto db = openFresh(dir);
  Status status = ThrottleGroupStore(*db).remove("bureau-a");
  CHECK(status.code() == Status::Code::kNotFound);
  CHECK(status.message() == "no throttle group named bureau-a");
}

TEST_CASE("A node's reports read back as written, aged by the database's clock") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001"})));
  require(store.create(group("bureau-b", {"0002"})));
  require(store.report("node-1", {report("bureau-a", 12.5, 3, true), report("bureau-b", 0.1, 0, false)}));
  const std::vector<ThrottleReport> got = allReports(store);
  REQUIRE(got.size() == 2);
  CHECK(got[0].group == "bureau-a");
  CHECK(got[0].node == "node-1");
  CHECK(got[0].rate == 12.5);
  CHECK(got[0].pending == 3);
  CHECK(got[0].wanting);
  CHECK(got[1].group == "bureau-b");
  CHECK(got[1].rate == 0.1);
  CHECK(got[1].pending == 0);
  CHECK_FALSE(got[1].wanting);
  for (const ThrottleReport& each : got) {
    CHECK(each.age_ms >= 0);
    CHECK(each.age_ms < 5000);
  }
}

TEST_CASE("A node's second report for a group replaces its first, and other nodes' stay") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001"})));
  require(store.report("node-1", {report("bureau-a", 1, 1, false)}));
  require(store.report("node-2", {report("bureau-a", 2, 2, false)}));
  require(store.report("node-1", {report("bureau-a", 9, 4, true)}));
  const std::vector<ThrottleReport> got = allReports(store);
  REQUIRE(got.size() == 2);
  CHECK(got[0].node == "node-1");
  CHECK(got[0].rate == 9);
  CHECK(got[0].pending == 4);
  CHECK(got[0].wanting);
  CHECK(got[1].node == "node-2");
  CHECK(got[1].rate == 2);
}

TEST_CASE("A second report replaces the first one's time as well") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001"})));
  require(store.report("node-1", {report("bureau-a", 1, 1, false)}));
  shiftReport(*db, "bureau-a", "node-1", -60000);
  require(store.report("node-1", {report("bureau-a", 1, 1, false)}));
  CHECK(allReports(store).at(0).age_ms < 5000);
}

TEST_CASE("A report for a throttle group that does not exist is skipped, the others written") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001"})));
  require(store.report("node-1", {report("bureau-gone", 5, 5, true), report("bureau-a", 1, 1, false)}));
  const std::vector<ThrottleReport> got = allReports(store);
  REQUIRE(got.size() == 1);
  CHECK(got[0].group == "bureau-a");
}

TEST_CASE("Two reports of one call for the same group are refused") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001"})));
  Status status = store.report("node-1", {report("bureau-a", 1, 1, false), report("bureau-a", 2, 2, false)});
  CHECK(status.code() == Status::Code::kInvalidArgument);
  CHECK(allReports(store).empty());
}

TEST_CASE("Forgetting a node removes its reports and no other node's") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001"})));
  require(store.create(group("bureau-b", {"0002"})));
  require(store.report("node-1", {report("bureau-a", 1, 1, false), report("bureau-b", 1, 1, false)}));
  require(store.report("node-2", {report("bureau-a", 2, 2, false)}));
  require(store.forgetNode("node-1"));
  const std::vector<ThrottleReport> got = allReports(store);
  REQUIRE(got.size() == 1);
  CHECK(got[0].node == "node-2");
}

TEST_CASE("A report's age grows with the database's clock since it was written") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001"})));
  require(store.report("node-1", {report("bureau-a", 1, 1, false)}));
  shiftReport(*db, "bureau-a", "node-1", -7000);  // written 7 s ago by the database's clock
  const std::int64_t age = allReports(store).at(0).age_ms;
  CHECK(age >= 7000);
  CHECK(age < 12000);
}

TEST_CASE("A report stamped ahead of the database's clock reads with age zero, never negative") {
  TempDir dir;
  auto db = openFresh(dir);
  ThrottleGroupStore store(*db);
  require(store.create(group("bureau-a", {"0001"})));
  require(store.report("node-1", {report("bureau-a", 1, 1, false)}));
  shiftReport(*db, "bureau-a", "node-1", 60000);
  CHECK(allReports(store).at(0).age_ms == 0);
}

// Two nodes on one PostgreSQL database: node b removes a group while node a reports for it.
TEST_CASE("A report racing the removal of its group by another node waits for it, then is skipped", "[postgres]") {
  TempDir dir;
  auto remover = openFresh(dir);
  auto reporter = openFresh(dir);
  require(ThrottleGroupStore(*remover).create(group("bureau-a", {"0001"})));
  Transaction removal(*remover);
  require(removal.begin());
  require(ThrottleGroupStore(*remover).remove("bureau-a"));
  auto reported = std::async(std::launch::async, [&] {
    return ThrottleGroupStore(*reporter).report("node-1", {report("bureau-a", 1, 1, false)});
  });
  // Bounded: PostgreSQL shows the report waiting for the group's row lock within moments.
  CHECK(someoneWaitsForALock(dir));
  require(removal.commit());
  require(reported.get());
  auto reader = openFresh(dir);
  ThrottleGroupStore store(*reader);
  CHECK(allReports(store).empty());
}
