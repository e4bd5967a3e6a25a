// Weighted cost groups: EAGLE "Weighted GTT Load Sharing" as an egress policy.
//
// Members are grouped by relative cost into RC groups (dispatch/rc_group.h). Traffic goes
// to the lowest-cost RC group that is Available (Table 2-2); when it is not, to the next
// cost that is Available; and back to the lower cost as soon as it is Available again
// (Table 2-5 text) — the choice is recomputed on every status change, never remembered.
// One group is a load-shared set; several are a combined dominant/load-shared set.
//
// Within the chosen group:
//  * traffic without a key follows the group's smooth schedule: exact weights over every
//    cycle of W picks (W = group available weight), interleaved;
//  * traffic with an MSU key maps to one member through the group's slot table and stays
//    there until that member's status changes;
//  * EAGLE "MSU Routing under Congestion": a keyed, sequenced PDU sees Congested members
//    as usable (it stays on a Congested primary, and the group may carry it while
//    Threshold-Prohibited only because of congestion); every other PDU sees a Congested
//    member as unavailable (0 available weight).
// `avoid` is honoured when another usable member exists in the chosen group, otherwise in
// the next Available group; only when there is none is the avoided member returned.
//
// Weights outside 1–99 are clamped; thresholds outside 1–100 % likewise (validation with
// error messages is the caller's job, see npacctl plan and the tunables layer).
//
// Cost: pick O(1). A status change costs O(n) at once (group figures and states) and
// O(W log n + S) at the first pick of that group after it (schedule and slot tables
// rebuilt lazily), W the group weight and S its slot count.
// Threading: none (one strand), see dispatch/policy.h.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "dispatch/policy.h"
#include "dispatch/rc_group.h"

namespace npac::dispatch {

struct WeightedConfig {
  // In-service threshold per relative cost, percent 1–100; unlisted costs use the default.
  std::map<std::uint32_t, std::uint32_t> threshold_percent_by_rc;
  std::uint32_t default_threshold_percent = kDefaultThresholdPercent;
};

// One RC group as the traffic table shows it (EAGLE Tables 2-3, 2-4, 2-5).
struct RcGroupView {
  std::uint32_t relative_cost = 0;
  std::uint32_t group_weight = 0;
  std::uint32_t threshold_percent = 0;
  std::uint32_t required_weight = 0;
  std::uint32_t available_weight = 0;
  RcGroupState state = RcGroupState::kProhibited;
  bool in_use = false;  // the group non-keyed traffic goes to now
  std::vector<Member> members;
  std::vector<std::uint32_t> entity_available_weight;
  // "Current Load %": the member's share of its group's traffic when the group is
  // Available, 0 otherwise (Table 2-5: G shows 100 % beside the group in use).
  std::vector<std::uint32_t> load_percent;
};

class WeightedPolicy final : public Policy {
 public:
  explicit WeightedPolicy(WeightedConfig config = {});

  std::string_view name() const override { return "weighted"; }

  PickResult pick(const PickContext& context) override;

  void addMember(const Member& member) override;
  void removeMember(MemberId id) override;
  void setState(MemberId id, MemberState state) override;
  void setWeight(MemberId id, std::uint32_t weight) override;
  void onSent(MemberId id, TimePoint now) override;
  void onCompleted(MemberId id, Duration latency, TimePoint now) override;
  void onFailed(MemberId id, TimePoint now) override;

  // Members by cost, then in the order added.
  std::vector<Member> members() const override;
  // With each member's "Current Load %" (groups()), in members() order.
  std::vector<MemberFigures> figures() const override;

  void setThreshold(std::uint32_t relative_cost, std::uint32_t percent);

  // EAGLE "MAP or MRN Group Status": Available if any RC group is Available;
  // otherwise Threshold-Prohibited if any is; otherwise Prohibited (also when empty).
  RcGroupState status() const;
  std::vector<RcGroupView> groups() const;

 private:
  RcGroup* groupOf(MemberId id);
  void route();  // recompute in_use_ after a status change
  std::uint32_t thresholdFor(std::uint32_t rc) const;
  PickResult noneReason() const;
  PickResult pickKeyed(const PickContext& context);

  WeightedConfig config_;
  std::vector<RcGroup> groups_;                       // ascending relative cost
  std::unordered_map<MemberId, std::uint32_t> rc_of_;  // member → its relative cost
  std::size_t in_use_ = 0;                            // == groups_.size(): none Available
};

}  // namespace npac::dispatch
