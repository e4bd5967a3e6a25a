#include "associations/logical_association.h"

#include <algorithm>

namespace npac::associations {

std::string_view toString(AssociationState state) {
  switch (state) {
    case AssociationState::kBound: return "bound";
    case AssociationState::kReleasing: return "releasing";
  }
  return "unknown";
}

Status LogicalAssociation::build(const dispatch::PolicyConfig& config, Policies& out) {
  for (auto& policy : out) {
    NPAC_ASSIGN_OR_RETURN(policy, dispatch::makePolicy(config));
  }
  return Status::ok();
}

Result<std::unique_ptr<LogicalAssociation>> LogicalAssociation::create(
    std::string spid, const dispatch::PolicyConfig& config) {
  Policies policies;
  NPAC_RETURN_IF_ERROR(build(config, policies));
  return std::unique_ptr<LogicalAssociation>(
      new LogicalAssociation(std::move(spid), config.name, std::move(policies)));
}

template <typename Fn>
void LogicalAssociation::forEachPolicyOf(const AssociationView& view, Fn&& fn) {
  for (std::size_t f = 0; f < kFunctionCount; ++f) {
    if (view.spec.functions.has(static_cast<AssociationFunction>(f))) fn(*policies_[f]);
  }
}

void LogicalAssociation::join(const AssociationView& view) {
  dispatch::Member member;
  member.id = view.spec.id;
  member.weight = view.spec.weight;
  member.relative_cost = view.spec.relative_cost;
  member.state = view.member_state;
  forEachPolicyOf(view, [&](dispatch::Policy& policy) { policy.addMember(member); });
}

void LogicalAssociation::leave(const AssociationView& view) {
  forEachPolicyOf(view, [&](dispatch::Policy& policy) { policy.removeMember(view.spec.id); });
}

AssociationView* LogicalAssociation::lookup(AssociationId id) {
  for (auto& view : associations_) {
    if (view.spec.id == id) return &view;
  }
  return nullptr;
}

std::optional<AssociationView> LogicalAssociation::find(AssociationId id) const {
  for (const auto& view : associations_) {
    if (view.spec.id == id) return view;
  }
  return std::nullopt;
}

std::optional<dispatch::MemberFigures> LogicalAssociation::figures(AssociationId id) const {
  const std::optional<AssociationView> view = find(id);
  if (!view || view->state != AssociationState::kBound) return std::nullopt;
  for (std::size_t f = 0; f < kFunctionCount; ++f) {
    if (!view->spec.functions.has(static_cast<AssociationFunction>(f))) continue;
    for (dispatch::MemberFigures& figures : policies_[f]->figures()) {
      if (figures.member.id == id) return std::move(figures);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

bool LogicalAssociation::add(const AssociationSpec& spec) {
  if (lookup(spec.id) != nullptr) return false;
  AssociationView view;
  view.spec = spec;
  // Keep bind order (normally an append).
  auto at = std::upper_bound(associations_.begin(), associations_.end(), spec.bound_order,
                             [](std::uint64_t order, const AssociationView& v) {
                               return order < v.spec.bound_order;
                             });
  associations_.insert(at, view);
  join(view);
  return true;
}

void LogicalAssociation::startReleasing(AssociationId id) {
  AssociationView* view = lookup(id);
  if (view == nullptr || view->state == AssociationState::kReleasing) return;
  leave(*view);
  view->state = AssociationState::kReleasing;
}

void LogicalAssociation::remove(AssociationId id) {
  auto it = std::find_if(associations_.begin(), associations_.end(),
                         [id](const AssociationView& v) { return v.spec.id == id; });
  if (it == associations_.end()) return;
  if (it->state == AssociationState::kBound) leave(*it);
  associations_.erase(it);
}

void LogicalAssociation::setMemberState(AssociationId id, dispatch::MemberState state) {
  AssociationView* view = lookup(id);
  if (view == nullptr || view->member_state == state) return;
  view->member_state = state;
  if (view->state != AssociationState::kBound) return;
  forEachPolicyOf(*view, [&](dispatch::Policy& policy) { policy.setState(id, state); });
}

bool LogicalAssociation::available() const {
  return std::any_of(associations_.begin(), associations_.end(),
                     [](const AssociationView& v) { return v.state == AssociationState::kBound; });
}

Route LogicalAssociation::route(AssociationFunction function,
                                const dispatch::PickContext& context) {
  const auto index = static_cast<std::size_t>(function);
  Route route;
  if (index >= kFunctionCount) return route;
  const dispatch::PickResult pick = policies_[index]->pick(context);
  if (pick.ok()) {
    route.association = pick.member;
    return route;
  }
  route.why = pick.reason == dispatch::NoneReason::kNoMembers ? Route::Why::kNoAssociationForFunction
                                                              : Route::Why::kPolicyNone;
  route.policy_reason = pick.reason;
  return route;
}

void LogicalAssociation::onSent(AssociationId id, dispatch::TimePoint now) {
  if (AssociationView* view = lookup(id); view && view->state == AssociationState::kBound) {
    forEachPolicyOf(*view, [&](dispatch::Policy& policy) { policy.onSent(id, now); });
  }
}

void LogicalAssociation::onCompleted(AssociationId id, dispatch::Duration latency,
                                     dispatch::TimePoint now) {
  if (AssociationView* view = lookup(id); view && view->state == AssociationState::kBound) {
    forEachPolicyOf(*view, [&](dispatch::Policy& policy) { policy.onCompleted(id, latency, now); });
  }
}

void LogicalAssociation::onFailed(AssociationId id, dispatch::TimePoint now) {
  if (AssociationView* view = lookup(id); view && view->state == AssociationState::kBound) {
    forEachPolicyOf(*view, [&](dispatch::Policy& policy) { policy.onFailed(id, now); });
  }
}

Status LogicalAssociation::changePolicy(const dispatch::PolicyConfig& config) {
  Policies fresh;
  NPAC_RETURN_IF_ERROR(build(config, fresh));  // the old policies stay in force
  policies_ = std::move(fresh);
  policy_name_ = config.name;
  for (const auto& view : associations_) {
    if (view.state == AssociationState::kBound) join(view);
  }
  return Status::ok();
}

std::vector<LiveAssociation> LogicalAssociation::live() const {
  std::vector<LiveAssociation> result;
  for (const auto& view : associations_) {
    if (view.state != AssociationState::kBound) continue;
    result.push_back(LiveAssociation{view.spec.id, view.spec.nsap, view.spec.functions,
                                     view.spec.bound_order});
  }
  return result;
}

std::vector<AssociationView> LogicalAssociation::snapshot() const { return associations_; }

}  // namespace npac::associations
