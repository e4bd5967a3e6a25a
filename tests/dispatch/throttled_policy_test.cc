// ThrottledPolicy (DSR "Egress Throttle Lists"): priority holding, release order, nothing dropped.
#include "dispatch/throttled_policy.h"

#include <catch2/catch.hpp>

#include "tests/dispatch/test_epoch.h"

#include <chrono>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "dispatch/lrtm.h"

namespace npac::dispatch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::kT0;

// EPT limit of 10 with levels at 50/70/90 % (abatement 40/60/80 %), 1 s abatement time;
// EMR off so that only pending transactions drive the level.
ThrottleGroupConfig pendingLimit() {
  ThrottleGroupConfig c;
  c.pending.enabled = true;
  c.pending.maximum = 10;
  c.pending.levels = {{50, 40}, {70, 60}, {90, 80}};
  c.pending.abatement_time = seconds(1);
  return c;
}

std::unique_ptr<Policy> lrtmOver(int members) {
  auto p = std::make_unique<LrtmPolicy>();
  for (int i = 1; i <= members; ++i) {
    p->addMember(Member{static_cast<MemberId>(i), 1, 0, MemberState::kAvailable, 0});
    p->onMonitorSample(static_cast<MemberId>(i), MonitorKind::kHeartbeat, milliseconds(50),
                       kT0);
  }
  return p;
}

Submission message(MessageId id, std::uint8_t priority, TimePoint now) {
  Submission s;
  s.id = id;
  s.context.now = now;
  s.context.priority = priority;
  return s;
}

}  // namespace

TEST_CASE("A throttled policy reports its inner policy's figures", "[throttle][figures]") {
  ThrottledPolicy t(lrtmOver(2), pendingLimit());
  t.onSent(1, kT0);
  const std::vector<MemberFigures> figures = t.figures();
  REQUIRE(figures.size() == 2);
  CHECK(figures[0].member.active == 1);
  // 1 active × 50 ms, weight 1: Nw = 0.05 × 10000.
  CHECK(*figures[0].nw == Approx(500));
  CHECK(*figures[1].nw == Approx(0));
}

TEST_CASE("At level 0 every priority is sent at once", "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(3), pendingLimit());
  for (std::uint8_t p = 0; p <= 3; ++p) {
    const Admission a = t.submit(message(p, p, kT0));
    CHECK(a.kind == Admission::Kind::kSend);
    REQUIRE(a.member.has_value());
  }
  CHECK(t.group().ept() == 4);
  CHECK(t.name() == "throttle(lrtm)");
}

TEST_CASE("At level L messages with priority below L are held", "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(3), pendingLimit());
  MessageId id = 0;
  for (int i = 0; i < 6; ++i) REQUIRE(t.submit(message(++id, 3, kT0)).kind == Admission::Kind::kSend);
  REQUIRE(t.congestionLevel(kT0) == 1);  // 6 of 10 pending > 50 %
  CHECK(t.submit(message(++id, 0, kT0)).kind == Admission::Kind::kHeld);
  CHECK(t.submit(message(++id, 1, kT0)).kind == Admission::Kind::kSend);  // 7: not > 70 %
  CHECK(t.submit(message(++id, 1, kT0)).kind == Admission::Kind::kSend);  // 8 > 70 %: level 2
  CHECK(t.congestionLevel(kT0) == 2);
  CHECK(t.submit(message(++id, 1, kT0)).kind == Admission::Kind::kHeld);
  CHECK(t.submit(message(++id, 2, kT0)).kind == Admission::Kind::kSend);  // 9: not > 90 %
  CHECK(t.submit(message(++id, 2, kT0)).kind == Admission::Kind::kSend);  // 10 > 90 %: level 3
  CHECK(t.submit(message(++id, 2, kT0)).kind == Admission::Kind::kHeld);
  CHECK(t.submit(message(++id, 3, kT0)).kind == Admission::Kind::kSend);  // 3 is never held
  CHECK(t.heldCount() == 3);
}

TEST_CASE("Held messages come out highest priority first, FIFO within a priority",
          "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(2), pendingLimit());
  std::vector<std::pair<MemberId, int>> sent;
  for (int i = 0; i < 10; ++i) {
    const Admission a = t.submit(message(100 + i, 3, kT0));
    REQUIRE(a.kind == Admission::Kind::kSend);
    sent.push_back({*a.member, i});
  }
  REQUIRE(t.congestionLevel(kT0) == 3);
  const std::uint8_t priorities[] = {0, 2, 1, 0, 2, 1};
  for (MessageId id = 1; id <= 6; ++id) {
    REQUIRE(t.submit(message(id, priorities[id - 1], kT0)).kind == Admission::Kind::kHeld);
  }
  // Every transaction completes; the level steps down one per second.
  for (auto& [member, i] : sent) t.onCompleted(member, milliseconds(50), kT0 + milliseconds(1));
  CHECK(t.release(kT0 + milliseconds(500)).released.empty());  // level 3 until 1 s
  std::vector<MessageId> order;
  TimePoint now = kT0;
  for (int step = 0; step < 10 && t.heldCount() > 0; ++step) {
    now += seconds(1);
    const ReleaseBatch b = t.release(now);
    for (const Released& r : b.released) {
      order.push_back(r.id);
      t.onCompleted(r.member, milliseconds(50), now);
    }
  }
  CHECK(order == std::vector<MessageId>{2, 5, 3, 6, 1, 4});
  CHECK(t.heldCount() == 0);
}

TEST_CASE("Release stops when the released messages raise the level again",
          "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(2), pendingLimit());
  std::vector<MemberId> members;
  for (int i = 0; i < 6; ++i) members.push_back(*t.submit(message(100 + i, 3, kT0)).member);
  REQUIRE(t.congestionLevel(kT0) == 1);
  for (MessageId id = 1; id <= 8; ++id) REQUIRE(t.submit(message(id, 0, kT0)).kind == Admission::Kind::kHeld);
  for (MemberId m : members) t.onCompleted(m, milliseconds(50), kT0);
  const ReleaseBatch b = t.release(kT0 + seconds(1));
  // 6 released take EPT to 6 > 50 %: level 1 again, priority 0 waits.
  CHECK(b.released.size() == 6);
  CHECK(b.level == 1);
  CHECK(t.heldCount() == 2);
}

TEST_CASE("Release honours its maximum batch size", "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(2), pendingLimit());
  std::vector<MemberId> members;
  for (int i = 0; i < 6; ++i) members.push_back(*t.submit(message(100 + i, 3, kT0)).member);
  for (MessageId id = 1; id <= 3; ++id) t.submit(message(id, 0, kT0));
  for (MemberId m : members) t.onCompleted(m, milliseconds(50), kT0);
  const ReleaseBatch b = t.release(kT0 + seconds(1), 2);
  REQUIRE(b.released.size() == 2);
  CHECK(b.released[0].id == 1);
  CHECK(b.released[1].id == 2);
}

TEST_CASE("A new message never overtakes a held one of the same priority",
          "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(2), pendingLimit());
  std::vector<MemberId> members;
  for (int i = 0; i < 6; ++i) members.push_back(*t.submit(message(100 + i, 3, kT0)).member);
  REQUIRE(t.submit(message(1, 0, kT0)).kind == Admission::Kind::kHeld);
  for (MemberId m : members) t.onCompleted(m, milliseconds(50), kT0);
  REQUIRE(t.congestionLevel(kT0 + seconds(1)) == 0);
  // Level 0, but message 1 has not been released yet: message 2 queues behind it, while
  // a higher priority passes.
  CHECK(t.submit(message(2, 0, kT0 + seconds(1))).kind == Admission::Kind::kHeld);
  CHECK(t.submit(message(3, 1, kT0 + seconds(1))).kind == Admission::Kind::kSend);
  const ReleaseBatch b = t.release(kT0 + seconds(1));
  REQUIRE(b.released.size() == 2);
  CHECK(b.released[0].id == 1);
  CHECK(b.released[1].id == 2);
}

TEST_CASE("A message the wrapped policy cannot place is not held by the throttle",
          "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(1), pendingLimit());
  t.setState(1, MemberState::kProhibited);
  const Admission a = t.submit(message(1, 3, kT0));
  CHECK(a.kind == Admission::Kind::kNoMember);
  CHECK(a.reason == NoneReason::kNoneAvailable);
  CHECK(t.heldCount() == 0);
}

TEST_CASE("Release blocked by the wrapped policy keeps the message first in line",
          "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(1), pendingLimit());
  for (int i = 0; i < 6; ++i) t.submit(message(100 + i, 3, kT0));
  REQUIRE(t.submit(message(1, 0, kT0)).kind == Admission::Kind::kHeld);
  for (int i = 0; i < 6; ++i) t.onCompleted(1, milliseconds(50), kT0);
  t.setState(1, MemberState::kProhibited);
  ReleaseBatch b = t.release(kT0 + seconds(1));
  CHECK(b.released.empty());
  REQUIRE(b.blocked.has_value());
  CHECK(*b.blocked == NoneReason::kNoneAvailable);
  t.setState(1, MemberState::kAvailable);
  b = t.release(kT0 + seconds(1));
  REQUIRE(b.released.size() == 1);
  CHECK(b.released[0].id == 1);
}

TEST_CASE("A priority above 3 is refused without side effects", "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(1), pendingLimit());
  CHECK(t.submit(message(1, 4, kT0)).kind == Admission::Kind::kInvalidPriority);
  CHECK(t.group().ept() == 0);
  CHECK(t.heldCount() == 0);
}

TEST_CASE("Released messages are spread by LRTM because each counts as sent",
          "[throttle][gate]") {
  ThrottledPolicy t(lrtmOver(3), pendingLimit());
  std::vector<MemberId> members;
  for (int i = 0; i < 6; ++i) members.push_back(*t.submit(message(100 + i, 3, kT0)).member);
  for (MessageId id = 1; id <= 3; ++id) t.submit(message(id, 0, kT0));
  for (MemberId m : members) t.onCompleted(m, milliseconds(50), kT0);
  const ReleaseBatch b = t.release(kT0 + seconds(1));
  REQUIRE(b.released.size() == 3);
  std::set<MemberId> used;
  for (const Released& r : b.released) used.insert(r.member);
  CHECK(used.size() == 3);
}

TEST_CASE("The plain pick answers throttled for a priority that would be held",
          "[throttle][policy]") {
  ThrottledPolicy t(lrtmOver(2), pendingLimit());
  PickContext c;
  c.now = kT0;
  for (int i = 0; i < 6; ++i) {
    c.priority = 3;
    const PickResult r = t.pick(c);
    REQUIRE(r.ok());
    t.onSent(*r.member, kT0);
  }
  c.priority = 0;
  const PickResult held = t.pick(c);
  CHECK_FALSE(held.ok());
  CHECK(held.reason == NoneReason::kThrottled);
  c.priority = 1;
  CHECK(t.pick(c).ok());
  CHECK(t.heldCount() == 0);  // the plain path never queues
}

TEST_CASE("Responses sent on the plain path count in EMR, not EPT", "[throttle][policy]") {
  ThrottleGroupConfig c = pendingLimit();
  c.rate.enabled = true;
  c.rate.maximum = 5;
  c.rate.levels = {{100, 80}};
  ThrottledPolicy t(lrtmOver(1), c);
  for (int i = 0; i < 6; ++i) t.onMessageSent(1, kT0);
  CHECK(t.group().ept() == 0);
  CHECK(t.congestionLevel(kT0) == 1);  // 6 msg/s > 5
  CHECK(t.inner().members()[0].active == 0);
}

TEST_CASE("The throttle list's level throttles the group's traffic", "[throttle][list]") {
  ThrottleListConfig l;
  l.pending.enabled = true;
  l.pending.maximum = 12000;
  l.pending.levels = {{100, 80}};
  l.peers = {7};
  l.peers_start_connected = true;
  ThrottledPolicy t(lrtmOver(1), pendingLimit(), l);
  t.submit(message(1, 3, kT0));
  CHECK(t.reportPeerCounts(7, 0, 12000, kT0) == PeerUpdate::kApplied);
  CHECK(t.congestionLevel(kT0) == 1);  // 12,001 pending across the list
  CHECK(t.submit(message(2, 0, kT0)).kind == Admission::Kind::kHeld);
  CHECK(t.peerLost(9, kT0) == PeerUpdate::kUnknownPeer);
}

TEST_CASE("A message held by the egress rate leaves once the window has slid",
          "[throttle][gate][emr]") {
  ThrottleGroupConfig c;
  c.rate.enabled = true;
  c.rate.maximum = 10;  // msg/s over the default 1 s window
  c.rate.levels = {{100, 80}};
  ThrottledPolicy t(lrtmOver(2), c);
  for (MessageId id = 1; id <= 11; ++id) {
    REQUIRE(t.submit(message(id, 3, kT0 + milliseconds(id))).kind == Admission::Kind::kSend);
  }
  REQUIRE(t.congestionLevel(kT0 + milliseconds(20)) == 1);  // 11 msg/s > 10
  CHECK(t.submit(message(12, 0, kT0 + milliseconds(20))).kind == Admission::Kind::kHeld);
  CHECK(t.release(kT0 + milliseconds(900)).released.empty());  // all 11 still in window
  const ReleaseBatch b = t.release(kT0 + seconds(1));
  REQUIRE(b.released.size() == 1);
  CHECK(b.released[0].id == 12);
}

TEST_CASE("DSR example: a peer loss holds traffic the full list maximum would pass",
          "[throttle][list][dsr]") {
  // The DSR example's list scaled down 1,000-fold: 12 pending, 50 % per lost peer → 6.
  ThrottleListConfig l;
  l.pending.enabled = true;
  l.pending.maximum = 12;
  l.pending.levels = {{100, 80}};
  l.peers = {2};
  l.reduction_percent_per_lost_peer = 50;
  l.peers_start_connected = true;
  ThrottledPolicy t(lrtmOver(2), ThrottleGroupConfig{}, l);
  for (MessageId id = 1; id <= 7; ++id) {
    REQUIRE(t.submit(message(id, 3, kT0)).kind == Admission::Kind::kSend);
  }
  CHECK(t.congestionLevel(kT0) == 0);  // 7 of 12
  REQUIRE(t.peerLost(2, kT0) == PeerUpdate::kApplied);
  CHECK(t.list()->pendingMaximum() == 6);
  CHECK(t.congestionLevel(kT0) == 1);  // 7 of 6
  CHECK(t.submit(message(8, 0, kT0)).kind == Admission::Kind::kHeld);
  REQUIRE(t.peerRestored(2, kT0 + seconds(1)) == PeerUpdate::kApplied);
  const ReleaseBatch b = t.release(kT0 + seconds(1));  // 7 of 12 < 80 %: abated
  REQUIRE(b.released.size() == 1);
  CHECK(b.released[0].id == 8);
}

// Property: under random traffic, congestion and completions, every submitted message
// comes out exactly once (sent at submit or released), in submission order within its
// priority, and never before an earlier message of equal or higher priority still held.
TEST_CASE("Every submitted message comes out exactly once and in order",
          "[throttle][gate][property]") {
  for (std::uint64_t seed : {1u, 7u, 42u, 2026u}) {
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    ThrottleGroupConfig c = pendingLimit();
    c.pending.abatement_time = milliseconds(200);
    ThrottledPolicy t(lrtmOver(4), c);
    TimePoint now = kT0;
    std::map<MessageId, std::uint8_t> priority_of;
    std::array<std::deque<MessageId>, 4> held_mirror;  // what we expect to be held, FIFO
    std::array<std::vector<MessageId>, 4> submitted, out;
    std::set<MessageId> seen;
    std::deque<MemberId> pending;  // outstanding transactions by member
    auto leave = [&](MessageId id, MemberId member, bool from_held) {
      REQUIRE(seen.insert(id).second);  // exactly once
      const std::uint8_t p = priority_of[id];
      if (from_held) {
        REQUIRE(!held_mirror[p].empty());
        REQUIRE(held_mirror[p].front() == id);
        held_mirror[p].pop_front();
      }
      for (std::uint8_t q = p; q <= 3; ++q) {  // nothing earlier of ≥ priority still held
        if (!held_mirror[q].empty()) REQUIRE(held_mirror[q].front() > id);
      }
      out[p].push_back(id);
      pending.push_back(member);
    };
    constexpr MessageId kMessages = 3000;
    MessageId next = 1;
    std::size_t held_total = 0;
    while (next <= kMessages) {
      const auto op = rng() % 10;
      if (op < 6) {
        const auto p = static_cast<std::uint8_t>(rng() % 4);
        priority_of[next] = p;
        submitted[p].push_back(next);
        const Admission a = t.submit(message(next, p, now));
        REQUIRE(a.kind != Admission::Kind::kNoMember);
        if (a.kind == Admission::Kind::kSend) leave(next, *a.member, false);
        else {
          held_mirror[p].push_back(next);
          ++held_total;
        }
        ++next;
      } else if (op < 9) {
        if (!pending.empty()) {
          const std::size_t i = rng() % pending.size();
          t.onCompleted(pending[i], milliseconds(1 + rng() % 100), now);
          pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
        }
      } else {
        now += milliseconds(rng() % 300);
        for (const Released& r : t.release(now, 1 + rng() % 8).released) leave(r.id, r.member, true);
      }
    }
    // Drain: complete everything, let time pass, release until nothing is held.
    int rounds = 0;
    while (t.heldCount() > 0) {
      REQUIRE(++rounds < 100000);
      while (!pending.empty()) {
        t.onCompleted(pending.front(), milliseconds(10), now);
        pending.pop_front();
      }
      now += milliseconds(250);
      for (const Released& r : t.release(now).released) leave(r.id, r.member, true);
    }
    CHECK(seen.size() == kMessages);
    CHECK(held_total > kMessages / 10);  // the run really exercised holding
    for (int p = 0; p < 4; ++p) CHECK(out[p] == submitted[p]);
  }
}

}  // namespace npac::dispatch
