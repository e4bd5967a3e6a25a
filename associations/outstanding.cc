#include "associations/outstanding.h"

#include <algorithm>

namespace npac::associations {

InvokeId preferredInvokeId(MessageId message, InvokeId max) {
  if (max < 1) return 1;
  const auto span = static_cast<MessageId>(max);
  return static_cast<InvokeId>((message == 0 ? 0 : (message - 1) % span) + 1);
}

std::optional<InvokeId> InvokeIdAllocator::allocate(std::optional<InvokeId> preferred) {
  if (in_use_.size() >= static_cast<std::size_t>(max_)) return std::nullopt;
  if (preferred && *preferred >= 1 && *preferred <= max_ && in_use_.insert(*preferred).second) {
    // The ids handed out in order stay above the preferred ones (which follow the
    // increasing message ids): a late response to an old request cannot alias a new one.
    if (*preferred >= next_) next_ = *preferred == max_ ? 1 : *preferred + 1;
    return *preferred;
  }
  // Terminates: at least one id in 1..max_ is free.
  while (in_use_.count(next_) != 0) next_ = next_ == max_ ? 1 : next_ + 1;
  const InvokeId id = next_;
  next_ = next_ == max_ ? 1 : next_ + 1;
  in_use_.insert(id);
  return id;
}

// Congestion hysteresis is exact: Congested at the window, Available below it.
std::optional<MemberStateChange> OutstandingRequests::settle(AssociationId association, Load& load) {
  const bool congested = load.count >= limits_.congestion_window;
  if (congested == load.congested) return std::nullopt;
  load.congested = congested;
  return MemberStateChange{association, congested ? dispatch::MemberState::kCongested
                                                  : dispatch::MemberState::kAvailable};
}

std::optional<MemberStateChange> OutstandingRequests::attach(Entry& entry,
                                                             AssociationId association) {
  entry.request.association = association;
  Load& load = loads_[association];
  ++load.count;
  return settle(association, load);
}

std::optional<MemberStateChange> OutstandingRequests::unattach(Entry& entry) {
  if (!entry.request.association) return std::nullopt;
  const AssociationId association = *entry.request.association;
  entry.request.association.reset();
  auto it = loads_.find(association);
  if (it == loads_.end()) return std::nullopt;
  --it->second.count;
  return settle(association, it->second);
}

std::vector<MemberStateChange> OutstandingRequests::setLimits(OutstandingLimits limits) {
  limits_ = limits;
  std::vector<MemberStateChange> changes;
  for (auto& [association, load] : loads_) {
    if (auto change = settle(association, load)) changes.push_back(*change);
  }
  return changes;
}

Result<OutstandingRequests::Sent> OutstandingRequests::send(MessageId message,
                                                            AssociationFunction function,
                                                            AssociationId association,
                                                            TimePoint now) {
  if (outstanding(association) >= limits_.congestion_window) {
    return Status::error(StatusCode::kAssociationCongested, {});
  }
  const std::optional<InvokeId> id = ids_.allocate(preferredInvokeId(message, ids_.max()));
  if (!id) return Status::error(StatusCode::kInvokeIdsExhausted, {});
  Entry& entry = requests_[*id];
  entry.request.invoke_id = *id;
  entry.request.message_id = message;
  entry.request.function = function;
  entry.request.first_sent_at = now;
  entry.request.sent_at = now;
  return Sent{*id, attach(entry, association)};
}

std::optional<OutstandingRequests::Completed> OutstandingRequests::complete(
    InvokeId invoke_id, AssociationId arrived_on, TimePoint now) {
  auto it = requests_.find(invoke_id);
  if (it == requests_.end()) return std::nullopt;
  Completed completed;
  completed.request = it->second.request;  // keeps the association it was sent on
  completed.arrived_on = arrived_on;
  completed.latency = now - it->second.request.sent_at;
  completed.change = unattach(it->second);
  requests_.erase(it);
  ids_.release(invoke_id);
  return completed;
}

OutstandingRequests::Expiry OutstandingRequests::expired(TimePoint now) {
  std::vector<Entry*> due;
  for (auto& [id, entry] : requests_) {
    if (entry.reported || !entry.request.association) continue;
    if (now - entry.request.sent_at >= limits_.response_timeout) due.push_back(&entry);
  }
  std::sort(due.begin(), due.end(), [](const Entry* a, const Entry* b) {
    return a->request.sent_at != b->request.sent_at ? a->request.sent_at < b->request.sent_at
                                                    : a->request.invoke_id < b->request.invoke_id;
  });
  Expiry expiry;
  for (Entry* entry : due) {
    entry->reported = true;
    if (entry->request.attempts < limits_.retry_attempts) {
      expiry.retry.push_back(entry->request);
      continue;
    }
    const AssociationId association = *entry->request.association;
    if (std::find(expiry.abort.begin(), expiry.abort.end(), association) == expiry.abort.end()) {
      expiry.abort.push_back(association);
    }
  }
  return expiry;
}

std::optional<TimePoint> OutstandingRequests::nextDeadline() const {
  std::optional<TimePoint> earliest;
  for (const auto& [id, entry] : requests_) {
    if (entry.reported || !entry.request.association) continue;
    const TimePoint due = entry.request.sent_at + limits_.response_timeout;
    if (!earliest || due < *earliest) earliest = due;
  }
  return earliest;
}

Result<std::vector<MemberStateChange>> OutstandingRequests::moveTo(
    InvokeId invoke_id, AssociationId association, TimePoint now, bool is_retry) {
  auto it = requests_.find(invoke_id);
  if (it == requests_.end()) return Status::error(StatusCode::kUnknownInvokeId, {});
  Entry& entry = it->second;
  // The request leaves its old association first, so a retry on the same association
  // does not count against the window twice.
  const bool same = entry.request.association == association;
  if (!same && outstanding(association) >= limits_.congestion_window) {
    return Status::error(StatusCode::kAssociationCongested, {});
  }
  std::vector<MemberStateChange> changes;
  if (!same) {
    if (auto change = unattach(entry)) changes.push_back(*change);
    if (auto change = attach(entry, association)) changes.push_back(*change);
  }
  entry.request.sent_at = now;
  ++entry.request.sends;
  entry.request.attempts = is_retry ? entry.request.attempts + 1 : 1;
  entry.request.retransmission = true;
  entry.reported = false;
  return changes;
}

Result<std::vector<MemberStateChange>> OutstandingRequests::resend(
    InvokeId invoke_id, AssociationId association, TimePoint now) {
  return moveTo(invoke_id, association, now, /*is_retry=*/true);
}

Result<std::vector<MemberStateChange>> OutstandingRequests::reassign(
    InvokeId invoke_id, AssociationId association, TimePoint now) {
  return moveTo(invoke_id, association, now, /*is_retry=*/false);
}

std::vector<OutstandingRequest> OutstandingRequests::detach(AssociationId association) {
  std::vector<OutstandingRequest> orphans;
  for (auto& [id, entry] : requests_) {
    if (entry.request.association != association) continue;
    entry.request.association.reset();
    entry.reported = false;
    orphans.push_back(entry.request);
  }
  loads_.erase(association);  // the association is gone: no state change to report
  std::sort(orphans.begin(), orphans.end(), [](const auto& a, const auto& b) {
    return a.first_sent_at != b.first_sent_at ? a.first_sent_at < b.first_sent_at
                                              : a.invoke_id < b.invoke_id;
  });
  return orphans;
}

std::optional<OutstandingRequests::Completed> OutstandingRequests::drop(InvokeId invoke_id) {
  auto it = requests_.find(invoke_id);
  if (it == requests_.end()) return std::nullopt;
  Completed dropped;
  dropped.request = it->second.request;
  dropped.change = unattach(it->second);
  requests_.erase(it);
  ids_.release(invoke_id);
  return dropped;
}

std::uint32_t OutstandingRequests::outstanding(AssociationId association) const {
  auto it = loads_.find(association);
  return it == loads_.end() ? 0 : it->second.count;
}

std::optional<OutstandingRequest> OutstandingRequests::find(InvokeId invoke_id) const {
  auto it = requests_.find(invoke_id);
  if (it == requests_.end()) return std::nullopt;
  return it->second.request;
}

std::vector<OutstandingRequest> OutstandingRequests::detached() const {
  std::vector<OutstandingRequest> result;
  for (const auto& [id, entry] : requests_) {
    if (!entry.request.association) result.push_back(entry.request);
  }
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) {
    return a.first_sent_at != b.first_sent_at ? a.first_sent_at < b.first_sent_at
                                              : a.invoke_id < b.invoke_id;
  });
  return result;
}

}  // namespace npac::associations
