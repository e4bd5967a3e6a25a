// Weighted cost groups (EAGLE "Weighted GTT Load Sharing"). See weighted.h.
#include "dispatch/weighted.h"

#include <algorithm>

#include "dispatch/traffic_table.h"

namespace npac::dispatch {

WeightedPolicy::WeightedPolicy(WeightedConfig config) : config_(std::move(config)) {}

PickResult WeightedPolicy::pick(const PickContext& context) {
  if (context.key) return pickKeyed(context);
  if (in_use_ == groups_.size()) return noneReason();
  RcGroup& group = groups_[in_use_];
  if (context.avoid && group.availableCount() == 1 && group.soleAvailable() == *context.avoid) {
    // The chosen group has nobody else: try the next Available cost before giving in.
    for (std::size_t g = in_use_ + 1; g < groups_.size(); ++g) {
      if (groups_[g].state() == RcGroupState::kAvailable) {
        return PickResult::of(groups_[g].next(context.avoid));
      }
    }
  }
  return PickResult::of(group.next(context.avoid));
}

PickResult WeightedPolicy::pickKeyed(const PickContext& context) {
  const bool seq = context.sequenced;
  for (RcGroup& group : groups_) {
    const RcGroupState state = seq ? group.sequencedState() : group.state();
    if (state != RcGroupState::kAvailable) continue;
    const MemberId id = group.keyed(*context.key, seq);
    if (context.avoid && id == *context.avoid && group.state() == RcGroupState::kAvailable &&
        (group.availableCount() > 1 || group.find(id)->state != MemberState::kAvailable)) {
      return PickResult::of(group.next(context.avoid));  // a retry leaves the primary
    }
    return PickResult::of(id);
  }
  return noneReason();
}

PickResult WeightedPolicy::noneReason() const {
  if (groups_.empty()) return PickResult::none(NoneReason::kNoMembers);
  return PickResult::none(status() == RcGroupState::kThresholdProhibited
                              ? NoneReason::kThresholdProhibited
                              : NoneReason::kGroupProhibited);
}

void WeightedPolicy::addMember(const Member& member) {
  if (rc_of_.count(member.id) != 0) removeMember(member.id);
  auto it = std::lower_bound(groups_.begin(), groups_.end(), member.relative_cost,
                             [](const RcGroup& g, std::uint32_t rc) { return g.relativeCost() < rc; });
  if (it == groups_.end() || it->relativeCost() != member.relative_cost) {
    it = groups_.insert(it, RcGroup(member.relative_cost, thresholdFor(member.relative_cost)));
  }
  it->add(member);
  rc_of_[member.id] = member.relative_cost;
  route();
}

void WeightedPolicy::removeMember(MemberId id) {
  auto found = rc_of_.find(id);
  if (found == rc_of_.end()) return;
  for (auto it = groups_.begin(); it != groups_.end(); ++it) {
    if (it->relativeCost() != found->second) continue;
    it->remove(id);
    if (it->empty()) groups_.erase(it);
    break;
  }
  rc_of_.erase(found);
  route();
}

void WeightedPolicy::setState(MemberId id, MemberState state) {
  if (RcGroup* g = groupOf(id)) {
    g->setState(id, state);
    route();
  }
}

void WeightedPolicy::setWeight(MemberId id, std::uint32_t weight) {
  if (RcGroup* g = groupOf(id)) {
    g->setWeight(id, weight);
    route();
  }
}

void WeightedPolicy::onSent(MemberId id, TimePoint /*now*/) {
  if (RcGroup* g = groupOf(id)) ++g->find(id)->active;
}

void WeightedPolicy::onCompleted(MemberId id, Duration /*latency*/, TimePoint /*now*/) {
  if (RcGroup* g = groupOf(id)) {
    Member* m = g->find(id);
    if (m->active > 0) --m->active;
  }
}

void WeightedPolicy::onFailed(MemberId id, TimePoint now) { onCompleted(id, {}, now); }

std::vector<Member> WeightedPolicy::members() const {
  std::vector<Member> out;
  for (const RcGroup& g : groups_) out.insert(out.end(), g.members().begin(), g.members().end());
  return out;
}

void WeightedPolicy::setThreshold(std::uint32_t relative_cost, std::uint32_t percent) {
  config_.threshold_percent_by_rc[relative_cost] = percent;
  for (RcGroup& g : groups_) {
    if (g.relativeCost() == relative_cost) g.setThreshold(percent);
  }
  route();
}

RcGroupState WeightedPolicy::status() const {
  bool threshold = false;
  for (const RcGroup& g : groups_) {
    if (g.state() == RcGroupState::kAvailable) return RcGroupState::kAvailable;
    if (g.state() == RcGroupState::kThresholdProhibited) threshold = true;
  }
  return threshold ? RcGroupState::kThresholdProhibited : RcGroupState::kProhibited;
}

std::vector<RcGroupView> WeightedPolicy::groups() const {
  std::vector<RcGroupView> out;
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    const RcGroup& g = groups_[gi];
    RcGroupView v;
    v.relative_cost = g.relativeCost();
    v.group_weight = g.groupWeight();
    v.threshold_percent = g.thresholdPercent();
    v.required_weight = g.requiredWeight();
    v.available_weight = g.availableWeight();
    v.state = g.state();
    v.in_use = gi == in_use_;
    v.members = g.members();
    std::vector<std::uint64_t> shares;
    for (std::size_t i = 0; i < g.members().size(); ++i) {
      v.entity_available_weight.push_back(g.entityAvailableWeight(i));
      shares.push_back(g.state() == RcGroupState::kAvailable ? g.entityAvailableWeight(i) : 0);
    }
    v.load_percent = loadPercents(shares);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<MemberFigures> WeightedPolicy::figures() const {
  std::vector<MemberFigures> out;
  for (const RcGroupView& group : groups()) {
    for (std::size_t i = 0; i < group.members.size(); ++i) {
      out.push_back(MemberFigures{group.members[i], group.load_percent[i], {}, false, {}, {}});
    }
  }
  return out;
}

RcGroup* WeightedPolicy::groupOf(MemberId id) {
  auto found = rc_of_.find(id);
  if (found == rc_of_.end()) return nullptr;
  auto it = std::lower_bound(groups_.begin(), groups_.end(), found->second,
                             [](const RcGroup& g, std::uint32_t rc) { return g.relativeCost() < rc; });
  return it != groups_.end() && it->relativeCost() == found->second ? &*it : nullptr;
}

void WeightedPolicy::route() {
  in_use_ = groups_.size();
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].state() == RcGroupState::kAvailable) {
      in_use_ = g;
      return;
    }
  }
}

std::uint32_t WeightedPolicy::thresholdFor(std::uint32_t rc) const {
  auto it = config_.threshold_percent_by_rc.find(rc);
  return it == config_.threshold_percent_by_rc.end() ? config_.default_threshold_percent
                                                     : it->second;
}

}  // namespace npac::dispatch
