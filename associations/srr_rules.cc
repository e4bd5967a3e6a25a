#include "associations/srr_rules.h"

#include <algorithm>
#include <map>

namespace npac::associations {
namespace {

bool boundBefore(const LiveAssociation& a, const LiveAssociation& b) {
  return a.bound_order != b.bound_order ? a.bound_order < b.bound_order : a.id < b.id;
}

}  // namespace

BindDecision decideBind(std::span<const LiveAssociation> live, const Nsap& nsap,
                        FunctionMask functions, bool recovery_mode, bool srr,
                        DuplicateBind duplicate_bind) {
  // NANC 353 7.b.vi: while one association is up, further binds must have recovery off.
  if (recovery_mode && !live.empty()) return BindDecision::reject(BindDiagnostic::kRecoveryModeWhileUp);

  const LiveAssociation* same_nsap = nullptr;
  const LiveAssociation* earliest_other = nullptr;
  for (const LiveAssociation& association : live) {
    if (association.functions != functions) continue;
    if (association.nsap == nsap) {
      same_nsap = &association;  // at most one per (NSAP, mask): each bind replaced it
    } else if (earliest_other == nullptr || boundBefore(association, *earliest_other)) {
      earliest_other = &association;
    }
  }
  // The peer re-bound from the same host before we noticed the old link died (NANC 386).
  if (same_nsap != nullptr) return BindDecision::replacing(same_nsap->id);
  if (earliest_other == nullptr) return BindDecision::accept();
  if (srr) return BindDecision::accept();  // NANC 353 item 4: another member
  if (duplicate_bind == DuplicateBind::kReplace) return BindDecision::replacing(earliest_other->id);
  return BindDecision::reject(BindDiagnostic::kDuplicateBindRejected);
}

std::vector<SrrOffRelease> planSrrOff(std::span<const LiveAssociation> live) {
  std::vector<const LiveAssociation*> ordered;
  ordered.reserve(live.size());
  for (const LiveAssociation& association : live) ordered.push_back(&association);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto* a, const auto* b) { return boundBefore(*a, *b); });
  std::map<std::uint8_t, AssociationId> keeper;  // mask bits → the earliest-bound
  std::vector<SrrOffRelease> plan;
  for (const LiveAssociation* association : ordered) {
    auto [it, first] = keeper.emplace(association->functions.bits(), association->id);
    if (!first) plan.push_back(SrrOffRelease{association->id, it->second});
  }
  return plan;
}

}  // namespace npac::associations
