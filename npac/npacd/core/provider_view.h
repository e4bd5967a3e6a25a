// ProviderView: what operators see of one provider's logical association, read on demand
// from its ProviderCore's parts — the queue view with why its messages wait
// (docs/OPERATIONS.md "Why a message waits"), its associations as GET /v1/associations
// lists them, its figures for GET /metrics, and the latest PDUs its egress placed.
//
// A ProviderView is made by ProviderCore::view() and used at once: it holds references to
// the core's parts and must not outlive the call that made it. It decides nothing and
// sends nothing; queue() flushes the store's collected progress to count what is queued,
// and the throttle reads its level at the clock's now.
//
// Threading: the core thread only (the ProviderCore's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "associations/provider_egress.h"
#include "common/time_source.h"
#include "npac/npacd/core/core_metrics.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/provider_counting.h"
#include "npac/npacd/core/provider_heartbeats.h"
#include "npac/npacd/core/provider_host.h"
#include "npac/npacd/core/provider_links.h"
#include "npac/npacd/core/provider_throttle.h"

namespace npac::npacd {

class ProviderView {
 public:
  struct Parts {
    const std::string& spid;
    const common::TimeSource& clock;
    DeliveryStore& store;
    const ProviderHost& host;
    associations::ProviderEgress& egress;
    const ProviderLinks& links;
    const ProviderHeartbeats& heartbeats;
    ProviderThrottle& throttle;
    const ProviderCounting& counting;
  };
  explicit ProviderView(Parts parts) : p_(parts) {}

  // The provider's queue: what waits by function and why, its throttle, its associations'
  // load (GET /v1/providers/{spid}/queue).
  ProviderQueueView queue();
  // Why a queued message routed by `function` waits now; none if it could leave.
  std::optional<WaitReason> waitReason(associations::AssociationFunction function) const;
  // Appends one entry per bound association (GET /v1/associations).
  void describe(std::vector<AssociationInfo>& out) const;
  // The provider's counters and live associations, for a scrape (core_metrics.h).
  CoreMetrics::Provider metrics();
  // The policy in force and the latest PDUs written with their associations.
  ProviderEgressView egress() const;

 private:
  Parts p_;
};

}  // namespace npac::npacd
