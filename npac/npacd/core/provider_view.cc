// ProviderView: the operators' reads of one provider (provider_view.h).
#include "npac/npacd/core/provider_view.h"

#include <map>

#include "npac/npacd/core/row_facts.h"

namespace npac::npacd {
namespace as = npac::associations;

namespace {

// The egress policy's figures of association `id` (ProviderView::describe).
std::optional<EgressFigures> egressFiguresOf(as::ProviderEgress& egress, db::AssociationId id) {
  const auto member = static_cast<as::AssociationId>(id);
  const std::optional<dispatch::MemberFigures> figures = egress.logical().figures(member);
  if (!figures) return std::nullopt;
  EgressFigures out;
  out.weight = figures->member.weight;
  out.relative_cost = figures->member.relative_cost;
  out.load_percent = figures->load_percent;
  if (figures->nw) {
    const dispatch::Duration response_time = figures->response_time.value_or(dispatch::Duration{});
    out.lrtm = EgressFigures::Lrtm{std::chrono::duration<double>(response_time).count(), figures->measured,
                                   figures->n.value_or(0), *figures->nw};
  }
  return out;
}

}  // namespace

void ProviderView::describe(std::vector<AssociationInfo>& out) const {
  for (const auto& [id, entry] : p_.links.all()) {
    AssociationInfo info = entry.link->describe();
    info.id = id;
    info.spid = p_.spid;
    info.outstanding = p_.egress.outstanding().outstanding(static_cast<as::AssociationId>(id));
    const auto view = p_.egress.logical().find(static_cast<as::AssociationId>(id));
    info.state = entry.link->releasing() || (view && view->state == as::AssociationState::kReleasing)
                     ? "releasing"
                 : !p_.egress.recovery().mayPush() ? "recovering"
                 : p_.egress.silent(static_cast<as::AssociationId>(id)) ? "silent"
                 : view && view->member_state == dispatch::MemberState::kCongested ? "congested"
                                                                                    : "bound";
    info.heartbeat_rtt_seconds = p_.heartbeats.rtt(id);
    info.egress = egressFiguresOf(p_.egress, id);
    out.push_back(std::move(info));
  }
}

CoreMetrics::Provider ProviderView::metrics() {
  CoreMetrics::Provider out;
  out.spid = p_.spid;
  if (const ProviderCounters* counters = p_.counting.counters()) out.counters = *counters;
  std::vector<AssociationInfo> infos;
  describe(infos);
  for (const AssociationInfo& info : infos) {
    CoreMetrics::Provider::Association a;
    a.id = info.id;
    a.state = info.state;
    a.outstanding = info.outstanding;
    const auto member = p_.egress.logical().find(static_cast<as::AssociationId>(info.id));
    a.congested = member && member->member_state == dispatch::MemberState::kCongested;
    a.sent = info.sent;
    a.received = info.received;
    a.retransmissions = info.retransmissions;
    a.egress = info.egress;
    out.associations.push_back(std::move(a));
  }
  out.recovering = !p_.egress.recovery().mayPush();
  // As queue() reports it.
  if (const std::optional<int> level = p_.throttle.level(p_.clock.now())) out.throttle_level = *level;
  return out;
}

ProviderEgressView ProviderView::egress() const {
  ProviderEgressView view;
  view.spid = p_.spid;
  view.policy = p_.egress.logical().policyName();
  view.recent = p_.counting.recent();
  return view;
}

ProviderQueueView ProviderView::queue() {
  ProviderQueueView view;
  view.spid = p_.spid;
  view.bound = !p_.links.all().empty();
  view.storage_ok = p_.store.healthy();
  auto counts = p_.store.queuedByMask(p_.spid);
  if (counts.isOk()) {
    std::map<as::AssociationFunction, std::size_t> waiting;
    for (const auto& [mask, count] : counts.value()) waiting[routingFunction(mask)] += count;
    for (const auto& [function, count] : waiting) {
      if (auto reason = waitReason(function)) {
        view.waits.push_back({as::FunctionMask::of({function}).toString(), *reason, count});
      }
    }
  } else {
    view.storage_ok = false;
  }
  // The provider's throttle group as provisioned now (DSR ETG/ETL), and its level while it
  // holds the provider's messages.
  if (auto group = p_.host.throttleGroupOf(p_.spid)) view.throttle_group = group->name();
  p_.throttle.describe(view, p_.clock, p_.egress.outstanding().size());
  for (const auto& [id, entry] : p_.links.all()) {
    ProviderQueueView::AssociationLoad load;
    load.id = id;
    load.outstanding = p_.egress.outstanding().outstanding(static_cast<as::AssociationId>(id));
    const auto member = p_.egress.logical().find(static_cast<as::AssociationId>(id));
    load.congested = member && member->member_state == dispatch::MemberState::kCongested;
    load.silent = p_.egress.silent(static_cast<as::AssociationId>(id));
    view.associations.push_back(load);
  }
  return view;
}

std::optional<WaitReason> ProviderView::waitReason(as::AssociationFunction function) const {
  if (!p_.store.healthy()) return WaitReason::kStorageUnavailable;
  if (p_.links.all().empty()) return WaitReason::kNotBound;
  if (!p_.host.mayDeliver(p_.spid)) return WaitReason::kLeaseNotValid;
  bool any = false;
  bool all_releasing = true;
  bool all_silent = true;
  bool available = false;
  for (const as::AssociationView& view : p_.egress.logical().snapshot()) {
    if (!view.spec.functions.has(function)) continue;
    any = true;
    auto it = p_.links.all().find(static_cast<db::AssociationId>(view.spec.id));
    if (view.state == as::AssociationState::kReleasing || it == p_.links.all().end() ||
        it->second.link->releasing()) {
      continue;
    }
    all_releasing = false;
    const bool silent = p_.egress.silent(view.spec.id);
    if (!silent) all_silent = false;
    if (!silent && view.member_state == dispatch::MemberState::kAvailable) available = true;
  }
  if (!any) return WaitReason::kNoAssociationForFunction;
  if (all_releasing) return WaitReason::kReleasing;
  if (!p_.egress.recovery().mayPush()) return WaitReason::kRecovering;
  if (p_.throttle.throttled()) return WaitReason::kThrottled;
  if (available) {
    if (p_.egress.outstanding().size() >= static_cast<std::size_t>(as::kMaxInvokeId) - 1) {
      return WaitReason::kInvokeIdsExhausted;
    }
    return std::nullopt;
  }
  return all_silent ? WaitReason::kSilent : WaitReason::kAllCongested;
}

}  // namespace npac::npacd
