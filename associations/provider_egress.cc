#include "associations/provider_egress.h"

namespace npac::associations {

std::string_view toString(WaitReason reason) {
  switch (reason) {
    case WaitReason::kRecovering: return "provider in recovery mode";
    case WaitReason::kNoAssociationForFunction: return "no association for the function";
    case WaitReason::kAllCongested: return "every association for the function is congested";
    case WaitReason::kInvokeIdsExhausted: return "every invoke id is outstanding";
  }
  return "unknown";
}

Result<std::unique_ptr<ProviderEgress>> ProviderEgress::create(
    std::string spid, const dispatch::PolicyConfig& policy, OutstandingLimits limits) {
  auto logical = LogicalAssociation::create(std::move(spid), policy);
  if (!logical.isOk()) return logical.status();
  return std::unique_ptr<ProviderEgress>(new ProviderEgress(std::move(logical).value(), limits));
}

void ProviderEgress::apply(const std::optional<MemberStateChange>& change) {
  // A silent association stays out of the rotation whatever its congestion does.
  if (change && silent_.count(change->association) == 0) {
    logical_->setMemberState(change->association, change->state);
  }
}

void ProviderEgress::apply(const std::vector<MemberStateChange>& changes) {
  for (const auto& change : changes) apply(std::optional<MemberStateChange>(change));
}

std::uint32_t ProviderEgress::timeouts(AssociationId association) const {
  auto it = timeouts_.find(association);
  return it == timeouts_.end() ? 0 : it->second;
}

void ProviderEgress::onBound(const AssociationSpec& spec, bool recovery_mode) {
  logical_->add(spec);
  recovery_.onBind(recovery_mode);
}

SendOutcome ProviderEgress::send(const OutboundMessage& message, TimePoint now) {
  SendOutcome outcome;
  if (message.purpose == OutboundMessage::Purpose::kPush && !recovery_.mayPush()) {
    outcome.wait = WaitReason::kRecovering;
    return outcome;
  }
  dispatch::PickContext context;
  context.now = now;
  context.priority = message.priority;
  const Route route = logical_->route(message.function, context);
  if (!route.ok()) {
    outcome.wait = route.why == Route::Why::kNoAssociationForFunction
                       ? WaitReason::kNoAssociationForFunction
                       : WaitReason::kAllCongested;
    return outcome;
  }
  Transmission transmission{message.id, *route.association, std::nullopt, false};
  if (message.confirmed && message.purpose != OutboundMessage::Purpose::kResponse) {
    auto sent = outstanding_.send(message.id, message.function, *route.association, now);
    if (!sent.isOk()) {
      outcome.wait = sent.status().code() == StatusCode::kInvokeIdsExhausted ? WaitReason::kInvokeIdsExhausted
                                                                             : WaitReason::kAllCongested;
      return outcome;
    }
    transmission.invoke_id = sent.value().invoke_id;
    apply(sent.value().change);
  }
  logical_->onSent(*route.association, now);
  outcome.transmission = transmission;
  return outcome;
}

std::optional<MessageId> ProviderEgress::onResponse(InvokeId invoke_id, AssociationId arrived_on,
                                                    TimePoint now) {
  auto completed = outstanding_.complete(invoke_id, arrived_on, now);
  if (silent_.erase(arrived_on) != 0) {
    // It answered: back in the rotation, its timeout count starts again.
    timeouts_.erase(arrived_on);
    last_timeout_.erase(arrived_on);
    const bool congested =
        outstanding_.outstanding(arrived_on) >= outstanding_.limits().congestion_window;
    logical_->setMemberState(arrived_on, congested ? dispatch::MemberState::kCongested
                                                   : dispatch::MemberState::kAvailable);
  }
  if (!completed) return std::nullopt;
  apply(completed->change);
  if (completed->request.association) {
    logical_->onCompleted(*completed->request.association, completed->latency, now);
  }
  return completed->request.message_id;
}

LossOutcome ProviderEgress::onAssociationLost(AssociationId association, TimePoint now) {
  logical_->remove(association);
  silent_.erase(association);
  timeouts_.erase(association);
  last_timeout_.erase(association);
  LossOutcome outcome;
  for (const OutstandingRequest& orphan : outstanding_.detach(association)) {
    dispatch::PickContext context;
    context.now = now;
    Route route = logical_->route(orphan.function, context);
    if (!route.ok()) {
      // Every survivor with the function is congested or silent: the request goes to one
      // of them anyway rather than back to the queue, so it keeps its invoke id (a
      // provider must never get one request twice under two ids).
      for (const AssociationView& view : logical_->snapshot()) {
        if (view.state == AssociationState::kBound && view.spec.functions.has(orphan.function)) {
          route.association = view.spec.id;
          break;
        }
      }
    }
    if (route.ok()) {
      auto moved = outstanding_.reassign(orphan.invoke_id, *route.association, now);
      if (moved.isOk()) {
        apply(moved.value());
        logical_->onSent(*route.association, now);
        outcome.retransmissions.push_back(
            Transmission{orphan.message_id, *route.association, orphan.invoke_id, true});
        continue;
      }
    }
    outstanding_.drop(orphan.invoke_id);
    outcome.requeue.push_back(orphan.message_id);
  }
  if (!logical_->available()) {
    // Held messages are still queued; the next bind decides (recovery.h).
    recovery_.onAllAssociationsLost();
  }
  return outcome;
}

TimerOutcome ProviderEgress::onTimer(TimePoint now) {
  TimerOutcome outcome;
  OutstandingRequests::Expiry expiry = outstanding_.expired(now);
  std::set<AssociationId> abort(expiry.abort.begin(), expiry.abort.end());
  // A timeout counts against the association the request waited on, once per timer
  // pass however many of its requests fell due together: with a window of 100, a silent
  // association is aborted after retry_attempts × response_timeout, not at once.
  std::set<AssociationId> counted;
  auto timedOut = [&](AssociationId association) {
    if (!counted.insert(association).second) return;
    last_timeout_[association] = now;
    const std::uint32_t count = ++timeouts_[association];
    if (silent_.insert(association).second) {
      logical_->setMemberState(association, dispatch::MemberState::kProhibited);
      outcome.silenced.push_back(association);
    }
    if (count >= outstanding_.limits().retry_attempts) abort.insert(association);
  };
  for (AssociationId id : expiry.abort) timedOut(id);
  for (const OutstandingRequest& due : expiry.retry) {
    if (due.association) timedOut(*due.association);
  }
  // Still silent a whole response_timeout after its last timeout — even with nothing left
  // on it because its retries went (and were answered) elsewhere — is one more timeout.
  for (AssociationId id : std::vector<AssociationId>(silent_.begin(), silent_.end())) {
    auto last = last_timeout_.find(id);
    if (last != last_timeout_.end() && now - last->second >= outstanding_.limits().response_timeout) {
      timedOut(id);
    }
  }
  outcome.abort.assign(abort.begin(), abort.end());
  for (const OutstandingRequest& due : expiry.retry) {
    // Its association is being aborted: the loss moves it (same invoke id).
    if (due.association && abort.count(*due.association) != 0) continue;
    const AssociationId current = due.association.value_or(0);
    dispatch::PickContext context;
    context.now = now;
    context.avoid = current;  // HAProxy-style: prefer another association for the retry
    const Route route = logical_->route(due.function, context);
    const AssociationId target = route.ok() ? *route.association : current;
    auto moved = outstanding_.resend(due.invoke_id, target, now);
    if (!moved.isOk()) {
      // The chosen association filled up meanwhile: retry where it was.
      moved = outstanding_.resend(due.invoke_id, current, now);
      if (!moved.isOk()) continue;
      apply(moved.value());
      outcome.retries.push_back(Transmission{due.message_id, current, due.invoke_id, true});
      continue;
    }
    apply(moved.value());
    logical_->onSent(target, now);
    outcome.retries.push_back(Transmission{due.message_id, target, due.invoke_id, true});
  }
  return outcome;
}

SrrOffOutcome ProviderEgress::onSrrTurnedOff(TimePoint now) {
  SrrOffOutcome outcome;
  outcome.plan = planSrrOff(logical_->live());
  for (const SrrOffRelease& step : outcome.plan) logical_->startReleasing(step.release);
  for (const SrrOffRelease& step : outcome.plan) {
    for (const OutstandingRequest& request : outstanding_.detach(step.release)) {
      auto moved = outstanding_.reassign(request.invoke_id, step.move_to, now);
      if (moved.isOk()) {
        apply(moved.value());
        logical_->onSent(step.move_to, now);
        outcome.retransmissions.push_back(
            Transmission{request.message_id, step.move_to, request.invoke_id, true});
      } else {
        outstanding_.drop(request.invoke_id);
        outcome.requeue.push_back(request.message_id);
      }
    }
  }
  return outcome;
}

void ProviderEgress::startRelease(AssociationId association) {
  logical_->startReleasing(association);
}

std::vector<AssociationId> ProviderEgress::readyToRelease() const {
  std::vector<AssociationId> ready;
  for (const AssociationView& view : logical_->snapshot()) {
    if (view.state == AssociationState::kReleasing && outstanding_.outstanding(view.spec.id) == 0) {
      ready.push_back(view.spec.id);
    }
  }
  return ready;
}

}  // namespace npac::associations
