// ProviderHeartbeats: the application heartbeat of one provider's associations (NANC 404),
// off by default. After `heartbeat_interval` with nothing received on an association, a
// confirmed M-EVENT-REPORT heartbeat is sent on it (event type 1.3.6.1.4.1.103.7.0.0.90.5.1
// on the NPAC SMS object lnpNpacSms, instance cmip::npacSmsInstance(), info
// Heartbeat{sentAt}); no answer within `heartbeat_timeout` makes the association silent:
// tick() names it, and the ProviderCore aborts it (its messages then move as on any loss).
// The heartbeat's invoke id comes from the provider's one allocator and stays reserved
// until answered, so it can never equal an outstanding request's; only an answer with that
// id ON that association completes it.
//
// It keeps, per bound association: its link (to send on), when it last received anything,
// the heartbeat unanswered on it (one at most) and the latest answered one's round trip.
//
// Threading: the owning ProviderCore's core thread only; no locks. Time: the `now` each
// call is given, and the TimeSource's wall clock for the heartbeat's sentAt.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "associations/outstanding.h"
#include "common/time_source.h"
#include "db/outbound_queue.h"
#include "npac/npacd/core/association_link.h"
#include "tunables/registry.h"

namespace npac::npacd {

class ProviderHeartbeats {
 public:
  // `registry` and `clock` outlive it; the tunables are `spid`'s.
  ProviderHeartbeats(std::string spid, tunables::TunableRegistry& registry, const common::TimeSource& clock);
  ProviderHeartbeats(const ProviderHeartbeats&) = delete;
  ProviderHeartbeats& operator=(const ProviderHeartbeats&) = delete;

  // Association `id` was bound on `link` at `now` (its silence starts then).
  void add(db::AssociationId id, std::shared_ptr<AssociationLink> link, associations::TimePoint now);
  // It ended: forgotten; the invoke id of its unanswered heartbeat, if any, to release.
  std::optional<associations::InvokeId> forget(db::AssociationId id);
  // Something arrived on `id`: its silence starts again.
  void received(db::AssociationId id, associations::TimePoint now);
  // An answer with `invoke_id` on `id`: if it answers that association's heartbeat, the
  // heartbeat is complete and its round trip (seconds) returned — the caller releases the
  // invoke id; none: it is not a heartbeat's answer.
  std::optional<double> answered(db::AssociationId id, associations::InvokeId invoke_id, associations::TimePoint now);
  // At `now`: a heartbeat on each association silent for heartbeat_interval (invoke ids
  // reserved from `ids`), and the associations whose heartbeat passed heartbeat_timeout
  // unanswered, to abort. Nothing while heartbeat_interval is 0.
  std::vector<db::AssociationId> tick(associations::TimePoint now, associations::OutstandingRequests& ids);
  // The latest answered heartbeat's round trip on `id`, in seconds.
  std::optional<double> rtt(db::AssociationId id) const;

 private:
  struct State {
    std::shared_ptr<AssociationLink> link;
    associations::TimePoint last_received{};
    std::optional<associations::InvokeId> heartbeat;  // one unanswered at most
    associations::TimePoint sent_at{};
    std::optional<double> rtt_seconds;  // the latest answered heartbeat's
  };

  std::string spid_;
  tunables::TunableRegistry& registry_;
  const common::TimeSource& clock_;
  std::map<db::AssociationId, State> associations_;
};

}  // namespace npac::npacd
