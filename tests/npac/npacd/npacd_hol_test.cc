// npacd end to end: no head-of-line blocking across association functions (NANC 111). A
// provider binds association X for soa-management only, which never answers, and Y for
// notifications only, which answers. With congestion_window 1 and a long
// response_timeout, soa-management messages wait on X (sent, or queued behind its window)
// while notifications submitted after them are delivered on Y and acknowledged at once.
// A message whose function no association has says so: wait_reason
// "no-association-for-function" in GET /v1/messages/{id} (docs/OPERATIONS.md "Why a
// message waits"). Real npacd, real npac-soa-sim processes, loopback TCP.
#include "tests/npac/npacd/multi_provider_fixture.h"

using namespace npacd_test;

namespace {

constexpr int kNotifications = 5;

// npacd with provider 0001 bound twice: X (127.0.0.2, soa-management, silent) and Y
// (127.0.0.3, notifications, answering); congestion_window 1, response_timeout 10 min.
struct SplitProvider {
  NpacdProcess npacd;
  std::unique_ptr<SimRun> x, y;
  std::int64_t x_id = -1, y_id = -1;

  SplitProvider() {
    const fs::path key = npacd.provision("0001");
    REQUIRE(setTunable(npacd, "congestion_window", 1, "0001") == 200);
    REQUIRE(setTunable(npacd, "response_timeout", "10m", "0001") == 200);
    x = npacd.sim("0001", key, {"--from", "127.0.0.2", "--functions", "soa-management", "--silent", "1",
                                "--keep-running", "--duration", "40s"});
    REQUIRE(npacd.waitForAssociations(1));
    y = npacd.sim("0001", key, {"--from", "127.0.0.3", "--functions", "notifications", "--keep-running",
                                "--duration", "40s"});
    REQUIRE(npacd.waitForAssociations(2));
    x_id = associationFrom(npacd, "127.0.0.2");
    y_id = associationFrom(npacd, "127.0.0.3");
    REQUIRE(x_id > 0);
    REQUIRE(y_id > 0);
  }
  ~SplitProvider() {
    if (x && x->pid > 0) kill(x->pid, SIGTERM);
    if (y && y->pid > 0) kill(y->pid, SIGTERM);
  }

  std::vector<std::int64_t> submit(const std::string& function, const std::string& prefix, int count) {
    Json batch = Json::array();
    for (int i = 0; i < count; ++i) batch.push_back(messageFor("0001", function, label(prefix.c_str(), i)));
    std::vector<std::int64_t> ids = post(npacd, batch);
    REQUIRE(ids.size() == static_cast<std::size_t>(count));
    return ids;
  }

  // Waits (bounded) until every one of `ids` is acknowledged; checks each went out on Y.
  void expectAcknowledgedOnY(const std::vector<std::int64_t>& ids) {
    const bool all = eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 5s);
    INFO("npacd log:\n" << npacd.log());
    CHECK(all);
    for (std::int64_t id : ids) {
      const Json row = messageRow(npacd, id);
      INFO(row.dump());
      CHECK(row["state"] == "acknowledged");
      CHECK(row.value("association_id", std::int64_t{-1}) == y_id);
    }
  }
};

}  // namespace

TEST_CASE("notifications submitted after a soa-management message on a silent association are delivered at once") {
  SplitProvider p;
  const std::vector<std::int64_t> waiting = p.submit("soa-management", "soa-", 1);
  const std::vector<std::int64_t> notified = p.submit("notifications", "note-", kNotifications);
  p.expectAcknowledgedOnY(notified);
  const Json row = messageRow(p.npacd, waiting[0]);
  INFO(row.dump());
  CHECK(row["state"] == "sent");
  CHECK(row.value("association_id", std::int64_t{-1}) == p.x_id);
}

TEST_CASE("a soa-management message queued behind a congested association does not hold back later notifications") {
  SplitProvider p;
  // Two soa-management messages: the first fills X's window of 1, the second waits in
  // the queue ahead of the notifications.
  const std::vector<std::int64_t> waiting = p.submit("soa-management", "soa-", 2);
  const std::vector<std::int64_t> notified = p.submit("notifications", "note-", kNotifications);
  p.expectAcknowledgedOnY(notified);
  const Json first = messageRow(p.npacd, waiting[0]);
  const Json second = messageRow(p.npacd, waiting[1]);
  INFO(first.dump() << "\n" << second.dump());
  CHECK(first["state"] == "sent");
  CHECK(first.value("association_id", std::int64_t{-1}) == p.x_id);
  CHECK(second["state"] == "queued");
  CHECK(second.value("wait_reason", "") == "all-congested");
}

TEST_CASE("a queued message whose function no association has reports wait_reason no-association-for-function") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  auto y = npacd.sim("0001", key, {"--from", "127.0.0.3", "--functions", "notifications", "--keep-running",
                                   "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(1));
  const std::vector<std::int64_t> ids = post(npacd, Json::array({messageFor("0001", "soa-management", "orphan")}));
  REQUIRE(ids.size() == 1);
  Json row;
  const bool reported = eventually(
      [&] {
        row = messageRow(npacd, ids[0]);
        return row.contains("wait_reason");
      },
      5s);
  INFO(row.dump());
  CHECK(reported);
  CHECK(row["state"] == "queued");
  CHECK(row.value("wait_reason", "") == "no-association-for-function");
  kill(y->pid, SIGTERM);
}
