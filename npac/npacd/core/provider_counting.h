// ProviderCounting: one provider's counting for GET /metrics (core_metrics.h,
// docs/OPERATIONS.md "Metrics") and the latest PDUs written on its associations (GET
// /v1/providers/{spid}/egress, ProviderEgressView).
//
// The counters are on from construction. setCounting(false) (npacd --metrics off) drops
// them: from then on every count is a no-op, and on() tells the ProviderCore to skip the
// clock reads it makes only for them. While counting, it remembers what each confirmed
// request in flight is (its PduSeries: association function, NANC 111, and CMIP
// operation, X.711 §7.4) until it is answered or goes back to the queue; what an
// unconfirmed PDU or an answer is, the ProviderLinks keep with the PDU (provider_links.h).
//
// The latest kRecentPicks PDUs written are remembered whether counting is on or not.
//
// Threading: the owning ProviderCore's core thread only; no locks. Time: the wall time
// each pick is given.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "db/outbound_queue.h"
#include "npac/npacd/core/core_metrics.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

class ProviderCounting {
 public:
  ProviderCounting() = default;
  ProviderCounting(const ProviderCounting&) = delete;
  ProviderCounting& operator=(const ProviderCounting&) = delete;

  // Off drops the counters and the series of the requests in flight; on starts afresh.
  void setCounting(bool on);
  bool on() const { return counters_ != nullptr; }
  // The counters for a scrape; none while counting is off.
  const ProviderCounters* counters() const { return counters_.get(); }

  // A queued row written on the wire, first send or not: counted sent (and retransmitted),
  // and a confirmed one's series remembered until answered. Its series; none while off.
  std::optional<PduSeries> written(const db::QueuedMessage& row, bool confirmed, bool retransmission);
  // A queued row whose stored PDU can never leave (not a ROSE Invoke): counted failed.
  void failed(const db::QueuedMessage& row);
  // A confirmed request's answer: its acknowledged or failed count, and it is forgotten.
  void answered(db::MessageId message, ProviderCounters::Outcome outcome);
  // A confirmed request back in the queue: its series is forgotten.
  void forget(db::MessageId message) { in_flight_series_.erase(message); }
  // An unconfirmed PDU or an answer was written: acknowledged (docs/OPERATIONS.md).
  void acknowledged(const PduSeries& series);
  // Round trips (seconds) of a response to a request and of a heartbeat (NANC 404).
  void responseRtt(double seconds);
  void heartbeatRtt(double seconds);
  // A recovery request accepted (NANC 351).
  void recoverySession();

  // A PDU was written on `association` at `at` (kept even while counting is off).
  void picked(db::AssociationId association, associations::AssociationFunction function, bool retransmission,
              db::TimeMs at);
  // The latest kRecentPicks of them, oldest first.
  std::vector<ProviderEgressView::Pick> recent() const;

 private:
  std::unique_ptr<ProviderCounters> counters_ = std::make_unique<ProviderCounters>();
  std::unordered_map<db::MessageId, PduSeries> in_flight_series_;  // confirmed requests'
  // The latest kRecentPicks PDUs written (a ring; next_pick_ counts every one written).
  struct RecentPick {
    db::AssociationId association = 0;
    associations::AssociationFunction function = associations::AssociationFunction::kNotifications;
    bool retransmission = false;
    db::TimeMs at = 0;
  };
  std::array<RecentPick, kRecentPicks> recent_{};
  std::uint64_t next_pick_ = 0;
};

}  // namespace npac::npacd
