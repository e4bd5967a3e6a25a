// ProviderCore: delivery from the durable queue, per function without head-of-line
// blocking, the provider's own egress throttle (DSR "Egress Throttle Groups",
// docs/OPERATIONS.md "Egress throttling") and its provisioned throttle group's, shared with
// the other members and the other nodes (throttle_groups.h; "Throttle groups").
#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "npac/npacd/core/provider_core.h"
#include "tunables/catalogue.h"

namespace npac::npacd {
namespace as = npac::associations;

namespace {

// The egress rate is paced in tenths of a second: at most ceil(max/10) pushes per slot,
// so a held burst leaves spread over the second instead of all at once.
constexpr auto kPaceSlot = std::chrono::milliseconds(100);

}  // namespace

as::AssociationFunction routingFunction(std::uint32_t mask) {
  for (unsigned bit = 0; bit < as::kFunctionCount; ++bit) {
    if (mask >> bit & 1u) return static_cast<as::AssociationFunction>(bit);
  }
  return as::AssociationFunction::kNotifications;
}

ProviderCore::Facts ProviderCore::factsOf(const db::QueuedMessage& row) {
  // Written at submission (schema 4, db/outbound_queue.h): the stored PDU is never decoded
  // again to learn what it is.
  Facts facts;
  facts.response = row.kind == db::MessageKind::kResponse;
  facts.confirmed = !facts.response && row.confirmed;
  return facts;
}

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
    return written(hold(it->first, pdu, static_cast<std::int64_t>(t.message)));
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
  return written(hold(it->first, std::move(encoded).value(), tag));
}

bool ProviderCore::hold(db::AssociationId association, std::vector<std::uint8_t> bytes, std::int64_t tag) {
  outgoing_.push_back(Outgoing{association, std::move(bytes), tag});
  return true;
}

void ProviderCore::commitAndRelease() {
  store_.flush();
  releaseOutgoing();
}

void ProviderCore::releaseOutgoing() {
  // While the store cannot write, the rows of these PDUs may not read `sent` yet: they
  // wait with them, and leave once the backlog committed (deliver() after the retry).
  if (outgoing_.empty() || !store_.healthy()) return;
  if (store_.fenced(spid_)) {
    // Another node holds the lease: these rows did not become `sent` here, and that node
    // delivers them. The PDUs never leave; providerLost aborts the associations.
    outgoing_.clear();
    return;
  }
  std::vector<Outgoing> frames;
  frames.swap(outgoing_);
  std::vector<db::AssociationId> refused;
  for (Outgoing& frame : frames) {
    if (std::find(refused.begin(), refused.end(), frame.association) != refused.end()) continue;
    auto it = links_.find(frame.association);
    if (it == links_.end()) continue;  // lost meanwhile: its loss moved or re-queued the rows
    if (!it->second.link->send(frame.bytes, frame.tag)) refused.push_back(frame.association);
  }
  // The connection cannot take it: its rows read `sent` there, so the abort moves them to
  // the survivors (or back to the queue) like any loss.
  for (db::AssociationId id : refused) abort(id, "a PDU could not be written");
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

void ProviderCore::buildThrottle() {
  const std::int64_t max_rate = registry_.get(tunables::kThrottleMaxRate, spid_);
  const std::int64_t max_pending = registry_.get(tunables::kThrottleMaxPending, spid_);
  if (max_rate == 0 && max_pending == 0) {
    throttle_.reset();
    throttled_ = false;
    return;
  }
  // Levels in use (tunables/throttle_levels.h): level 1 always, 2 and 3 when both of
  // their percentages are set.
  std::vector<dispatch::CongestionThreshold> levels;
  const std::int64_t onset[] = {registry_.get(tunables::kThrottleOnset1, spid_),
                                registry_.get(tunables::kThrottleOnset2, spid_),
                                registry_.get(tunables::kThrottleOnset3, spid_)};
  const std::int64_t abatement[] = {registry_.get(tunables::kThrottleAbatement1, spid_),
                                    registry_.get(tunables::kThrottleAbatement2, spid_),
                                    registry_.get(tunables::kThrottleAbatement3, spid_)};
  for (std::size_t n = 0; n < 3; ++n) {
    if (onset[n] == 0 || abatement[n] == 0) break;
    levels.push_back({static_cast<std::uint32_t>(onset[n]), static_cast<std::uint32_t>(abatement[n])});
  }
  dispatch::ThrottleGroupConfig config;
  const auto abatement_time = registry_.get(tunables::kThrottleMinAbatementTime, spid_);
  config.rate = {max_rate > 0, static_cast<double>(max_rate), levels, abatement_time};
  config.pending = {max_pending > 0, static_cast<double>(max_pending), levels, abatement_time};
  if (auto error = config.validate()) {
    spdlog::error("SPID {}: egress throttle refused ({}); messages leave unthrottled", spid_,
                  error->message());
    throttle_.reset();
    return;
  }
  throttle_.emplace(config);
}

void ProviderCore::refreshGroup() {
  std::shared_ptr<ThrottleGroup> group = host_.throttleGroupOf(spid_);
  if (group_ && group_ != group) group_->notePending(spid_, 0);  // left it, or it was replaced
  group_ = std::move(group);
  if (!group_) group_level_ = 0;
  if (group_) group_->notePending(spid_, egress_->outstanding().size());
}

bool ProviderCore::throttleAdmits(as::TimePoint now) {
  if (!throttle_) return true;
  if (throttle_->evaluate(now) > 0) return false;  // a level is in force: pushes are held
  const auto& config = throttle_->config();
  if (config.rate.enabled) {
    // Never above the maximum within the rate window, and paced within it.
    if (throttle_->emr(now) + 1.0 > config.rate.maximum) return false;
    const std::int64_t slot = now.time_since_epoch() / kPaceSlot;
    if (slot != pace_slot_) {
      pace_slot_ = slot;
      pace_in_slot_ = 0;
    }
    const auto per_slot = static_cast<std::uint32_t>(std::ceil(config.rate.maximum / 10.0));
    if (pace_in_slot_ >= per_slot) return false;
  }
  if (config.pending.enabled &&
      static_cast<double>(egress_->outstanding().size()) + 1.0 > config.pending.maximum) {
    return false;
  }
  return true;
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
  if (!facts.response && (draft.throttled || !throttleAdmits(now))) {
    draft.throttled = true;
    return true;
  }
  if (!facts.response && group_) {
    if (const int level = group_->mayAdmit(now); level > 0) {
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
  if (throttle_ && !facts.response) {
    throttle_->onSent(now, facts.confirmed);
    ++pace_in_slot_;
  }
  if (group_ && !facts.response) group_->onSent(spid_, egress_->outstanding().size(), now);
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
  refreshGroup();
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
  throttled_ = round.throttled;
  group_level_ = round.group_level;
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
  if (throttled_) return WaitReason::kThrottled;
  if (available) {
    if (egress_->outstanding().size() >= static_cast<std::size_t>(as::kMaxInvokeId) - 1) {
      return WaitReason::kInvokeIdsExhausted;
    }
    return std::nullopt;
  }
  return all_silent ? WaitReason::kSilent : WaitReason::kAllCongested;
}

}  // namespace npac::npacd
