// ProviderRecovery: one provider's recovery actions (NANC 351 SWIM, docs/PROTOCOL.md),
// M-ACTIONs on the NPAC SMS object (class lnpNpacSms, instance CN=NPAC):
//   lnpRecoveryRequest  1.3.6.1.4.1.103.7.0.0.90.6.1  info RecoveryRequest (a time range or
//                       "everything not acknowledged"): the selected messages are written
//                       in queue order until the congestion window is full, their rows
//                       committed `sent`, then the ActionResult with messageCount.
//   lnpRecoveryComplete 1.3.6.1.4.1.103.7.0.0.90.6.2  back to normal mode; the messages held
//                       meanwhile (still queued) are delivered in order by the ProviderCore.
// Which messages and whether the provider is in recovery mode is the egress's
// (associations::RecoveryState); this part reads the rows, writes them through the
// provider's links (ProviderLinks) and answers on the association the action came on. A
// refusal is a processingFailure; an action on another object noSuchObjectClass or
// noSuchObjectInstance (X.711 §7.4).
//
// Threading: the owning ProviderCore's core thread only; no locks. Time: the TimeSource
// (the sends' time and the rows' wall time).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "associations/provider_egress.h"
#include "cmip/cmip_operations.h"
#include "common/time_source.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/provider_counting.h"
#include "npac/npacd/core/provider_links.h"

namespace npac::npacd {

class ProviderRecovery {
 public:
  // What it asks of the ProviderCore's host for this provider (ProviderCore::Host).
  struct Host {
    std::function<bool()> may_deliver;    // this node holds the provider's lease now
    std::function<void()> wake_delivery;  // a delivery round soon
  };

  // Everything given outlives it.
  ProviderRecovery(std::string spid, const common::TimeSource& clock, DeliveryStore& store,
                   associations::ProviderEgress& egress, ProviderLinks& links, ProviderCounting& counting, Host host);
  ProviderRecovery(const ProviderRecovery&) = delete;
  ProviderRecovery& operator=(const ProviderRecovery&) = delete;

  // An Invoke from the provider on `association`: if it is lnpRecoveryRequest or
  // lnpRecoveryComplete on one of its bound associations, it is answered there and true;
  // false otherwise (the manager brokers it to the application).
  bool onAction(db::AssociationId association, const cmip::CmipInvoke& invoke);

 private:
  // A recovery request answered: the messages `wanted` selects, sent and their rows
  // committed; how many, or none and the *refusal for the provider.
  std::optional<std::int64_t> answer(const associations::RecoveryRequest& wanted, std::string* refusal);
  // The selected messages, written in order until the window is full; how many were.
  std::int64_t sendSelected(const std::vector<associations::MessageId>& selected,
                            const std::map<associations::MessageId, const db::QueuedMessage*>& by_id);

  std::string spid_;
  const common::TimeSource& clock_;
  DeliveryStore& store_;
  associations::ProviderEgress& egress_;
  ProviderLinks& links_;
  ProviderCounting& counting_;
  Host host_;
};

}  // namespace npac::npacd
