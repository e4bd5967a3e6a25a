// ThrottleGroups on a manual clock: two and three npacd nodes of one egress throttle list
// (DSR "Egress Throttle Lists"), their count exchange played by handing each node's
// localReports() to the others with an age, as the database would (throttle_exchange.h).
// The seed's figures, lost and restored peers, stale reports, and the shares the nodes
// converge on while each has more to send than the group allows.
#include "npac/npacd/core/throttle_groups.h"

#include <catch2/catch.hpp>

#include <deque>
#include <memory>
#include <vector>

namespace {

using namespace npac;
using namespace npac::npacd;
using namespace std::chrono_literals;

// The DSR guide's example list: 10,000 msg/s, 12,000 pending, 50 % per lost connection.
db::ThrottleGroupDefinition seedGroup() {
  db::ThrottleGroupDefinition g;
  g.name = "bureau";
  g.members = {"0001", "0002", "0003"};
  g.max_rate = 10000;
  g.max_pending = 12000;
  g.peer_loss_reduction_percent = 50;
  return g;
}

// Nodes sharing one clock; exchange() is one database round: every node writes its
// report, then each reads the others' (age 0 — written just now).
struct Nodes {
  npac::common::ManualTimeSource clock;
  std::vector<std::unique_ptr<ThrottleGroups>> nodes;
  std::vector<bool> cut;  // this node neither writes nor reads (its link is lost)
  struct Row {
    db::ThrottleReport report;
    std::int64_t written_ms = 0;  // the database's clock when written
  };
  std::vector<Row> table;  // what the database holds

  explicit Nodes(std::size_t n, const db::ThrottleGroupDefinition& group = seedGroup()) {
    for (std::size_t i = 0; i < n; ++i) {
      nodes.push_back(std::make_unique<ThrottleGroups>(clock, std::string(1, static_cast<char>('a' + i))));
      nodes.back()->apply({group});
      cut.push_back(false);
    }
  }
  ThrottleGroup& group(std::size_t node) { return *nodes[node]->find("bureau"); }
  ThrottleGroup::View view(std::size_t node) { return group(node).view(clock.now()); }
  void exchange() {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (cut[i]) continue;
      for (const db::ThrottleReport& r : nodes[i]->localReports(clock.now())) {
        std::erase_if(table, [&](const Row& t) { return t.report.node == r.node && t.report.group == r.group; });
        table.push_back({r, clock.wallMs()});
      }
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (cut[i]) continue;
      std::vector<db::ThrottleReport> read;
      for (const Row& row : table) {
        read.push_back(row.report);
        read.back().age_ms = clock.wallMs() - row.written_ms;
      }
      nodes[i]->applyReports(read, clock.now());
    }
  }
};

}  // namespace

TEST_CASE("Seed example on two nodes: the link cut, each node's maxima fall to 5,000 and 6,000 and come back") {
  Nodes n(2);
  n.exchange();
  for (std::size_t node : {0u, 1u}) {
    const auto v = n.view(node);
    CHECK(v.max_rate == 10000);
    CHECK(v.max_pending == 12000);
    CHECK(v.unreachable.empty());
    REQUIRE(v.nodes.size() == 2);
  }
  n.cut[1] = true;  // node b paused: it writes nothing, reads nothing
  for (int step = 0; step < 6; ++step) {  // 1.5 s of exchanges: a's view of b is still fresh
    n.clock.advance(kReportPeriod);
    n.exchange();
  }
  CHECK(n.view(0).max_rate == 10000);
  n.clock.advance(kReportPeriod);
  n.exchange();  // 1.75 s: past kStaleReport
  auto a = n.view(0);
  CHECK(a.max_rate == 5000);
  CHECK(a.max_pending == 6000);
  CHECK(a.unreachable == std::vector<std::string>{"b"});
  CHECK(a.rate_share == 5000);
  CHECK(a.pending_share == 6000);
  // b, which reads nothing either, sees a's report age the same way.
  auto b = n.view(1);
  CHECK(b.max_rate == 5000);
  CHECK(b.unreachable == std::vector<std::string>{"a"});
  // The link back: both return to the full maxima at the next exchange.
  n.cut[1] = false;
  n.clock.advance(kReportPeriod);
  n.exchange();
  CHECK(n.view(0).max_rate == 10000);
  CHECK(n.view(0).max_pending == 12000);
  CHECK(n.view(1).max_rate == 10000);
  CHECK(n.view(0).unreachable.empty());
}

TEST_CASE("Three nodes: one peer lost leaves half the maxima, two lost leave none at 50 %") {
  Nodes n(3);
  n.exchange();
  CHECK(n.view(0).max_rate == 10000);
  CHECK(n.view(0).nodes.size() == 3);
  n.cut[2] = true;
  n.clock.advance(2s);
  n.exchange();
  CHECK(n.view(0).max_rate == 5000);
  CHECK(n.view(0).max_pending == 6000);
  CHECK(n.view(0).unreachable == std::vector<std::string>{"c"});
  n.cut[1] = true;
  n.clock.advance(2s);
  n.exchange();
  CHECK(n.view(0).max_rate == 0);
  CHECK(n.view(0).max_pending == 0);
  CHECK(n.view(0).unreachable.size() == 2);
  CHECK(n.group(0).mayAdmit(n.clock.now()) > 0);  // nothing may leave: held, not dropped
}

TEST_CASE("Three nodes at 25 % per lost peer keep 75 % with one lost and 50 % with two") {
  db::ThrottleGroupDefinition g = seedGroup();
  g.peer_loss_reduction_percent = 25;
  Nodes n(3, g);
  n.exchange();
  n.cut[2] = true;
  n.clock.advance(2s);
  n.exchange();
  CHECK(n.view(0).max_rate == 7500);
  n.cut[1] = true;
  n.clock.advance(2s);
  n.exchange();
  CHECK(n.view(0).max_rate == 5000);
  CHECK(n.view(0).max_pending == 6000);
}

TEST_CASE("A peer's report older than the stale bound is ignored in the aggregate") {
  Nodes n(2);
  for (int i = 0; i < 40; ++i) {  // b sends 40 messages: its report says so
    REQUIRE(n.group(1).mayAdmit(n.clock.now()) == 0);
    n.group(1).onSent("0001", 1 + i, n.clock.now());
  }
  n.exchange();
  CHECK(n.view(0).rate == 40);
  CHECK(n.view(0).pending == 40);
  // The same report read again 1.6 s later (b wrote nothing since): stale, not counted.
  n.cut[1] = true;
  n.clock.advance(1600ms);
  n.exchange();
  const auto v = n.view(0);
  CHECK(v.rate == 0);
  CHECK(v.pending == 0);
  REQUIRE(v.nodes.size() == 2);
  CHECK_FALSE(v.nodes[1].counted);
  CHECK(v.nodes[1].age_seconds == Approx(1.6));
}

TEST_CASE("A node whose report vanished left the list and no longer reduces the maxima") {
  Nodes n(2);
  n.exchange();
  n.cut[1] = true;
  n.clock.advance(2s);
  n.exchange();
  REQUIRE(n.view(0).max_rate == 5000);
  std::erase_if(n.table, [](const Nodes::Row& r) { return r.report.node == "b"; });  // b stopped cleanly
  n.exchange();
  CHECK(n.view(0).max_rate == 10000);
  CHECK(n.view(0).nodes.size() == 1);
}

TEST_CASE("A report an hour old is a node that left") {
  Nodes n(2);
  n.exchange();
  n.cut[1] = true;
  n.clock.advance(kForgetPeer + 1s);
  n.exchange();
  CHECK(n.view(0).max_rate == 10000);
  CHECK(n.view(0).nodes.size() == 1);
}

TEST_CASE("A fourth node's counts are not taken into a list of three") {
  Nodes n(4);
  n.exchange();
  CHECK(n.view(0).nodes.size() == 3);
}

TEST_CASE("Changing a group's limits keeps its counts and peers") {
  Nodes n(2);
  n.exchange();
  for (int i = 0; i < 10; ++i) n.group(0).onSent("0001", 0, n.clock.now());
  db::ThrottleGroupDefinition g = seedGroup();
  g.max_rate = 20000;
  n.nodes[0]->apply({g});
  const auto v = n.view(0);
  CHECK(v.max_rate == 20000);
  CHECK(v.nodes.size() == 2);  // b still known, still reachable
  CHECK(v.unreachable.empty());
  CHECK(v.nodes[0].rate == 10);
  CHECK(v.admitted == 10);
}

TEST_CASE("A removed group no longer holds its members") {
  Nodes n(1);
  CHECK(n.nodes[0]->groupOf("0002") != nullptr);
  CHECK(n.nodes[0]->groupOf("0009") == nullptr);
  n.nodes[0]->apply({});
  CHECK(n.nodes[0]->groupOf("0002") == nullptr);
}

TEST_CASE("A group's onset_1 and abatement_1 set where level 1 starts and ends, held min_abatement_time") {
  db::ThrottleGroupDefinition g = seedGroup();
  g.max_rate = 0;
  g.max_pending = 100;
  g.onset = {50, 0, 0};
  g.abatement = {30, 0, 0};
  g.min_abatement_ms = 5000;
  Nodes n(1, g);
  ThrottleGroup& group = n.group(0);
  group.notePending("0001", 50);
  CHECK(group.mayAdmit(n.clock.now()) == 0);  // 50 % is not above onset_1 50 %
  group.notePending("0001", 51);
  CHECK(group.mayAdmit(n.clock.now()) == 1);  // above: level 1, held
  group.notePending("0001", 29);
  n.clock.advance(4900ms);
  CHECK(group.mayAdmit(n.clock.now()) == 1);  // below abatement_1, but not 5 s yet
  n.clock.advance(100ms);
  CHECK(group.mayAdmit(n.clock.now()) == 0);
  CHECK(n.view(0).level == 0);
}

TEST_CASE("A group's level 2 starts above onset_2") {
  db::ThrottleGroupDefinition g = seedGroup();
  g.max_rate = 0;
  g.max_pending = 100;
  g.onset = {50, 80, 0};
  g.abatement = {30, 60, 0};
  Nodes n(1, g);
  n.group(0).notePending("0001", 81);
  CHECK(n.group(0).mayAdmit(n.clock.now()) == 2);
  CHECK(n.view(0).level == 2);
}

namespace {

// Two or three nodes, each with more to send than the group allows, offering a message
// every millisecond; the exchange every kReportPeriod. Returns the messages sent by all
// nodes in each whole second.
std::vector<std::size_t> offeredLoad(Nodes& n, std::chrono::seconds length) {
  std::vector<std::size_t> per_second;
  std::size_t in_second = 0;
  const auto start = n.clock.now();
  while (n.clock.now() - start < length) {
    for (std::size_t node = 0; node < n.nodes.size(); ++node) {
      if (n.cut[node] && node != 0) continue;  // a paused node sends nothing either
      ThrottleGroup& g = n.group(node);
      if (g.mayAdmit(n.clock.now()) == 0) {
        g.onSent("0001", 0, n.clock.now());
        ++in_second;
      }
    }
    n.clock.advance(1ms);
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(n.clock.now() - start).count();
    if (elapsed % kReportPeriod.count() == 0) n.exchange();
    if (elapsed % 1000 == 0) {
      per_second.push_back(in_second);
      in_second = 0;
    }
  }
  return per_second;
}

}  // namespace

TEST_CASE("Two nodes that both have more to send keep their sum under max_rate and share it") {
  db::ThrottleGroupDefinition g = seedGroup();
  g.max_rate = 500;
  g.max_pending = 0;
  Nodes n(2, g);
  n.exchange();
  const auto per_second = offeredLoad(n, 20s);
  // Over each 10 s window the sum stays within max_rate (+5 %); after the first second's
  // start-up, every second too.
  for (std::size_t s = 0; s + 10 <= per_second.size(); ++s) {
    std::size_t sum = 0;
    for (std::size_t i = s; i < s + 10; ++i) sum += per_second[i];
    CHECK(sum <= 500 * 10 * 105 / 100);
    CHECK(sum >= 500 * 10 * 70 / 100);  // and the group is used, not starved
  }
  for (std::size_t s = 2; s < per_second.size(); ++s) CHECK(per_second[s] <= 525);
  // Each node had a fair part of it.
  CHECK(n.view(0).admitted > n.view(1).admitted / 2);
  CHECK(n.view(1).admitted > n.view(0).admitted / 2);
}

TEST_CASE("A node cut off keeps to its reduced maximum, and the two share again once the link is back") {
  db::ThrottleGroupDefinition g = seedGroup();
  g.max_rate = 1000;
  g.max_pending = 0;
  Nodes n(2, g);
  n.exchange();
  offeredLoad(n, 5s);
  n.cut[1] = true;
  const auto cut = offeredLoad(n, 10s);
  // Within kStaleReport plus the 1 s rate window node a alone is at most its reduced 500/s.
  for (std::size_t s = 3; s < cut.size(); ++s) CHECK(cut[s] <= 500 * 105 / 100);
  n.cut[1] = false;
  const auto back = offeredLoad(n, 10s);
  std::size_t sum = 0;
  for (std::size_t s = 3; s < back.size(); ++s) {
    CHECK(back[s] <= 1000 * 105 / 100);
    sum += back[s];
  }
  CHECK(sum >= 7 * 1000 * 70 / 100);
}
