// ProviderRecovery: see provider_recovery.h.
#include "npac/npacd/core/provider_recovery.h"

#include <spdlog/spdlog.h>

#include "associations/cmip_bind.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"

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

// The answers to one recovery action, on the association it came on.
class RecoveryReply {
 public:
  RecoveryReply(std::shared_ptr<AssociationLink> session, const std::string& spid, const cmip::CmipInvoke& invoke,
                const cmip::ActionArgument& action)
      : session_(std::move(session)), spid_(spid), invoke_id_(invoke.invokeId), action_(action) {}

  // processingFailure, logged with why.
  void error(const std::string& why) const {
    spdlog::warn("SPID {}: recovery action refused: {}", spid_, why);
    cmip::CmipErrorReply error{cmip::InvokeId{invoke_id_}, cmip::CmipError::kProcessingFailure, std::nullopt};
    session_->send(cmip::encodeRoseApdu(cmip::toRose(error)), 0);
  }

  // Both actions address the NPAC SMS object (docs/PROTOCOL.md): class lnpNpacSms,
  // instance CN=NPAC. Another object is not ours to recover from: answered
  // noSuchObjectClass / noSuchObjectInstance, and true.
  bool refusedAnotherObject() const {
    if (action_.selection.baseClass != cmip::ObjectClass::global(cmip::oids::kLnpNpacSmsClass)) {
      noSuchObject(cmip::CmipError::kNoSuchObjectClass, "the class is not lnpNpacSms");
      return true;
    }
    if (action_.selection.baseInstance != cmip::npacSmsInstance()) {
      noSuchObject(cmip::CmipError::kNoSuchObjectInstance,
                   "the instance is not the NPAC SMS's (distinguishedName CN=NPAC)");
      return true;
    }
    return false;
  }

  // The ActionResult; with a messageCount for a recovery request.
  void result(std::optional<std::int64_t> count) const {
    cmip::ActionResult result;
    if (count) result.actionReply = cmip::ActionResult::ActionReply{action_.actionType, cmip::encodeRecoveryReply(*count)};
    cmip::CmipResult reply{invoke_id_, cmip::CmipOpcode::kActionConfirmed, result};
    session_->send(cmip::encodeRoseApdu(cmip::toRose(reply)), 0);
  }

 private:
  void noSuchObject(cmip::CmipError error, const std::string& why) const {
    // X.711 §7.4: noSuchObjectClass's parameter is the ObjectClass, noSuchObjectInstance's
    // the ObjectInstance that was named.
    spdlog::warn("SPID {}: recovery action on another object refused: {}", spid_, why);
    cmip::EncodeBuffer buf(0);
    cmip::BerWriter w(buf);
    if (error == cmip::CmipError::kNoSuchObjectClass) {
      cmip::writeId(w, action_.selection.baseClass, cmip::kObjectClassTags);
    } else {
      cmip::writeObjectInstance(w, action_.selection.baseInstance);
    }
    cmip::CmipErrorReply reply{cmip::InvokeId{invoke_id_}, error, cmip::OpaqueBer{buf.toVector()}};
    session_->send(cmip::encodeRoseApdu(cmip::toRose(reply)), 0);
  }

  std::shared_ptr<AssociationLink> session_;
  const std::string& spid_;
  std::int32_t invoke_id_;
  const cmip::ActionArgument& action_;
};


}  // namespace

ProviderRecovery::ProviderRecovery(std::string spid, const common::TimeSource& clock, DeliveryStore& store,
                                   as::ProviderEgress& egress, ProviderLinks& links, ProviderCounting& counting,
                                   Host host)
    : spid_(std::move(spid)),
      clock_(clock),
      store_(store),
      egress_(egress),
      links_(links),
      counting_(counting),
      host_(std::move(host)) {}

bool ProviderRecovery::onAction(db::AssociationId association, const cmip::CmipInvoke& invoke) {
  auto* action = std::get_if<cmip::ActionArgument>(&invoke.argument);
  if (action == nullptr) return false;
  const bool request = action->actionType == cmip::ActionTypeId::global(cmip::oids::kLnpRecoveryRequestAction);
  const bool complete = action->actionType == cmip::ActionTypeId::global(cmip::oids::kLnpRecoveryCompleteAction);
  if (!request && !complete) return false;
  std::shared_ptr<AssociationLink> link = links_.link(association);
  if (!link) return false;
  const RecoveryReply reply(std::move(link), spid_, invoke, *action);
  if (reply.refusedAnotherObject()) return true;
  if (complete) {
    auto released = egress_.recovery().complete();
    if (!released.isOk()) {
      reply.error(released.status().toString());
      return true;
    }
    reply.result(std::nullopt);
    spdlog::info("SPID {}: recovery complete, normal mode; {} held message(s) follow", spid_,
                 released.value().size());
    host_.wake_delivery();
    return true;
  }
  as::RecoveryRequest wanted;
  if (action->actionInfoArg) {
    auto range = cmip::decodeRecoveryRequest(action->actionInfoArg->bytes);
    if (!range.isOk()) {
      reply.error("undecodable recovery request: " + range.status().toString());
      return true;
    }
    wanted = as::recoveryRequestFrom(range.value());
  }
  std::string refusal;
  const std::optional<std::int64_t> count = answer(wanted, &refusal);
  if (!count) {
    reply.error(refusal);
    return true;
  }
  reply.result(*count);
  spdlog::info("SPID {}: recovery request answered with {} message(s)", spid_, *count);
  return true;
}

std::optional<std::int64_t> ProviderRecovery::answer(const as::RecoveryRequest& wanted, std::string* refusal) {
  if (!host_.may_deliver()) {
    // Two sites: this node's lease on the provider is not renewed (db/lease_store.h).
    *refusal = "this NPAC node does not hold the provider's lease right now: bind again";
    return std::nullopt;
  }
  std::optional<DeliveryStore::CreatedRange> created;
  if (wanted.kind != as::RecoveryRequest::Kind::kUnacknowledged) {
    created = DeliveryStore::CreatedRange{toMs(wanted.from), toMs(wanted.to) + 1};
  }
  auto rows = store_.recoveryCandidates(spid_, created, kMaxRecoveryMessages);
  if (!rows.isOk()) {
    *refusal = "outbound queue unreadable: " + rows.status().toString();
    return std::nullopt;
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
  auto selected = egress_.recovery().answer(wanted, candidates);
  if (!selected.isOk()) {
    *refusal = selected.status().toString();
    return std::nullopt;
  }
  counting_.recoverySession();
  const std::int64_t count = sendSelected(selected.value(), by_id);
  store_.flush();  // the rows read `sent` before the PDUs leave (deliver())
  links_.release();
  return count;
}

std::int64_t ProviderRecovery::sendSelected(const std::vector<as::MessageId>& selected,
                                            const std::map<as::MessageId, const db::QueuedMessage*>& by_id) {
  const as::TimePoint now = clock_.now();
  const db::TimeMs now_ms = clock_.wallMs();
  std::int64_t count = 0;
  for (as::MessageId id : selected) {
    const db::QueuedMessage& row = *by_id.at(id);
    as::OutboundMessage out;
    out.id = id;
    out.function = routingFunction(row.function_mask);
    out.confirmed = true;
    out.purpose = as::OutboundMessage::Purpose::kRecoveryAnswer;
    as::SendOutcome outcome = egress_.send(out, now);
    if (!outcome.ok()) break;  // window full: the provider asks again for the rest
    RowFacts facts = factsOf(row);
    facts.confirmed = true;
    if (facts.response || links_.write(*outcome.transmission, row, facts) != ProviderLinks::Written::kWritten) break;
    links_.count(row, facts, /*retransmission=*/false);
    if (row.state == db::MessageState::kQueued) {
      store_.markSent(spid_, {row.id}, static_cast<db::AssociationId>(outcome.transmission->association), now_ms);
    }
    ++count;
  }
  return count;
}

}  // namespace npac::npacd
