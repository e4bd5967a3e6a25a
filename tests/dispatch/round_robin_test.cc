// Round robin (NANC 353): exact order, joins and leaves, avoid, fairness through churn.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include "dispatch/round_robin.h"

using namespace npac::dispatch;

namespace {

Member available(MemberId id) { return Member{id, 1, 0, MemberState::kAvailable, 0}; }

std::vector<MemberId> picks(RoundRobinPolicy& p, int n) {
  std::vector<MemberId> out;
  for (int i = 0; i < n; ++i) {
    PickResult r = p.pick({});
    REQUIRE(r.ok());
    out.push_back(*r.member);
  }
  return out;
}

}  // namespace

TEST_CASE("Round robin serves members in join order and wraps", "[round_robin]") {
  RoundRobinPolicy p;
  for (MemberId id : {1, 2, 3}) p.addMember(available(id));
  CHECK(picks(p, 7) == std::vector<MemberId>{1, 2, 3, 1, 2, 3, 1});
}

TEST_CASE("Round robin ignores load and weight", "[round_robin]") {
  RoundRobinPolicy p;
  p.addMember(Member{1, 99, 0, MemberState::kAvailable, 500});
  p.addMember(Member{2, 1, 0, MemberState::kAvailable, 0});
  for (int i = 0; i < 10; ++i) p.onSent(1, {});
  CHECK(picks(p, 4) == std::vector<MemberId>{1, 2, 1, 2});
}

TEST_CASE("Round robin with no members or none available says why", "[round_robin]") {
  RoundRobinPolicy p;
  CHECK(p.pick({}).reason == NoneReason::kNoMembers);
  p.addMember(Member{1, 1, 0, MemberState::kProhibited, 0});
  p.addMember(Member{2, 1, 0, MemberState::kCongested, 0});
  PickResult r = p.pick({});
  CHECK_FALSE(r.ok());
  CHECK(r.reason == NoneReason::kNoneAvailable);
}

TEST_CASE("A joining member is served after everyone waiting, before the last served",
          "[round_robin]") {
  RoundRobinPolicy p;
  for (MemberId id : {1, 2, 3}) p.addMember(available(id));
  CHECK(picks(p, 1) == std::vector<MemberId>{1});  // queue now 2 3 1
  p.addMember(available(4));                       // joins before 1: 2 3 4 1
  CHECK(p.rotation() == std::vector<MemberId>{2, 3, 4, 1});
  CHECK(picks(p, 8) == std::vector<MemberId>{2, 3, 4, 1, 2, 3, 4, 1});
}

TEST_CASE("A second association never makes the only one go twice in a row",
          "[round_robin]") {
  RoundRobinPolicy p;
  p.addMember(available(1));
  CHECK(picks(p, 2) == std::vector<MemberId>{1, 1});
  p.addMember(available(2));
  CHECK(picks(p, 4) == std::vector<MemberId>{2, 1, 2, 1});
}

TEST_CASE("A member that left and came back waits like any other even if it was served last",
          "[round_robin]") {
  RoundRobinPolicy p;
  p.addMember(available(1));
  CHECK(picks(p, 1) == std::vector<MemberId>{1});
  p.setState(1, MemberState::kProhibited);  // leaving forgets that 1 was served last
  p.setState(1, MemberState::kAvailable);   // 1 is now a waiting member
  p.addMember(available(2));                // joins behind 1, not before it
  CHECK(p.rotation() == std::vector<MemberId>{1, 2});
  CHECK(picks(p, 3) == std::vector<MemberId>{1, 2, 1});
}

TEST_CASE("A leaving member drops out without anyone being skipped", "[round_robin]") {
  RoundRobinPolicy p;
  for (MemberId id : {1, 2, 3, 4}) p.addMember(available(id));
  CHECK(picks(p, 2) == std::vector<MemberId>{1, 2});  // next is 3
  p.setState(3, MemberState::kProhibited);           // the head leaves
  CHECK(picks(p, 1) == std::vector<MemberId>{4});
  p.removeMember(1);                                 // a waiting member leaves
  CHECK(picks(p, 4) == std::vector<MemberId>{2, 4, 2, 4});
}

TEST_CASE("A member coming back from Congested rejoins the rotation", "[round_robin]") {
  RoundRobinPolicy p;
  for (MemberId id : {1, 2, 3}) p.addMember(available(id));
  p.setState(2, MemberState::kCongested);
  CHECK(picks(p, 3) == std::vector<MemberId>{1, 3, 1});
  p.setState(2, MemberState::kAvailable);  // queue 3 1 → 3 2 1
  CHECK(picks(p, 3) == std::vector<MemberId>{3, 2, 1});
}

TEST_CASE("Round robin gives the avoided member's turn away and keeps its place",
          "[round_robin]") {
  RoundRobinPolicy p;
  for (MemberId id : {1, 2, 3}) p.addMember(available(id));
  PickContext retry;
  retry.avoid = 1;
  CHECK(*p.pick(retry).member == 2);
  CHECK(picks(p, 5) == std::vector<MemberId>{1, 3, 2, 1, 3});
}

TEST_CASE("Round robin returns the avoided member when it is the only one", "[round_robin]") {
  RoundRobinPolicy p;
  p.addMember(available(7));
  PickContext retry;
  retry.avoid = 7;
  CHECK(*p.pick(retry).member == 7);
}

TEST_CASE("Round robin distributes 100,000 picks exactly evenly", "[round_robin]") {
  RoundRobinPolicy p;
  for (MemberId id = 1; id <= 8; ++id) p.addMember(available(id));
  std::map<MemberId, int> count;
  for (int i = 0; i < 100000; ++i) ++count[*p.pick({}).member];
  for (const auto& [id, n] : count) CHECK(n == 12500);
}

TEST_CASE("Round robin stays fair through random churn", "[round_robin][property]") {
  std::mt19937 rng(20260353);  // seeded: the run is reproducible
  RoundRobinPolicy p;
  constexpr MemberId kMembers = 12;
  for (MemberId id = 1; id <= kMembers; ++id) p.addMember(available(id));
  std::set<MemberId> up;
  for (MemberId id = 1; id <= kMembers; ++id) up.insert(id);
  // served_since[x][y]: times y was served since x was last served, while both stayed up.
  std::map<MemberId, std::map<MemberId, int>> served_since;
  std::optional<MemberId> previous;
  for (int step = 0; step < 50000; ++step) {
    if (rng() % 10 == 0) {  // churn: one member flips
      const MemberId id = 1 + rng() % kMembers;
      const bool going_up = up.count(id) == 0;
      p.setState(id, going_up ? MemberState::kAvailable : MemberState::kProhibited);
      if (going_up) up.insert(id); else up.erase(id);
      served_since.erase(id);
      for (auto& [x, row] : served_since) row.erase(id);
      continue;
    }
    PickResult r = p.pick({});
    if (up.empty()) {
      REQUIRE_FALSE(r.ok());
      continue;
    }
    REQUIRE(r.ok());
    const MemberId got = *r.member;
    REQUIRE(up.count(got) == 1);  // never a member out of the rotation
    if (up.size() > 1 && previous && up.count(*previous)) REQUIRE(got != *previous);
    // Between two services of any member that stayed up, nobody else that stayed up is
    // served twice.
    for (auto& [x, row] : served_since) {
      if (x != got && ++row[got] > 1) FAIL("member " << got << " served twice before " << x);
    }
    served_since[got].clear();
    previous = got;
  }
}
