// One npacd per database, end to end: a second npacd started on the database of a live
// one, while that one has messages in flight, exits 2 naming the database and the
// running instance, and changes nothing — the messages stay in flight and are
// acknowledged under the invoke ids they were first sent with (db/instance_lock.h).
#include <sqlite3.h>

#include <map>
#include <set>

#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/npac/npacd/queue_rows.h"

using namespace npacd_test;

namespace {

struct RowProgress {
  std::string state;
  std::optional<std::int64_t> association_id;
  std::int64_t attempts = 0;
  std::optional<std::int64_t> sent_at;
  std::int64_t retransmission = 0;
  bool operator==(const RowProgress&) const = default;
};

// The queue's delivery progress as db/ reads it from the file (rows and their progress
// records), not through npacd.
std::map<std::int64_t, RowProgress> queueProgress(const fs::path& db) {
  std::map<std::int64_t, RowProgress> rows;
  for (const npac::db::QueuedMessage& m : npac::testing::foldedQueue(db)) {
    rows[m.id] = RowProgress{npac::db::toString(m.state), m.association_id, m.attempts, m.sent_at,
                             m.retransmission ? 1 : 0};
  }
  return rows;
}

bool waitForState(const NpacdProcess& npacd, const std::vector<std::int64_t>& ids, const std::string& state,
                  std::chrono::milliseconds limit) {
  return eventually(
      [&] {
        return std::all_of(ids.begin(), ids.end(), [&](std::int64_t id) { return npacd.messageState(id) == state; });
      },
      limit);
}

}  // namespace

TEST_CASE("a second npacd on a live instance's database exits 2 and leaves its messages in flight untouched") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  // The provider holds every answer 5 s: the messages stay "sent" meanwhile.
  constexpr int kMessages = 3;
  auto sim = npacd.sim("0001", key, {"--delay", "5s", "--expect", std::to_string(kMessages), "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(1));
  std::vector<std::int64_t> ids = npacd.submit("0001", "f", kMessages);
  REQUIRE(waitForState(npacd, ids, "sent", 4s));
  const auto before = queueProgress(npacd.db());
  REQUIRE(before.size() == static_cast<std::size_t>(kMessages));

  const fs::path second_log = npacd.dir() / "second.log";
  pid_t second = spawn({binDir() + "/npacd", "--db", npacd.db().string(), "--listen", "127.0.0.1:0", "--api",
                        "127.0.0.1:0", "--durability", "normal"},
                       second_log);
  CHECK(waitFor(second, 10s) == 2);
  const std::string refusal = slurp(second_log);
  INFO(refusal);
  CHECK(refusal.find("another npacd is using this database") != std::string::npos);
  CHECK(refusal.find(npacd.db().string()) != std::string::npos);
  const auto holder = slurp(npacd.db().string() + ".lock");
  const std::string holder_pid = holder.substr(0, holder.find('\n'));  // "pid=N"
  CHECK(refusal.find("pid " + holder_pid.substr(4)) != std::string::npos);
  CHECK(refusal.find("running since ") != std::string::npos);
  CHECK(std::count(refusal.begin(), refusal.end(), '\n') == 1);  // one line

  // Nothing requeued, re-attributed or counted again.
  CHECK(queueProgress(npacd.db()) == before);

  REQUIRE(sim->wait(30s) == 0);
  CHECK(waitForState(npacd, ids, "acknowledged", 5s));
  // Each message reached the provider once, under its first invoke id: no re-send.
  const Json& received = sim->result["received"];
  CHECK(received.size() == static_cast<std::size_t>(kMessages));
  std::set<std::int64_t> invoke_ids;
  for (const Json& r : received) {
    CHECK_FALSE(r["retransmission"].get<bool>());
    CHECK(r["answered"].get<bool>());
    invoke_ids.insert(r["invoke_id"].get<std::int64_t>());
  }
  CHECK(invoke_ids.size() == static_cast<std::size_t>(kMessages));
  for (const auto& [id, row] : queueProgress(npacd.db())) {
    INFO("message " << id);
    CHECK(row.state == "acknowledged");
    CHECK(row.attempts == 1);
    CHECK(row.association_id == before.at(id).association_id);
  }
}
