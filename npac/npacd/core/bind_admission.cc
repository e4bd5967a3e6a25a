// BindAdmission (bind_admission.h): the decoded NPAC access control → BindRequest
// (cmip_bind.h) → provisioning facts (provisioning.h) → BindGate with the live tunables
// and the provider's live associations → AARE accepted, or AARE rejected with the
// diagnostic (rejected-transient when the NPAC's own storage failed), an association-log
// row and a log line.
#include "npac/npacd/core/bind_admission.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "associations/cmip_bind.h"
#include "associations/provisioning.h"
#include "cmip/npac_bind_refusal.h"
#include "cmip/oids.h"
#include "db/lease_store.h"
#include "db/storage_health.h"
#include "db/transaction.h"
#include "npac/npacd/core/session_link.h"
#include "npac/npacd/npac_keys.h"

namespace npac::npacd {
namespace as = npac::associations;

void BindAdmission::recordRefusal(const Session& session, const std::string& spid, std::uint32_t mask,
                                       bool recovery, const std::string& code, const std::string& reason) {
  spdlog::warn("bind rejected: SPID {} NSAP {} mask {} from {}: {} ({})", spid.empty() ? "-" : spid,
               session.nsap().toHex(), as::FunctionMask(static_cast<std::uint8_t>(mask)).toString(),
               session.peer(), reason, code);
  if (counting_) ++counters_.refused[code];  // the reason codes are a fixed set (bind_diagnostic.h)
  db::AssociationEvent event;
  event.at = clock_.wallMs();
  event.kind = db::AssociationEventKind::kReject;
  event.spid = spid;
  event.nsap.assign(session.nsap().octets().begin(), session.nsap().octets().end());
  event.function_mask = mask;
  event.recovery_mode = recovery;
  event.reason = reason;
  event.diagnostic = code;
  // As AssociationManager::logEvent: a row that cannot be written is said; a storage
  // failure is already reported (and retried) by the storage health.
  db::Status status = db::AssociationLogStore(db_).append(event).status();
  if (!status.isOk() && !db::isStorageFailure(status)) spdlog::error("association log: {}", status.toString());
}

void BindAdmission::rejectBind(const std::shared_ptr<Session>& session,
                                    const cmip::ConnectIndication& ind, const std::string& spid,
                                    std::uint32_t mask, bool recovery, const std::string& code,
                                    const std::string& reason, std::int32_t diagnostic,
                                    cmip::AssociateResult result) {
  recordRefusal(*session, spid, mask, recovery, code, reason);
  // The ACSE diagnostic is coarse (seven key and signature problems share
  // authentication-failure); the AARE also says exactly why (cmip/npac_bind_refusal.h).
  cmip::Aare refusal =
      cmip::refusalFor(ind.aarq, {cmip::DiagnosticSource::kServiceUser, diagnostic}, result);
  const auto& user_information = ind.aarq.userInformation;
  const cmip::External* cmip_info = cmip::findCmipUserInfo(user_information, std::nullopt);
  if (cmip_info == nullptr && !user_information.empty()) cmip_info = &user_information.front();
  cmip::attachBindRefusal(refusal, {code, reason}, cmip_info);
  session->reject(refusal);
  host_.forgetUnbound(*session);
}

// The database failed while admitting a bind: not the provider's fault, so the AARE is
// rejected-transient (X.227 §7.1.5.4) with storage-unavailable. The provider and the bind
// log line get the category only; the file, errno and remedy are logged by
// db/storage_health.h once per state change, not once per refused bind.
void BindAdmission::rejectStorageUnavailable(const std::shared_ptr<Session>& session,
                                                  const cmip::ConnectIndication& ind,
                                                  const as::BindRequest& request,
                                                  const db::Status& status) {
  const as::BindDiagnostic why = as::BindDiagnostic::kStorageUnavailable;
  rejectBind(session, ind, request.spid, request.functions.bits(), request.recovery_mode,
             std::string(as::toString(why)),
             std::string(as::describe(why)) + " (" + db::toString(status.code()) + ")",
             static_cast<std::int32_t>(as::acseDiagnostic(why)),
             cmip::AssociateResult::kRejectedTransient);
}

void BindAdmission::onConnectIndication(const std::shared_ptr<Session>& session,
                                             const cmip::ConnectIndication& ind) {
  if (host_.stopping()) {
    // Transient (X.227 §7.1.5.4): the same bind succeeds once an npacd is up again.
    rejectBind(session, ind, "", 0, false, "shutting-down", "npacd is shutting down",
               cmip::user_diagnostic::kNoReasonGiven, cmip::AssociateResult::kRejectedTransient);
    return;
  }
  if (ind.acse_refusal) {
    // Refused by ACSE itself (X.227 §7.1.5.5), before any NPAC access control is read: a
    // wrong application context or no common ACSE version. Logged and recorded like every
    // other refusal (docs/OPERATIONS.md "Admission").
    const bool context = ind.acse_refusal->source == cmip::DiagnosticSource::kServiceUser;
    recordRefusal(*session, "", 0, false, context ? "application-context-not-supported" : "no-common-acse-version",
                  context ? "the AARQ's application context " + ind.aarq.applicationContext.toString() +
                                " is not systems-management (" + cmip::oids::kSystemsManagementContext.toString() + ")"
                          : "the AARQ's protocol version does not include ACSE version 1");
    session->reject(cmip::refusalFor(ind.aarq, *ind.acse_refusal));
    host_.forgetUnbound(*session);
    return;
  }
  std::optional<as::BindRequest> request;
  if (ind.access_control) request = as::bindRequestFrom(*ind.access_control);
  if (!request) {
    const as::BindDiagnostic why = as::missingAccessControlDiagnostic(ind);
    std::string reason(as::describe(why));
    if (why == as::BindDiagnostic::kBadAccessControl) reason += ": " + ind.bind_status.toString();
    rejectBind(session, ind, "", 0, false, std::string(as::toString(why)), reason,
               static_cast<std::int32_t>(as::acseDiagnostic(why)));
    return;
  }
  // npacd --threads N: the provider may live on another core thread (core_shards.h); the
  // bind is admitted there, with that thread's view of the provider's associations.
  if (host_.handOffElsewhere(session, request->spid)) return;
  // Decided at the end of this turn with every other bind that arrived in it, in one
  // transaction (bind_queue.h).
  session->decideLater();
  binds_.add(PendingBind{session, ind, std::move(*request)});
  postAdmitBinds();
}

void BindAdmission::postAdmitBinds() {
  if (binds_posted_) return;
  binds_posted_ = true;
  boost::asio::post(io_, [this] { admitBinds(); });
}

// One batch of waiting binds (BindQueue::takeBatch), decided in ONE transaction: each
// bind's durable decisions — its sequence number (replay protection), its lease when
// taken, the association-log row — are a savepoint in it, and the transaction commits
// before any of them is answered: one fsync per batch at --durability full. If the
// commit fails, every bind of the batch is refused transiently and nothing of them is
// kept. Refusals are answered at once (their log rows commit with the batch).
void BindAdmission::admitBinds() {
  binds_posted_ = false;
  std::vector<PendingBind> batch = binds_.takeBatch();
  if (!binds_.empty()) postAdmitBinds();  // a provider's later binds, after this batch's are live
  db::Transaction transaction(db_);
  const db::Status begun = transaction.begin();
  std::vector<AdmittedBind> admitted;
  for (PendingBind& bind : batch) {
    if (bind.session->closed()) continue;  // ended while waiting: nothing was decided
    if (!begun.isOk()) {
      rejectStorageUnavailable(bind.session, bind.indication, bind.request, begun);
      continue;
    }
    if (std::optional<AdmittedBind> decided = admit(bind)) admitted.push_back(std::move(*decided));
  }
  if (!begun.isOk()) return;
  const db::Status committed = transaction.commit();
  if (!admitted.empty() && committed.isOk() && counting_) ++counters_.commits;
  for (AdmittedBind& bind : admitted) {
    if (!committed.isOk()) {
      rejectStorageUnavailable(bind.pending.session, bind.pending.indication, bind.pending.request, committed);
      continue;
    }
    complete(bind);
  }
}

// The live tunables a bind is checked against (BindGate), for `spid`.
as::BindTunables BindAdmission::bindTunables(const std::string& spid) const {
  as::BindTunables tunables;
  tunables.srr = registry_.get(tunables::kSrr, spid);
  tunables.duplicate_bind = registry_.get(tunables::kDuplicateBind, spid) == tunables::DuplicateBind::kReject
                                ? as::DuplicateBind::kReject
                                : as::DuplicateBind::kReplace;
  tunables.max_associations_per_sp = static_cast<std::uint32_t>(registry_.get(tunables::kMaxAssociationsPerSp, spid));
  tunables.departure_time_window =
      std::chrono::duration_cast<std::chrono::seconds>(registry_.get(tunables::kDepartureTimeWindow, spid));
  return tunables;
}

// Admission of one bind inside the batch's transaction, in steps: the facts read, the
// pure verdict (BindGate), then the durable decisions — the sequence number, the lease,
// the NPAC's signed answer, the association id and log row — as one savepoint in the
// batch's transaction: a failure leaves none of them and refuses the bind. A refusal is
// answered at once (nullopt).
std::optional<BindAdmission::AdmittedBind> BindAdmission::admit(PendingBind& bind) {
  const std::shared_ptr<Session>& session = bind.session;
  const as::BindRequest& request = bind.request;
  if (host_.stopping()) {
    rejectBind(session, bind.indication, "", 0, false, "shutting-down", "npacd is shutting down",
               cmip::user_diagnostic::kNoReasonGiven, cmip::AssociateResult::kRejectedTransient);
    return std::nullopt;
  }
  auto facts = as::loadBindFacts(db_, request);
  if (!facts.isOk()) {
    rejectStorageUnavailable(session, bind.indication, request, facts.status());
    return std::nullopt;
  }
  std::vector<as::LiveAssociation> live;
  if (ProviderCore* existing = providers_.find(request.spid); existing != nullptr) live = existing->live();
  const as::BindTunables tunables = bindTunables(request.spid);
  as::BindVerdict verdict = gate_.check({request, session->nsap(), facts->provider ? &*facts->provider : nullptr,
                                         facts->key ? &*facts->key : nullptr, live, tunables, clock_.wallTime()});
  db::Transaction decisions(db_);
  if (verdict.admitted()) {
    if (db::Status begun = decisions.begin(); !begun.isOk()) {
      rejectStorageUnavailable(session, bind.indication, request, begun);
      return std::nullopt;
    }
  }
  if (!consumeSequence(bind, verdict, decisions)) return std::nullopt;
  if (!verdict.admitted()) {
    rejectBind(session, bind.indication, request.spid, request.functions.bits(), request.recovery_mode,
               std::string(as::toString(*verdict.rejection)), verdict.reason,
               static_cast<std::int32_t>(as::acseDiagnostic(*verdict.rejection)));
    return std::nullopt;
  }
  AdmittedBind out;  // takes `bind` once decided: session and request refer to it
  if (!holdLease(bind, decisions, out) || !signAnswer(bind, decisions, out) ||
      !openAssociation(bind, *facts, verdict, decisions, out)) {
    return std::nullopt;
  }
  out.pending = std::move(bind);
  return out;
}

// Replay state (bind_gate.h): an authentic, fresh bind's sequence number is consumed even
// if a later check refused it. False: the bind was refused and answered.
bool BindAdmission::consumeSequence(PendingBind& bind, as::BindVerdict& verdict, db::Transaction& decisions) {
  if (!verdict.consume_sequence) return true;
  db::Status recorded = as::recordSequence(db_, bind.request, *verdict.consume_sequence);
  // Only KeyStore's own answers mean the number is taken (a racing bind) or the key
  // gone; any other failure is the database's — a full disk is not a replay.
  if (recorded.isOk() || !verdict.admitted()) return true;
  decisions.rollback();  // the refusal's log row commits with the batch
  if (recorded.code() == db::Status::Code::kInvalidArgument) {
    verdict.rejection = as::BindDiagnostic::kSequenceReplayed;
  } else if (recorded.code() == db::Status::Code::kNotFound) {
    verdict.rejection = as::BindDiagnostic::kUnknownKey;
  } else {
    rejectStorageUnavailable(bind.session, bind.indication, bind.request, recorded);
    return false;
  }
  verdict.reason = std::string(as::describe(*verdict.rejection)) + ": " + recorded.message();
  return true;
}

// Ownership (db/lease_store.h, docs/OPERATIONS.md "Two sites"): the provider's logical
// association lives on the node holding its lease. A lease held here but not renewed
// lately (this node was paused) is renewed first: if another node took it meanwhile,
// this node's associations of the provider go, and the bind is decided afresh. False:
// the bind was refused and answered.
bool BindAdmission::holdLease(PendingBind& bind, db::Transaction& decisions, AdmittedBind& out) {
  const std::string& spid = bind.request.spid;
  if (leases_.held(spid) && !leases_.valid(spid)) {
    db::Status renewed = leases_.renewNow(spid);
    if (renewed.code() == db::Status::Code::kFenced) {
      providers_.providerLost(spid, renewed);
    } else if (!renewed.isOk()) {
      decisions.rollback();
      rejectStorageUnavailable(bind.session, bind.indication, bind.request, renewed);
      return false;
    }
  }
  out.lease_started = clock_.now();
  if (leases_.held(spid)) return true;
  auto lease = leases_.take(spid);
  if (!lease.isOk()) {
    decisions.rollback();
    rejectStorageUnavailable(bind.session, bind.indication, bind.request, lease.status());
    return false;
  }
  if (!lease->acquired) {
    decisions.rollback();
    rejectOwnedElsewhere(bind, lease->lease);
    return false;
  }
  out.taken_epoch = lease->lease.epoch;
  if (lease->previous_owner && *lease->previous_owner != leases_.node()) {
    spdlog::warn("provider {}: taken over from npacd node '{}' (lease epoch {}); {} message(s) it had in "
                 "flight are queued again as retransmissions",
                 spid, *lease->previous_owner, lease->lease.epoch, lease->requeued);
  } else if (lease->requeued > 0) {
    spdlog::info("provider {}: lease epoch {}; {} message(s) in flight before are queued again", spid,
                 lease->lease.epoch, lease->requeued);
  }
  return true;
}

// Another node holds the provider's lease: refused transiently, naming the node.
void BindAdmission::rejectOwnedElsewhere(const PendingBind& bind, const db::Lease& lease) {
  const as::BindDiagnostic why = as::BindDiagnostic::kOwnedElsewhere;
  const db::TimeMs left = lease.expires_at - clock_.wallMs();
  const as::BindRequest& request = bind.request;
  rejectBind(bind.session, bind.indication, request.spid, request.functions.bits(), request.recovery_mode,
             std::string(as::toString(why)),
             std::string(as::describe(why)) + ": provider " + request.spid + " is served by npacd node '" +
                 lease.owner + "' (lease epoch " + std::to_string(lease.epoch) + ", " + std::to_string(left / 1000) +
                 "." + std::to_string((left % 1000) / 100) + " s left unless renewed)",
             static_cast<std::int32_t>(as::acseDiagnostic(why)), cmip::AssociateResult::kRejectedTransient);
}

// Mutual authentication: the accepting AARE carries the NPAC's own signed access control
// (docs/PROTOCOL.md "The NPAC's answer"), made before the association exists so a failure
// leaves nothing to undo. False: the bind was refused and answered.
bool BindAdmission::signAnswer(PendingBind& bind, db::Transaction& decisions, AdmittedBind& out) {
  const as::BindRequest& request = bind.request;
  auto npac_access_control = signBindResponse(db_, registry_.get(tunables::kNpacSystemId), clock_.wallMs(),
                                              request.functions, request.recovery_mode, &gate_.keys());
  if (!npac_access_control.isOk()) {
    decisions.rollback();
    spdlog::error("cannot sign the bind response: {}", npac_access_control.status().message());
    rejectBind(bind.session, bind.indication, request.spid, request.functions.bits(), request.recovery_mode,
               "npac-key-unavailable", npac_access_control.status().message(), cmip::user_diagnostic::kNoReasonGiven);
    return false;
  }
  out.npac_access_control = std::move(npac_access_control.value());
  return true;
}

// The association's id (unique across the nodes of a PostgreSQL database), its spec, the
// session's binding and the log row; then the savepoint is released. False: the bind was
// refused and answered.
bool BindAdmission::openAssociation(PendingBind& bind, const as::BindFacts& facts, const as::BindVerdict& verdict,
                                         db::Transaction& decisions, AdmittedBind& out) {
  const std::shared_ptr<Session>& session = bind.session;
  const as::BindRequest& request = bind.request;
  std::int64_t id = 0;
  if (db_.backend() == db::Backend::kPostgres) {
    auto drawn = db::LeaseStore(db_).nextAssociationId();  // the queue's rows name their association
    if (!drawn.isOk()) {
      decisions.rollback();
      rejectStorageUnavailable(session, bind.indication, request, drawn.status());
      return false;
    }
    id = *drawn;
  } else {
    id = host_.nextLocalAssociationId();
  }
  const as::NsapTraffic traffic = as::trafficFor(facts, session->nsap());
  out.spec.id = static_cast<as::AssociationId>(id);
  out.spec.nsap = session->nsap();
  out.spec.functions = request.functions;
  out.spec.bound_order = ++bind_order_;
  out.spec.weight = traffic.weight;
  out.spec.relative_cost = traffic.relative_cost;
  out.replaced = verdict.decision.replaced;
  session->spid = request.spid;
  session->function_mask = request.functions.bits();
  session->recovery_mode = request.recovery_mode;
  session->bound_at_ms = clock_.wallMs();
  host_.logEvent(db::AssociationEventKind::kBind, *session,
                 verdict.decision.replaced ? "bind accepted, replacing an association" : "bind accepted", id);
  if (db::Status released = decisions.commit(); !released.isOk()) {
    rejectStorageUnavailable(session, bind.indication, request, released);
    return false;
  }
  return true;
}

// After the batch committed: the lease is held, the AARE accepted, the association live.
void BindAdmission::complete(AdmittedBind& bind) {
  const std::shared_ptr<Session>& session = bind.pending.session;
  const as::BindRequest& request = bind.pending.request;
  const std::string& spid = request.spid;
  const std::int64_t id = static_cast<std::int64_t>(bind.spec.id);
  if (bind.taken_epoch) {
    leases_.hold(spid, *bind.taken_epoch, bind.lease_started);
    // Taking the lease put what was in flight back to queued (LeaseStore::acquire).
    providers_.leaseTaken(spid);
  }
  cmip::Aare aare;
  aare.applicationContext = cmip::oids::kSystemsManagementContext;
  cmip::attachNpacAccessControl(aare, bind.npac_access_control,
                                cmip::findCmipUserInfo(bind.pending.indication.aarq.userInformation, std::nullopt));
  session->accept(id, aare);
  host_.forgetUnbound(*session);
  ProviderCore& provider = providers_.coreFor(spid);
  provider.onBound(std::make_shared<SessionLink>(session), bind.spec, request.recovery_mode);
  if (counting_) ++counters_.accepted;
  spdlog::info("bind accepted: SPID {} NSAP {} mask {} association {} from {}{}", spid,
               session->nsap().toHex(), request.functions.toString(), id, session->peer(),
               request.recovery_mode ? " (recovery mode)" : "");
  if (bind.replaced) {
    provider.abort(static_cast<db::AssociationId>(*bind.replaced), "replaced by a new bind (NANC 386)");
  }
}

}  // namespace npac::npacd
