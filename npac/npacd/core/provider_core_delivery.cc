// ProviderCore: delivery from the durable queue, per function without head-of-line
// blocking; each row that is not an answer passes the provider's egress throttling first
// (ProviderThrottle, provider_throttle.h: its own limits, then its throttle group's).
#include <algorithm>

#include <spdlog/spdlog.h>

#include "npac/npacd/core/provider_core.h"
#include "tunables/catalogue.h"

namespace npac::npacd {
namespace as = npac::associations;

ProviderCore::Written ProviderCore::write(const as::Transmission& t, const db::QueuedMessage& row,
                                         const Facts& facts) {
  auto it = links_.find(static_cast<db::AssociationId>(t.association));
  if (it == links_.end()) return Written::kRefused;
  AssociationLink& link = *it->second.link;
  const auto message = static_cast<db::MessageId>(t.message);
  const std::vector<std::uint8_t>& pdu = row.pdu;
  const auto written = [&](bool sent) {
    if (!sent) return Written::kRefused;
    recent_[next_pick_++ % kRecentPicks] = RecentPick{it->first, routingFunction(row.function_mask),
                                                      t.retransmission || row.retransmission, clock_.wallMs()};
    return Written::kWritten;
  };
  if (facts.response) {
    // It carries the provider's invoke id already; acknowledged when written.
    unconfirmed_[message] = {it->first, std::nullopt, {}};
    held_.hold(it->first, pdu, static_cast<std::int64_t>(t.message));
    return written(true);
  }
  std::optional<as::InvokeId> invoke_id = t.invoke_id;
  std::int64_t tag = 0;
  if (!invoke_id) {
    // An unconfirmed operation: an id from the provider's one allocator, held until the
    // PDU is written (onWritten), when it counts as acknowledged (docs/OPERATIONS.md).
    invoke_id = egress_->outstanding().reserveInvokeId(t.message);
    if (!invoke_id) return Written::kRefused;
    unconfirmed_[message] = {it->first, invoke_id, {}};
    tag = static_cast<std::int64_t>(t.message);
  }
  // The placeholder invoke id is replaced in the encoded bytes (a splice, no re-encode).
  auto encoded = cmip::spliceInvokeId(pdu, *invoke_id);
  if (!encoded.isOk()) {
    // Not an Invoke the splice can read: it can never leave. Failed, not retried, and the
    // association is not blamed.
    if (tag != 0) {
      egress_->outstanding().releaseInvokeId(*invoke_id);
      unconfirmed_.erase(message);
    } else {
      egress_->outstanding().drop(*invoke_id);
    }
    store_.markFailed(spid_, message, "stored PDU is not a ROSE Invoke: " + encoded.status().toString(),
                      clock_.wallMs());
    return Written::kBadPdu;
  }
  if (t.retransmission) link.countRetransmission();
  held_.hold(it->first, std::move(encoded).value(), tag);
  return written(true);
}

void ProviderCore::releaseOutgoing() {
  const HeldPdus::LinkOf link_of = [this](db::AssociationId id) -> AssociationLink* {
    auto it = links_.find(id);
    return it == links_.end() ? nullptr : it->second.link.get();
  };
  // The connection cannot take it: its rows read `sent` there, so the abort moves them to
  // the survivors (or back to the queue) like any loss.
  for (db::AssociationId id : held_.release(link_of)) abort(id, "a PDU could not be written");
}

std::uint32_t ProviderCore::usableFunctions() const {
  std::uint32_t functions = 0;
  for (const as::AssociationView& view : egress_->logical().snapshot()) {
    if (view.state != as::AssociationState::kBound) continue;
    if (view.member_state != dispatch::MemberState::kAvailable) continue;  // congested or silent
    auto it = links_.find(static_cast<db::AssociationId>(view.spec.id));
    if (it == links_.end() || it->second.link->releasing()) continue;
    functions |= view.spec.functions.bits();
  }
  return functions;
}

void ProviderCore::deliver() {
  const Round round = decideRound();
  store_.flush();
  finishRound(round);
}

std::size_t ProviderCore::freeWindowSlots(std::uint32_t functions) const {
  std::size_t capacity = 0;
  const std::uint32_t window = egress_->outstanding().limits().congestion_window;
  for (const auto& [id, entry] : links_) {
    if ((entry.function_mask & functions) == 0) continue;
    const std::uint32_t busy = egress_->outstanding().outstanding(static_cast<as::AssociationId>(id));
    capacity += window > busy ? window - busy : 0;
  }
  return capacity;
}

bool ProviderCore::placeRow(const db::QueuedMessage& row, as::TimePoint now, RoundDraft& draft) {
  const Facts facts = factsOf(row);
  const as::AssociationFunction function = routingFunction(row.function_mask);
  const std::uint32_t bit = 1u << static_cast<unsigned>(function);
  if (draft.blocked & bit) return true;
  // Answers to the provider's own requests are never held. Its own throttle first, then
  // its throttle group's (what every node sends the group's members together).
  if (!facts.response && (draft.throttled || !throttle_.admits(now, egress_->outstanding().size()))) {
    draft.throttled = true;
    return true;
  }
  if (!facts.response) {
    if (const int level = throttle_.groupHolds(now); level > 0) {
      draft.throttled = true;
      draft.group_level = level;
      return true;
    }
  }
  as::OutboundMessage out;
  out.id = static_cast<as::MessageId>(row.id);
  out.function = function;
  out.priority = static_cast<std::uint8_t>(std::clamp(row.priority, 0, 255));
  out.confirmed = facts.confirmed;
  if (facts.response) out.purpose = as::OutboundMessage::Purpose::kResponse;
  as::SendOutcome outcome = egress_->send(out, now);
  if (!outcome.ok()) {
    draft.blocked |= bit;
    return true;
  }
  const as::Transmission& t = *outcome.transmission;
  if (!facts.response) throttle_.onSent(now, facts.confirmed, egress_->outstanding().size());
  draft.placed_any = true;
  const Written written = write(t, row, facts);
  if (counters_) {
    if (written == Written::kBadPdu) {
      counters_->count(ProviderCounters::kFailed, function, ProviderCounters::operationIndex(row.opcode));
    } else {
      countWritten(row, facts, t.retransmission || row.retransmission);
    }
  }
  if (written == Written::kBadPdu) return true;
  draft.sent[static_cast<db::AssociationId>(t.association)].push_back(row.id);
  if (written == Written::kRefused) {
    // The connection cannot take it: counted as in flight there, and that association
    // is aborted once the rows say so, so its loss moves the message like the others.
    draft.failed = static_cast<db::AssociationId>(t.association);
    return false;
  }
  return true;
}

ProviderCore::Round ProviderCore::decideRound() {
  releaseOutgoing();  // what waited for the store to write again
  Round round;
  if (links_.empty() || !store_.healthy() || !host_.mayDeliver(spid_)) return round;
  const std::uint32_t functions = usableFunctions();
  if (functions == 0) return round;
  throttle_.refreshGroup(host_.throttleGroupOf(spid_), egress_->outstanding().size());
  // Free congestion-window slots of the usable associations: at most that many requests
  // can leave now, so no more rows are read (an answer schedules the next round).
  const std::size_t capacity = freeWindowSlots(functions);
  const std::size_t limit = std::clamp<std::size_t>(capacity, 1, kDeliveryBatch);
  auto batch = store_.nextQueued(spid_, functions, limit);
  if (!batch.isOk()) return round;  // the store logged it and turned unhealthy
  round.decided = true;
  const as::TimePoint now = clock_.now();
  const db::TimeMs now_ms = clock_.wallMs();
  RoundDraft draft;
  for (const db::QueuedMessage& row : *batch) {
    if (!placeRow(row, now, draft)) break;
  }
  for (auto& [association, ids] : draft.sent) store_.markSent(spid_, std::move(ids), association, now_ms);
  // The round's rows read `sent` before any of its PDUs can leave, on SQLite as on
  // PostgreSQL: npacd killed in between leaves them `sent`, and the restart re-sends them
  // flagged as retransmissions with their invoke ids, never as fresh messages. The
  // caller commits (DeliveryStore::flush) before finishRound() releases them.
  round.failed = draft.failed;
  round.throttled = draft.throttled;
  round.group_level = draft.group_level;
  round.again = draft.placed_any && batch->size() == limit;
  return round;
}

void ProviderCore::finishRound(const Round& round) {
  releaseOutgoing();
  if (!round.decided) return;
  throttle_.settle(round.throttled, round.group_level);
  if (round.failed) {
    abort(*round.failed, "a PDU could not be written");
    return;
  }
  if (round.throttled) {
    host_.wakeDeliveryAfter(spid_, kPaceSlot);
    return;
  }
  if (round.again) host_.wakeDelivery(spid_);
}

std::optional<WaitReason> ProviderCore::waitReason(as::AssociationFunction function) const {
  if (!store_.healthy()) return WaitReason::kStorageUnavailable;
  if (links_.empty()) return WaitReason::kNotBound;
  if (!host_.mayDeliver(spid_)) return WaitReason::kLeaseNotValid;
  bool any = false;
  bool all_releasing = true;
  bool all_silent = true;
  bool available = false;
  for (const as::AssociationView& view : egress_->logical().snapshot()) {
    if (!view.spec.functions.has(function)) continue;
    any = true;
    auto it = links_.find(static_cast<db::AssociationId>(view.spec.id));
    if (view.state == as::AssociationState::kReleasing || it == links_.end() ||
        it->second.link->releasing()) {
      continue;
    }
    all_releasing = false;
    const bool silent = egress_->silent(view.spec.id);
    if (!silent) all_silent = false;
    if (!silent && view.member_state == dispatch::MemberState::kAvailable) available = true;
  }
  if (!any) return WaitReason::kNoAssociationForFunction;
  if (all_releasing) return WaitReason::kReleasing;
  if (!egress_->recovery().mayPush()) return WaitReason::kRecovering;
  if (throttle_.throttled()) return WaitReason::kThrottled;
  if (available) {
    if (egress_->outstanding().size() >= static_cast<std::size_t>(as::kMaxInvokeId) - 1) {
      return WaitReason::kInvokeIdsExhausted;
    }
    return std::nullopt;
  }
  return all_silent ? WaitReason::kSilent : WaitReason::kAllCongested;
}

}  // namespace npac::npacd
