// SessionRouter: the SessionOwner (session.h) of every Session on one core thread — where
// each connection's events go. An AARQ goes to the thread's BindAdmission; a ROSE APDU of
// a bound association goes by SPID to its provider's ProviderCore (an answer, a recovery
// action), or, for a provider's own request the core does not handle, to the InboundBroker
// the application polls (thread 0's, through its CoreInbox, when sharded); an Invoke that
// does not decode is rejected at once. A written frame and an association's end go to the
// provider's core too, the end after its association-log row (logEvent, which the bind
// path writes through as well).
//
// Threading: the core thread only (every Session of the thread calls it there); no locks.
#pragma once

#include <memory>
#include <string>

#include "common/time_source.h"
#include "db/association_log_store.h"
#include "db/database.h"
#include "db/outbound_queue.h"
#include "npac/npacd/core/session.h"

namespace npac::npacd {

class BindAdmission;
class InboundBroker;
class ProviderCores;
class ShardRoute;

class SessionRouter : public SessionOwner {
 public:
  // Every reference outlives the router; `db` is the core's decisions connection (the
  // association log).
  SessionRouter(BindAdmission& admission, ProviderCores& providers, const ShardRoute& route, InboundBroker& inbound,
                db::Database& db, const common::TimeSource& clock)
      : admission_(admission), providers_(providers), route_(route), inbound_(inbound), db_(db), clock_(clock) {}
  SessionRouter(const SessionRouter&) = delete;
  SessionRouter& operator=(const SessionRouter&) = delete;

  void onConnectIndication(const std::shared_ptr<Session>& session,
                           const cmip::ConnectIndication& indication) override;
  void onRose(const std::shared_ptr<Session>& session, cmip::RoseApdu apdu) override;
  void onClosed(const std::shared_ptr<Session>& session, const std::string& reason, bool orderly) override;
  void onWritten(const std::shared_ptr<Session>& session, std::int64_t tag) override;

  // The association-log row of `session`'s event. `id`: the association's, when the row
  // is written before accept() gave it to the session (a bind's row, written in the
  // bind's transaction); 0: the session's own.
  void logEvent(db::AssociationEventKind kind, const Session& session, const std::string& reason,
                db::AssociationId id = 0);

 private:
  // A provider's Invoke that does not decode (cmip::fromRose refused it with `why`): ROSE
  // Reject on its association, one log line; it is not forwarded to the application.
  void rejectInvoke(Session& session, const cmip::RoseInvoke& invoke, const cmip::Status& why);

  BindAdmission& admission_;
  ProviderCores& providers_;
  const ShardRoute& route_;
  InboundBroker& inbound_;
  db::Database& db_;
  const common::TimeSource& clock_;
};

}  // namespace npac::npacd
