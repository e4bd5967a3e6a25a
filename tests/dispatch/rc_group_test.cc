// EAGLE "Weighted GTT Load Sharing": RC group arithmetic, Table 2-2 states, Table 2-3, and the
// smooth schedule.
#include <catch2/catch.hpp>

#include <map>

#include "dispatch/rc_group.h"
#include "dispatch/weighted.h"

using namespace npac::dispatch;

namespace {

Member entity(MemberId id, std::uint32_t rc, std::uint32_t weight, MemberState state) {
  return Member{id, weight, rc, state, 0};
}

}  // namespace

TEST_CASE("Required weight rounds 110 x 75 % down to 82 as the EAGLE example shows",
          "[rc_group][eagle]") {
  CHECK(requiredWeight(110, 75) == 82);
  CHECK(requiredWeight(40, 100) == 40);
  CHECK(requiredWeight(70, 50) == 35);
  CHECK(requiredWeight(50, 50) == 25);
  CHECK(requiredWeight(110, 50) == 55);
}

TEST_CASE("Required weight is never below 1 (Table 2-5: weight 10 at 1 % needs 1)",
          "[rc_group][eagle]") {
  CHECK(requiredWeight(10, 1) == 1);
  CHECK(requiredWeight(1, 1) == 1);
}

TEST_CASE("Table 2-2: a group is Available when its available weight reaches the required",
          "[rc_group][eagle]") {
  CHECK(rcGroupState(82, 82, false) == RcGroupState::kAvailable);
  CHECK(rcGroupState(81, 82, false) == RcGroupState::kThresholdProhibited);
}

TEST_CASE("Table 2-2: a group is Prohibited only when every entity is Prohibited",
          "[rc_group][eagle]") {
  RcGroup g(40, 50);
  g.add(entity(1, 40, 25, MemberState::kProhibited));
  g.add(entity(2, 40, 25, MemberState::kProhibited));
  CHECK(g.state() == RcGroupState::kProhibited);
  CHECK(g.availableWeight() == 0);
}

TEST_CASE("Table 2-2: one Congested entity and the rest Prohibited is Threshold-Prohibited",
          "[rc_group][eagle]") {
  RcGroup g(40, 50);
  g.add(entity(1, 40, 25, MemberState::kCongested));
  g.add(entity(2, 40, 25, MemberState::kProhibited));
  CHECK(g.availableWeight() == 0);  // a Congested entity counts 0
  CHECK(g.state() == RcGroupState::kThresholdProhibited);
}

TEST_CASE("A Congested entity makes a group Threshold-Prohibited for ordinary traffic",
          "[rc_group][eagle]") {
  // EAGLE "MSU Routing under Congestion": the group may go Available → TP.
  RcGroup g(10, 100);
  g.add(entity(1, 10, 30, MemberState::kAvailable));
  g.add(entity(2, 10, 10, MemberState::kAvailable));
  CHECK(g.state() == RcGroupState::kAvailable);
  g.setState(2, MemberState::kCongested);
  CHECK(g.state() == RcGroupState::kThresholdProhibited);
  CHECK(g.sequencedState() == RcGroupState::kAvailable);
}

TEST_CASE("EAGLE Table 2-3 in-service threshold example", "[rc_group][eagle]") {
  WeightedConfig cfg;
  cfg.threshold_percent_by_rc = {{10, 75}, {20, 100}, {30, 50}, {40, 50}};
  WeightedPolicy p(cfg);
  const std::vector<Member> rows = {
      entity('A', 10, 40, MemberState::kAvailable),  entity('B', 10, 30, MemberState::kProhibited),
      entity('C', 10, 10, MemberState::kProhibited), entity('D', 10, 30, MemberState::kAvailable),
      entity('E', 20, 30, MemberState::kAvailable),  entity('F', 20, 10, MemberState::kAvailable),
      entity('G', 30, 20, MemberState::kProhibited), entity('H', 30, 50, MemberState::kProhibited),
      entity('I', 40, 25, MemberState::kCongested),  entity('J', 40, 25, MemberState::kProhibited)};
  for (const Member& m : rows) p.addMember(m);
  const auto groups = p.groups();
  REQUIRE(groups.size() == 4);
  struct Row { std::uint32_t rc, weight, threshold, required, available; RcGroupState state; };
  const Row expected[] = {{10, 110, 75, 82, 70, RcGroupState::kThresholdProhibited},
                          {20, 40, 100, 40, 40, RcGroupState::kAvailable},
                          {30, 70, 50, 35, 0, RcGroupState::kProhibited},
                          {40, 50, 50, 25, 0, RcGroupState::kThresholdProhibited}};
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("RC " << expected[i].rc);
    CHECK(groups[i].relative_cost == expected[i].rc);
    CHECK(groups[i].group_weight == expected[i].weight);
    CHECK(groups[i].threshold_percent == expected[i].threshold);
    CHECK(groups[i].required_weight == expected[i].required);
    CHECK(groups[i].available_weight == expected[i].available);
    CHECK(groups[i].state == expected[i].state);
  }
  CHECK(groups[0].entity_available_weight == std::vector<std::uint32_t>{40, 0, 0, 30});
  CHECK(groups[3].entity_available_weight == std::vector<std::uint32_t>{0, 0});
}

TEST_CASE("The smooth interleave of weights 2,1,1 alternates the heavy member",
          "[rc_group]") {
  CHECK(smoothInterleave({2, 1, 1}) == std::vector<std::uint32_t>{0, 1, 2, 0});
  CHECK(smoothInterleave({1, 1, 1}) == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(smoothInterleave({0, 3}) == std::vector<std::uint32_t>{1, 1, 1});
}

TEST_CASE("Every window of W schedule picks gives each member exactly its weight",
          "[rc_group][distribution]") {
  RcGroup g(10, 1);
  const std::uint32_t weights[] = {40, 30, 10, 30};  // Table 2-1, W = 110
  for (MemberId i = 0; i < 4; ++i) g.add(entity(i, 10, weights[i], MemberState::kAvailable));
  std::vector<MemberId> seq;
  for (int i = 0; i < 3 * 110; ++i) seq.push_back(g.next(std::nullopt));
  for (std::size_t start = 0; start + 110 <= seq.size(); ++start) {
    std::map<MemberId, std::uint32_t> count;
    for (std::size_t k = start; k < start + 110; ++k) ++count[seq[k]];
    for (MemberId i = 0; i < 4; ++i) REQUIRE(count[i] == weights[i]);
  }
}

TEST_CASE("The schedule interleaves: no member gets more than its share plus one in any window",
          "[rc_group][distribution]") {
  RcGroup g(10, 1);
  const std::uint32_t weights[] = {99, 1, 50, 7, 13};
  std::uint32_t total = 0;
  for (MemberId i = 0; i < 5; ++i) {
    g.add(entity(i, 10, weights[i], MemberState::kAvailable));
    total += weights[i];
  }
  std::vector<MemberId> seq;
  for (std::uint32_t i = 0; i < 2 * total; ++i) seq.push_back(g.next(std::nullopt));
  for (std::size_t len : {2u, 5u, 17u, 60u}) {
    for (std::size_t start = 0; start + len <= seq.size(); ++start) {
      std::map<MemberId, std::uint32_t> count;
      for (std::size_t k = start; k < start + len; ++k) ++count[seq[k]];
      for (MemberId i = 0; i < 5; ++i) {
        const std::uint32_t ceil_share = static_cast<std::uint32_t>((len * weights[i] + total - 1) / total);
        INFO("member " << i << " window " << len << " at " << start);
        REQUIRE(count[i] <= ceil_share + 1);
      }
    }
  }
}
