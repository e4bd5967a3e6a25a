// ProviderCore: delivery from the durable queue, per function without head-of-line
// blocking; each row that is not an answer passes the provider's egress throttling first
// (ProviderThrottle, provider_throttle.h: its own limits, then its throttle group's), and
// is written on its association by ProviderLinks (provider_links.h).
#include <algorithm>

#include <spdlog/spdlog.h>

#include "npac/npacd/core/provider_core.h"
#include "tunables/catalogue.h"

namespace npac::npacd {
namespace as = npac::associations;

bool ProviderCore::placeRow(const db::QueuedMessage& row, as::TimePoint now, RoundDraft& draft) {
  const RowFacts facts = factsOf(row);
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
  const ProviderLinks::Written written = links_.write(t, row, facts);
  if (written == ProviderLinks::Written::kBadPdu) {
    counting_.failed(row);
    return true;
  }
  links_.count(row, facts, t.retransmission || row.retransmission);
  draft.sent[static_cast<db::AssociationId>(t.association)].push_back(row.id);
  if (written == ProviderLinks::Written::kRefused) {
    // The connection cannot take it: counted as in flight there, and that association
    // is aborted once the rows say so, so its loss moves the message like the others.
    draft.failed = static_cast<db::AssociationId>(t.association);
    return false;
  }
  return true;
}

ProviderCore::Round ProviderCore::decideRound() {
  links_.release();  // what waited for the store to write again
  Round round;
  if (links_.all().empty() || !store_.healthy() || !host_.mayDeliver(spid_)) return round;
  const std::uint32_t functions = links_.usableFunctions();
  if (functions == 0) return round;
  throttle_.refreshGroup(host_.throttleGroupOf(spid_), egress_->outstanding().size());
  // Free congestion-window slots of the usable associations: at most that many requests
  // can leave now, so no more rows are read (an answer schedules the next round).
  const std::size_t capacity = links_.freeWindowSlots(functions);
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
  links_.release();
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

}  // namespace npac::npacd
