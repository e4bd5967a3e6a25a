// ProviderCore: the provider's recovery actions (NANC 351 SWIM, docs/PROTOCOL.md):
//   lnpRecoveryRequest  1.3.6.1.4.1.103.7.0.0.90.6.1  M-ACTION, info RecoveryRequest (a
//                       time range or "everything not acknowledged"): the selected
//                       messages are sent, then the ActionResult with messageCount.
//   lnpRecoveryComplete 1.3.6.1.4.1.103.7.0.0.90.6.2  M-ACTION: back to normal mode; the
//                       messages held meanwhile (still queued) are delivered in order.
#include <spdlog/spdlog.h>

#include "associations/cmip_bind.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "npac/npacd/core/provider_core.h"

namespace npac::npacd {
namespace as = npac::associations;

namespace {

// Recovery answers more than this many messages in one request only in part (bounded work
// per event; the provider asks again).
constexpr std::size_t kMaxRecoveryMessages = 100000;

db::TimeMs toMs(as::WallTime time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
}
as::WallTime fromMs(db::TimeMs ms) { return as::WallTime(std::chrono::milliseconds(ms)); }

}  // namespace

bool ProviderCore::onProviderAction(db::AssociationId association, const cmip::CmipInvoke& invoke) {
  auto* action = std::get_if<cmip::ActionArgument>(&invoke.argument);
  if (action == nullptr) return false;
  const bool request = action->actionType == cmip::ActionTypeId::global(cmip::oids::kLnpRecoveryRequestAction);
  const bool complete = action->actionType == cmip::ActionTypeId::global(cmip::oids::kLnpRecoveryCompleteAction);
  if (!request && !complete) return false;
  auto link_entry = links_.find(association);
  if (link_entry == links_.end()) return false;
  std::shared_ptr<AssociationLink> session = link_entry->second.link;
  const std::string& spid = spid_;

  auto answerError = [&](const std::string& why) {
    spdlog::warn("SPID {}: recovery action refused: {}", spid, why);
    cmip::CmipErrorReply error{cmip::InvokeId{invoke.invokeId}, cmip::CmipError::kProcessingFailure, std::nullopt};
    session->send(cmip::encodeRoseApdu(cmip::toRose(error)), 0);
  };
  auto answerNoSuchObject = [&](cmip::CmipError error, const std::string& why) {
    // X.711 §7.4: noSuchObjectClass's parameter is the ObjectClass, noSuchObjectInstance's
    // the ObjectInstance that was named.
    spdlog::warn("SPID {}: recovery action on another object refused: {}", spid, why);
    cmip::EncodeBuffer buf(0);
    cmip::BerWriter w(buf);
    if (error == cmip::CmipError::kNoSuchObjectClass) {
      cmip::writeId(w, action->selection.baseClass, cmip::kObjectClassTags);
    } else {
      cmip::writeObjectInstance(w, action->selection.baseInstance);
    }
    cmip::CmipErrorReply reply{cmip::InvokeId{invoke.invokeId}, error, cmip::OpaqueBer{buf.toVector()}};
    session->send(cmip::encodeRoseApdu(cmip::toRose(reply)), 0);
  };
  auto answerResult = [&](std::optional<std::int64_t> count) {
    cmip::ActionResult result;
    if (count) result.actionReply = cmip::ActionResult::ActionReply{action->actionType, cmip::encodeRecoveryReply(*count)};
    cmip::CmipResult reply{invoke.invokeId, cmip::CmipOpcode::kActionConfirmed, result};
    session->send(cmip::encodeRoseApdu(cmip::toRose(reply)), 0);
  };

  // Both actions address the NPAC SMS object (docs/PROTOCOL.md): class lnpNpacSms,
  // instance CN=NPAC. Another object is not ours to recover from.
  if (action->selection.baseClass != cmip::ObjectClass::global(cmip::oids::kLnpNpacSmsClass)) {
    answerNoSuchObject(cmip::CmipError::kNoSuchObjectClass, "the class is not lnpNpacSms");
    return true;
  }
  if (action->selection.baseInstance != cmip::npacSmsInstance()) {
    answerNoSuchObject(cmip::CmipError::kNoSuchObjectInstance,
                       "the instance is not the NPAC SMS's (distinguishedName CN=NPAC)");
    return true;
  }

  if (complete) {
    auto released = egress_->recovery().complete();
    if (!released.ok()) {
      answerError(std::string(as::toString(released.error())));
      return true;
    }
    answerResult(std::nullopt);
    spdlog::info("SPID {}: recovery complete, normal mode; {} held message(s) follow", spid,
                 released.value().size());
    host_.wakeDelivery(spid_);
    return true;
  }

  as::RecoveryRequest wanted;
  if (action->actionInfoArg) {
    auto range = cmip::decodeRecoveryRequest(action->actionInfoArg->bytes);
    if (!range.isOk()) {
      answerError("undecodable recovery request: " + range.status().toString());
      return true;
    }
    wanted = as::recoveryRequestFrom(range.value());
  }
  if (!host_.mayDeliver(spid_)) {
    // Two sites: this node's lease on the provider is not renewed (db/lease_store.h).
    answerError("this NPAC node does not hold the provider's lease right now: bind again");
    return true;
  }
  auto rows = wanted.kind == as::RecoveryRequest::Kind::kUnacknowledged
                  ? store_.unacknowledged(spid, kMaxRecoveryMessages)
                    : store_.createdBetween(spid, toMs(wanted.from), toMs(wanted.to) + 1, kMaxRecoveryMessages);
  if (!rows.isOk()) {
    answerError("outbound queue unreadable: " + rows.status().toString());
    return true;
  }
  std::vector<as::RecoveryMessage> candidates;
  std::map<as::MessageId, const db::QueuedMessage*> by_id;
  for (const db::QueuedMessage& row : *rows) {
    // Answers to the provider's own requests are not messages it missed: deliver() sends
    // them in recovery mode too.
    if (factsOf(row).response) continue;
    candidates.push_back({static_cast<as::MessageId>(row.id), fromMs(row.created_at),
                          row.state == db::MessageState::kAcknowledged});
    by_id[static_cast<as::MessageId>(row.id)] = &row;
  }
  auto selected = egress_->recovery().answer(wanted, candidates);
  if (!selected.ok()) {
    answerError(std::string(as::toString(selected.error())));
    return true;
  }
  if (counters_) ++counters_->recovery_sessions;
  const as::TimePoint now = clock_.now();
  const db::TimeMs now_ms = clock_.wallMs();
  std::int64_t count = 0;
  for (as::MessageId id : selected.value()) {
    const db::QueuedMessage& row = *by_id[id];
    as::OutboundMessage out;
    out.id = id;
    out.function = routingFunction(row.function_mask);
    out.confirmed = true;
    out.purpose = as::OutboundMessage::Purpose::kRecoveryAnswer;
    as::SendOutcome outcome = egress_->send(out, now);
    if (!outcome.ok()) break;  // window full: the provider asks again for the rest
    Facts facts = factsOf(row);
    facts.confirmed = true;
    if (facts.response || write(*outcome.transmission, row, facts) != Written::kWritten) break;
    if (counters_) countWritten(row, facts, /*retransmission=*/false);
    if (row.state == db::MessageState::kQueued) {
      store_.markSent(spid_, {row.id}, static_cast<db::AssociationId>(outcome.transmission->association), now_ms);
    }
    ++count;
  }
  commitAndRelease();  // the rows read `sent` before the PDUs leave (deliver())
  answerResult(count);
  spdlog::info("SPID {}: recovery request answered with {} message(s)", spid, count);
  return true;
}

}  // namespace npac::npacd
