// BindAdmission: the admission of binds on one core thread (docs/OPERATIONS.md
// "Admission: the checks, in order"). An AARQ's ConnectIndication comes in; an AARE goes
// out — accepted, with the NPAC's signed access control, and the association handed to
// its provider's ProviderCore; or rejected with the diagnostic (rejected-transient when
// the NPAC's own storage failed or npacd is stopping), an association-log row and a log
// line either way.
//
// The steps, each its own function (bind_admission.cc):
//   onConnectIndication  refusals that need no database (stopping, ACSE's own refusal,
//                        a missing or undecodable access control), the hand-off to the
//                        provider's core thread (npacd --threads), else the BindQueue
//   admitBinds           one batch (bind_queue.h) in ONE transaction, answered after it
//                        committed; a failed commit refuses the whole batch transiently
//   admit                per bind: the facts read (associations/provisioning.h), the pure
//                        verdict (associations::BindGate: facts in, verdict out, no I/O),
//                        then the durable decisions as one savepoint — consumeSequence,
//                        holdLease, signAnswer, openAssociation
//   complete             after the commit: the lease held, the AARE accepted, the
//                        association live in its ProviderCore
//
// What admission needs of the rest of the core: the provider cores and the lease-loss path
// (ProviderCores, provider_cores.h); the shard hand-off, the listener and the association
// log it asks its Host (the AssociationManager).
//
// Threading: the core thread that owns the AssociationManager; not synchronised.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "associations/bind_gate.h"
#include "associations/provisioning.h"
#include "cmip/acse.h"
#include "cmip/upper_layers.h"
#include "common/time_source.h"
#include "db/association_log_store.h"
#include "db/database.h"
#include "npac/npacd/core/bind_queue.h"
#include "npac/npacd/core/provider_core.h"
#include "npac/npacd/core/provider_cores.h"
#include "npac/npacd/core/provider_leases.h"
#include "npac/npacd/core/session.h"
#include "tunables/registry.h"

namespace npac::db {
class Transaction;
}  // namespace npac::db

namespace npac::npacd {

class BindAdmission {
 public:
  class Host {
   public:
    virtual ~Host() = default;
    virtual bool stopping() const = 0;
    // npacd --threads N: true if `spid` lives on another core thread, where `session` has
    // been handed (core_shards.h); the bind is admitted there.
    virtual bool handOffElsewhere(const std::shared_ptr<Session>& session, const std::string& spid) = 0;
    // `session` is decided (bound, refused or handed off): no longer the Listener's.
    virtual void forgetUnbound(const Session& session) = 0;
    // The association id on SQLite (one npacd owns the file; unique across its threads).
    virtual std::int64_t nextLocalAssociationId() = 0;
    virtual void logEvent(db::AssociationEventKind kind, const Session& session, const std::string& reason,
                          db::AssociationId id) = 0;
  };
  // Bind admissions since start, when counting (npacd --metrics).
  struct Counters {
    std::uint64_t accepted = 0;
    std::uint64_t commits = 0;  // transactions that admitted at least one bind
    std::map<std::string, std::uint64_t> refused;  // by LnpBindRefusal reason code
  };

  BindAdmission(boost::asio::io_context& io, db::Database& db, tunables::TunableRegistry& registry,
                const common::TimeSource& clock, ProviderLeases& leases, ProviderCores& providers, Host& host)
      : io_(io), db_(db), registry_(registry), clock_(clock), leases_(leases), providers_(providers), host_(host) {}

  void onConnectIndication(const std::shared_ptr<Session>& session, const cmip::ConnectIndication& ind);
  void setCounting(bool on) { counting_ = on; }
  const Counters& counters() const { return counters_; }

 private:
  // A bind decided in a batch (admit), answered once the batch committed (complete).
  struct AdmittedBind {
    PendingBind pending;
    associations::AssociationSpec spec;
    cmip::LnpAccessControl npac_access_control;  // the NPAC's signed answer
    std::optional<associations::AssociationId> replaced;  // NANC 386: aborted once bound
    std::optional<std::int64_t> taken_epoch;              // the lease taken for this bind
    associations::TimePoint lease_started{};
  };

  void postAdmitBinds();  // admitBinds() at the end of this turn, once
  void admitBinds();
  std::optional<AdmittedBind> admit(PendingBind& bind);
  // admit()'s steps; each false when it refused (and answered) the bind.
  associations::BindTunables bindTunables(const std::string& spid) const;
  bool consumeSequence(PendingBind& bind, associations::BindVerdict& verdict, db::Transaction& decisions);
  bool holdLease(PendingBind& bind, db::Transaction& decisions, AdmittedBind& out);
  bool signAnswer(PendingBind& bind, db::Transaction& decisions, AdmittedBind& out);
  bool openAssociation(PendingBind& bind, const associations::BindFacts& facts,
                       const associations::BindVerdict& verdict, db::Transaction& decisions, AdmittedBind& out);
  void complete(AdmittedBind& bind);

  // The log line, the refusal counter and the association-log row of every refused bind.
  void recordRefusal(const Session& session, const std::string& spid, std::uint32_t mask, bool recovery,
                     const std::string& code, const std::string& reason);
  void rejectBind(const std::shared_ptr<Session>& session, const cmip::ConnectIndication& ind,
                  const std::string& spid, std::uint32_t mask, bool recovery, const std::string& code,
                  const std::string& reason, std::int32_t diagnostic,
                  cmip::AssociateResult result = cmip::AssociateResult::kRejectedPermanent);
  void rejectStorageUnavailable(const std::shared_ptr<Session>& session, const cmip::ConnectIndication& ind,
                                const associations::BindRequest& request, const db::Status& status);
  void rejectOwnedElsewhere(const PendingBind& bind, const db::Lease& lease);

  boost::asio::io_context& io_;
  db::Database& db_;
  tunables::TunableRegistry& registry_;
  const common::TimeSource& clock_;
  ProviderLeases& leases_;
  ProviderCores& providers_;  // the provider cores, and the leases' consequences for them
  Host& host_;
  associations::BindGate gate_;
  BindQueue binds_;            // received, decided at the end of the turn
  bool binds_posted_ = false;  // admitBinds() is posted
  std::uint64_t bind_order_ = 0;
  bool counting_ = true;
  Counters counters_;
};

}  // namespace npac::npacd
