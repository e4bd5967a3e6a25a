// Weighted cost groups (EAGLE "Weighted GTT Load Sharing"): Tables 2-1, 2-4, 2-5 as
// policies, failover and return, exact distribution, the MSU key, routing under
// congestion, and random-churn properties.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "dispatch/weighted.h"

using namespace npac::dispatch;

namespace {

Member entity(MemberId id, std::uint32_t rc, std::uint32_t weight,
              MemberState state = MemberState::kAvailable) {
  return Member{id, weight, rc, state, 0};
}

std::map<MemberId, int> countPicks(Policy& p, int n, PickContext ctx = {}) {
  std::map<MemberId, int> count;
  for (int i = 0; i < n; ++i) {
    PickResult r = p.pick(ctx);
    REQUIRE(r.ok());
    ++count[*r.member];
  }
  return count;
}

// EAGLE Table 2-4: A–D at RC 10 (50 %), B Prohibited.
std::unique_ptr<WeightedPolicy> table24() {
  WeightedConfig cfg;
  cfg.threshold_percent_by_rc = {{10, 50}};
  auto owned = std::make_unique<WeightedPolicy>(cfg);
  owned->addMember(entity('A', 10, 40));
  owned->addMember(entity('B', 10, 30, MemberState::kProhibited));
  owned->addMember(entity('C', 10, 10));
  owned->addMember(entity('D', 10, 30));
  return owned;
}

// EAGLE Table 2-5: A–D at RC 10 (75 %), E–F at RC 20 (100 %), G at RC 30 (1 %).
std::unique_ptr<WeightedPolicy> table25() {
  WeightedConfig cfg;
  cfg.threshold_percent_by_rc = {{10, 75}, {20, 100}, {30, 1}};
  auto owned = std::make_unique<WeightedPolicy>(cfg);
  WeightedPolicy& p = *owned;
  p.addMember(entity('A', 10, 40));
  p.addMember(entity('B', 10, 30, MemberState::kProhibited));
  p.addMember(entity('C', 10, 10, MemberState::kProhibited));
  p.addMember(entity('D', 10, 30));
  p.addMember(entity('E', 20, 30));
  p.addMember(entity('F', 20, 10));
  p.addMember(entity('G', 30, 10));
  return owned;
}

}  // namespace

TEST_CASE("EAGLE Table 2-1: weights 40/30/10/30 give 36/27/9/28 % and exact picks",
          "[weighted][eagle]") {
  WeightedPolicy p;
  p.addMember(entity('A', 10, 40));
  p.addMember(entity('B', 10, 30));
  p.addMember(entity('C', 10, 10));
  p.addMember(entity('D', 10, 30));
  const auto groups = p.groups();
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].group_weight == 110);
  CHECK(groups[0].load_percent == std::vector<std::uint32_t>{36, 27, 9, 28});
  const auto count = countPicks(p, 110);
  CHECK(count.at('A') == 40);
  CHECK(count.at('B') == 30);
  CHECK(count.at('C') == 10);
  CHECK(count.at('D') == 30);
}

TEST_CASE("Weighted picks follow the exact smooth order A B D A B C D A B D A",
          "[weighted][sequence]") {
  WeightedPolicy p;
  p.addMember(entity('A', 10, 40));
  p.addMember(entity('B', 10, 30));
  p.addMember(entity('C', 10, 10));
  p.addMember(entity('D', 10, 30));
  std::string order;
  for (int i = 0; i < 11; ++i) order += static_cast<char>(*p.pick({}).member);
  CHECK(order == "ABDABCDABDA");
}

TEST_CASE("An unrelated status change does not restart the weighted cycle", "[weighted][sequence]") {
  WeightedPolicy p;
  p.addMember(entity('A', 10, 2));
  p.addMember(entity('B', 10, 1));
  p.addMember(entity('C', 10, 1));
  p.addMember(entity('Z', 20, 5));
  std::string order;
  order += static_cast<char>(*p.pick({}).member);
  order += static_cast<char>(*p.pick({}).member);
  p.setState('Z', MemberState::kCongested);  // another group: RC 10's cycle carries on
  order += static_cast<char>(*p.pick({}).member);
  order += static_cast<char>(*p.pick({}).member);
  CHECK(order == "ABCA");
}

TEST_CASE("EAGLE Table 2-4: load-shared group at 50 % with B Prohibited", "[weighted][eagle]") {
  std::unique_ptr<WeightedPolicy> owned = table24();
  WeightedPolicy& p = *owned;
  const auto g = p.groups().at(0);
  CHECK(g.required_weight == 55);
  CHECK(g.entity_available_weight == std::vector<std::uint32_t>{40, 0, 10, 30});
  CHECK(g.available_weight == 80);
  CHECK(g.state == RcGroupState::kAvailable);
  CHECK(p.status() == RcGroupState::kAvailable);
  CHECK(g.load_percent == std::vector<std::uint32_t>{50, 0, 13, 37});
  const auto count = countPicks(p, 80);
  CHECK(count.at('A') == 40);
  CHECK(count.count('B') == 0);
  CHECK(count.at('C') == 10);
  CHECK(count.at('D') == 30);
}

TEST_CASE("Weighted figures give each member its Current Load % of EAGLE Table 2-4",
          "[weighted][eagle][figures]") {
  std::unique_ptr<WeightedPolicy> owned = table24();
  WeightedPolicy& p = *owned;
  std::vector<std::uint32_t> load;
  std::vector<MemberId> ids;
  for (const MemberFigures& f : p.figures()) {
    ids.push_back(f.member.id);
    load.push_back(f.load_percent.value_or(999));
    CHECK_FALSE(f.nw.has_value());
  }
  CHECK(ids == std::vector<MemberId>{'A', 'B', 'C', 'D'});
  CHECK(load == std::vector<std::uint32_t>{50, 0, 13, 37});
}

TEST_CASE("EAGLE Table 2-4: a load-shared group below threshold discards all traffic",
          "[weighted][eagle]") {
  WeightedConfig cfg;
  cfg.threshold_percent_by_rc = {{10, 50}};
  WeightedPolicy p(cfg);
  p.addMember(entity('A', 10, 40, MemberState::kProhibited));
  p.addMember(entity('B', 10, 30, MemberState::kProhibited));
  p.addMember(entity('C', 10, 10));
  p.addMember(entity('D', 10, 30));  // 40 < 55
  PickResult r = p.pick({});
  CHECK_FALSE(r.ok());
  CHECK(r.reason == NoneReason::kThresholdProhibited);
}

TEST_CASE("EAGLE Table 2-5: combined group routes to RC 20 at 75/25 and G shows 100 %",
          "[weighted][eagle]") {
  auto owned = table25();
  WeightedPolicy& p = *owned;
  const auto groups = p.groups();
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].available_weight == 70);
  CHECK(groups[0].required_weight == 82);
  CHECK(groups[0].state == RcGroupState::kThresholdProhibited);
  CHECK(groups[0].load_percent == std::vector<std::uint32_t>{0, 0, 0, 0});
  CHECK(groups[1].state == RcGroupState::kAvailable);
  CHECK(groups[1].in_use);
  CHECK(groups[1].load_percent == std::vector<std::uint32_t>{75, 25});
  CHECK(groups[2].required_weight == 1);
  CHECK(groups[2].state == RcGroupState::kAvailable);
  CHECK(groups[2].load_percent == std::vector<std::uint32_t>{100});
  CHECK(p.status() == RcGroupState::kAvailable);
  const auto count = countPicks(p, 40);
  CHECK(count.size() == 2);
  CHECK(count.at('E') == 30);
  CHECK(count.at('F') == 10);
}

TEST_CASE("Traffic falls over to the next Available cost and returns as soon as it can",
          "[weighted][eagle]") {
  auto owned = table25();
  WeightedPolicy& p = *owned;
  p.setState('E', MemberState::kProhibited);  // RC 20: 10 < 40 → Threshold-Prohibited
  CHECK(countPicks(p, 5) == std::map<MemberId, int>{{'G', 5}});
  p.setState('E', MemberState::kAvailable);   // RC 20 back
  CHECK(countPicks(p, 4) == std::map<MemberId, int>{{'E', 3}, {'F', 1}});
  p.setState('B', MemberState::kAvailable);   // RC 10: 100 ≥ 82 → Available, lowest cost
  const auto count = countPicks(p, 100);
  CHECK(count == std::map<MemberId, int>{{'A', 40}, {'B', 30}, {'D', 30}});
}

TEST_CASE("Overall status is Threshold-Prohibited when no group is Available but one is TP",
          "[weighted][eagle]") {
  auto owned = table25();
  WeightedPolicy& p = *owned;
  p.setState('E', MemberState::kProhibited);
  p.setState('G', MemberState::kProhibited);
  CHECK(p.status() == RcGroupState::kThresholdProhibited);
  CHECK(p.pick({}).reason == NoneReason::kThresholdProhibited);
  for (MemberId id : {'A', 'D', 'F'}) p.setState(id, MemberState::kProhibited);
  CHECK(p.status() == RcGroupState::kProhibited);
  CHECK(p.pick({}).reason == NoneReason::kGroupProhibited);
}

TEST_CASE("An empty weighted policy answers no members", "[weighted]") {
  WeightedPolicy p;
  CHECK(p.pick({}).reason == NoneReason::kNoMembers);
  CHECK(p.status() == RcGroupState::kProhibited);
}

TEST_CASE("Weighted distributes 100,000 picks to exact shares", "[weighted][distribution]") {
  WeightedPolicy p;
  const std::uint32_t w[] = {40, 30, 10, 30};
  for (MemberId i = 0; i < 4; ++i) p.addMember(entity(i, 10, w[i]));
  const auto count = countPicks(p, 100000);  // 909 full cycles of 110 and 10 picks more
  for (MemberId i = 0; i < 4; ++i) {
    CHECK(count.at(i) >= static_cast<int>(909 * w[i]));
    CHECK(count.at(i) <= static_cast<int>(909 * w[i] + std::min<std::uint32_t>(w[i], 10)));
  }
}

TEST_CASE("Weighted over 110,000 picks gives exactly 40,000/30,000/10,000/30,000",
          "[weighted][distribution]") {
  WeightedPolicy p;
  const std::uint32_t w[] = {40, 30, 10, 30};
  for (MemberId i = 0; i < 4; ++i) p.addMember(entity(i, 10, w[i]));
  const auto count = countPicks(p, 110000);
  for (MemberId i = 0; i < 4; ++i) CHECK(count.at(i) == static_cast<int>(1000 * w[i]));
}

TEST_CASE("Weighted never picks a Congested member for ordinary traffic", "[weighted][eagle]") {
  WeightedPolicy p;
  p.addMember(entity(1, 10, 50));
  p.addMember(entity(2, 10, 50, MemberState::kCongested));
  CHECK(countPicks(p, 100) == std::map<MemberId, int>{{1, 100}});
}

TEST_CASE("A retry avoids the failed member and the cycle stays exact", "[weighted]") {
  WeightedPolicy p;
  p.addMember(entity(1, 10, 2));
  p.addMember(entity(2, 10, 1));
  p.addMember(entity(3, 10, 1));
  PickContext retry;
  retry.avoid = 1;
  CHECK(*p.pick(retry).member != 1);
  const auto count = countPicks(p, 3);  // rest of the cycle of 4
  int ones = count.count(1) ? count.at(1) : 0;
  CHECK(ones == 2);
}

TEST_CASE("A retry goes to the next cost when the group has nobody else", "[weighted]") {
  WeightedPolicy p;
  p.addMember(entity(1, 10, 5));
  p.addMember(entity(2, 20, 5));
  PickContext retry;
  retry.avoid = 1;
  CHECK(*p.pick(retry).member == 2);
  CHECK(*p.pick({}).member == 1);
}

TEST_CASE("An MSU key maps to the same member on every pick", "[weighted][key]") {
  WeightedPolicy p;
  for (MemberId i = 1; i <= 5; ++i) p.addMember(entity(i, 10, 10 * i));
  for (std::uint64_t key = 0; key < 200; ++key) {
    PickContext ctx;
    ctx.key = key;
    ctx.sequenced = true;
    const MemberId first = *p.pick(ctx).member;
    for (int k = 0; k < 5; ++k) REQUIRE(*p.pick(ctx).member == first);
  }
}

TEST_CASE("When a member goes down only its keys move, spread over the rest, and return",
          "[weighted][key]") {
  WeightedPolicy p;
  for (MemberId i = 1; i <= 5; ++i) p.addMember(entity(i, 10, 20));
  auto mapping = [&p] {
    std::vector<MemberId> out;
    for (std::uint64_t key = 0; key < 20000; ++key) {
      PickContext ctx;
      ctx.key = key * 7919;
      ctx.sequenced = true;
      out.push_back(*p.pick(ctx).member);
    }
    return out;
  };
  const auto before = mapping();
  p.setState(3, MemberState::kProhibited);
  const auto during = mapping();
  std::map<MemberId, int> moved_to;
  for (std::size_t k = 0; k < before.size(); ++k) {
    if (before[k] != 3) {
      REQUIRE(during[k] == before[k]);
    } else {
      REQUIRE(during[k] != 3);
      ++moved_to[during[k]];
    }
  }
  CHECK(moved_to.size() == 4);  // spread over every survivor
  for (const auto& [id, n] : moved_to) CHECK(n > 500);  // ~1000 each of ~4000
  p.setState(3, MemberState::kAvailable);
  CHECK(mapping() == before);
}

TEST_CASE("A status change in another RC group does not move a key", "[weighted][key]") {
  WeightedPolicy p;
  for (MemberId i = 1; i <= 4; ++i) p.addMember(entity(i, 10, 10 * i));
  for (MemberId i = 11; i <= 13; ++i) p.addMember(entity(i, 20, 30));
  auto mapping = [&p] {
    std::vector<MemberId> out;
    for (std::uint64_t key = 0; key < 2000; ++key) {
      PickContext ctx;
      ctx.key = key;
      ctx.sequenced = true;
      out.push_back(*p.pick(ctx).member);
    }
    return out;
  };
  const auto before = mapping();
  for (MemberId k : before) REQUIRE(k <= 4);  // RC 10 carries every key
  p.setState(12, MemberState::kProhibited);
  p.setState(13, MemberState::kCongested);
  p.setWeight(11, 5);
  CHECK(mapping() == before);
}

TEST_CASE("Sequenced traffic stays on a Congested primary while other keyed traffic moves",
          "[weighted][eagle][key]") {
  WeightedPolicy p;
  for (MemberId i = 1; i <= 4; ++i) p.addMember(entity(i, 10, 25));
  std::uint64_t key = 0;
  PickContext seq;
  seq.sequenced = true;
  for (;; ++key) {  // find a key whose primary is member 2
    seq.key = key;
    if (*p.pick(seq).member == 2) break;
  }
  p.setState(2, MemberState::kCongested);
  CHECK(*p.pick(seq).member == 2);
  PickContext plain;
  plain.key = key;
  CHECK(*p.pick(plain).member != 2);
  p.setState(2, MemberState::kProhibited);  // prohibited: an alternate is acceptable
  CHECK(*p.pick(seq).member != 2);
}

TEST_CASE("Table 2-3 RC 40: sequenced traffic may reach Congested I in a TP group",
          "[weighted][eagle][key]") {
  WeightedConfig cfg;
  cfg.threshold_percent_by_rc = {{40, 50}};
  WeightedPolicy p(cfg);
  p.addMember(entity('I', 40, 25, MemberState::kCongested));
  p.addMember(entity('J', 40, 25, MemberState::kProhibited));
  CHECK(p.groups()[0].state == RcGroupState::kThresholdProhibited);
  CHECK(p.pick({}).reason == NoneReason::kThresholdProhibited);
  PickContext seq;
  seq.sequenced = true;
  seq.key = 12345;
  CHECK(*p.pick(seq).member == 'I');
}

TEST_CASE("Random churn: never Prohibited, never Congested unless sequenced, keys stay put",
          "[weighted][property]") {
  std::mt19937_64 rng(0x000E461E);  // seeded: reproducible
  WeightedPolicy p;
  constexpr MemberId kMembers = 10;
  std::map<MemberId, MemberState> state;
  for (MemberId i = 1; i <= kMembers; ++i) {
    p.addMember(entity(i, 10, 1 + static_cast<std::uint32_t>(rng() % 99)));
    state[i] = MemberState::kAvailable;
  }
  std::vector<std::uint64_t> keys;
  for (int k = 0; k < 300; ++k) keys.push_back(rng());
  auto mapping = [&] {
    std::vector<std::optional<MemberId>> out;
    for (std::uint64_t key : keys) {
      PickContext ctx;
      ctx.key = key;
      ctx.sequenced = true;
      out.push_back(p.pick(ctx).member);
    }
    return out;
  };
  auto last = mapping();
  for (int step = 0; step < 400; ++step) {
    const MemberId x = 1 + static_cast<MemberId>(rng() % kMembers);
    const MemberState s = static_cast<MemberState>(rng() % 3);
    p.setState(x, s);
    state[x] = s;
    for (int i = 0; i < 50; ++i) {
      PickContext ctx;
      if (rng() % 2) ctx.key = rng();
      ctx.sequenced = ctx.key && rng() % 2;
      PickResult r = p.pick(ctx);
      if (!r.ok()) continue;
      REQUIRE(state[*r.member] != MemberState::kProhibited);
      if (!ctx.sequenced) REQUIRE(state[*r.member] == MemberState::kAvailable);
    }
    const auto now = mapping();
    for (std::size_t k = 0; k < keys.size(); ++k) {
      if (now[k] != last[k] && last[k] && now[k]) {
        INFO("key " << k << " moved " << *last[k] << " → " << *now[k] << " when " << x << " changed");
        REQUIRE((*last[k] == x || *now[k] == x));
      }
    }
    last = now;
  }
}

TEST_CASE("With nearly every member down, keys still land on the survivors", "[weighted][key]") {
  WeightedPolicy p;
  for (MemberId i = 1; i <= 200; ++i) p.addMember(entity(i, 10, 1, MemberState::kProhibited));
  p.setState(7, MemberState::kAvailable);
  p.setState(150, MemberState::kAvailable);
  std::map<MemberId, int> seen;
  for (std::uint64_t key = 0; key < 5000; ++key) {
    PickContext ctx;
    ctx.key = key;
    ctx.sequenced = key % 2 == 0;
    PickResult r = p.pick(ctx);
    REQUIRE(r.ok());
    REQUIRE((*r.member == 7 || *r.member == 150));
    ++seen[*r.member];
  }
  CHECK(seen.size() == 2);
}
