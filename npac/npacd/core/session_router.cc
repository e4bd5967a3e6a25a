// SessionRouter: see session_router.h.
#include "npac/npacd/core/session_router.h"

#include <spdlog/spdlog.h>

#include "db/storage_health.h"
#include "npac/npacd/core/association_manager.h"
#include "npac/npacd/core/bind_admission.h"
#include "npac/npacd/core/core_inbox.h"
#include "npac/npacd/core/inbound_broker.h"
#include "npac/npacd/core/provider_cores.h"
#include "npac/npacd/core/shard_route.h"

namespace npac::npacd {
namespace as = npac::associations;

void SessionRouter::onConnectIndication(const std::shared_ptr<Session>& session,
                                        const cmip::ConnectIndication& indication) {
  admission_.onConnectIndication(session, indication);
}

void SessionRouter::onRose(const std::shared_ptr<Session>& session, cmip::RoseApdu apdu) {
  ProviderCore* provider = providers_.find(session->spid);
  if (provider == nullptr) return;
  const db::AssociationId id = session->associationId();
  provider->onReceived(id);
  if (!std::holds_alternative<cmip::RoseInvoke>(apdu)) {
    provider->onAnswer(id, apdu);
    return;
  }
  auto& invoke = std::get<cmip::RoseInvoke>(apdu);
  auto decoded = cmip::fromRose(invoke);
  if (!decoded.isOk()) {
    rejectInvoke(*session, invoke, decoded.status());
    return;
  }
  if (provider->onProviderAction(id, *decoded)) return;
  InboundRequest request;
  request.spid = session->spid;
  request.association_id = id;
  request.function_mask = session->function_mask;
  request.nsap_hex = session->nsap().toHex();
  request.invoke_id = invoke.invokeId;
  request.opcode = static_cast<cmip::CmipOpcode>(invoke.opcode.localValue());
  request.pdu = cmip::encodeRoseApdu(apdu);
  request.received_at = clock_.wallMs();
  if (!route_.inboundHere()) {
    route_.inboundHome().inbox().postInbound(std::move(request));  // one place the application polls
    return;
  }
  inbound_.add(std::move(request));
}

void SessionRouter::rejectInvoke(Session& session, const cmip::RoseInvoke& invoke, const cmip::Status& why) {
  // An operation CMIP does not define, or an argument not of its operation's type, is
  // answered at once with a ROSE Reject (X.880 InvokeProblem; X.711 leaves no other
  // answer for an Invoke it cannot decode) and never reaches the application: nobody
  // there could answer it. The association stays up.
  const cmip::RoseReject reject = cmip::rejectInvoke(invoke, why);
  const std::string opcode = invoke.opcode.isLocal()
                                 ? std::to_string(invoke.opcode.localValue())
                                 : std::get<cmip::Oid>(invoke.opcode.value).toString();
  spdlog::warn("SPID {} association {}: invoke id {} opcode {} rejected ({}): {}", session.spid,
               session.associationId(), invoke.invokeId, opcode,
               cmip::rejectProblemName(reject.kind, reject.problem), why.toString());
  session.sendRoseEncoded(cmip::encodeRoseApdu(cmip::RoseApdu{reject}));
}

void SessionRouter::onWritten(const std::shared_ptr<Session>& session, std::int64_t tag) {
  if (ProviderCore* provider = providers_.find(session->spid)) provider->onWritten(session->associationId(), tag);
}

void SessionRouter::onClosed(const std::shared_ptr<Session>& session, const std::string& reason, bool orderly) {
  logEvent(orderly ? db::AssociationEventKind::kRelease : db::AssociationEventKind::kAbort,
           *session, reason);
  spdlog::info("association {} {}: SPID {} NSAP {} mask {}: {}", session->associationId(),
               orderly ? "released" : "aborted", session->spid, session->nsap().toHex(),
               as::FunctionMask(static_cast<std::uint8_t>(session->function_mask)).toString(),
               reason);
  if (ProviderCore* provider = providers_.find(session->spid)) provider->onLost(session->associationId());
}

void SessionRouter::logEvent(db::AssociationEventKind kind, const Session& session, const std::string& reason,
                             db::AssociationId id) {
  db::AssociationEvent event;
  event.at = clock_.wallMs();
  event.kind = kind;
  event.spid = session.spid;
  event.nsap.assign(session.nsap().octets().begin(), session.nsap().octets().end());
  event.association_id = id != 0 ? id : session.associationId();
  event.function_mask = session.function_mask;
  event.recovery_mode = session.recovery_mode;
  if (kind != db::AssociationEventKind::kBind) event.bound_at = session.bound_at_ms;
  event.reason = reason;
  db::Status status = db::AssociationLogStore(db_).append(event).status();
  if (!status.isOk() && !db::isStorageFailure(status)) {
    spdlog::error("association log: {}", status.toString());
  }
}

}  // namespace npac::npacd
