// ProviderHost: what a ProviderCore asks of its owner (the AssociationManager, or a test):
// wake-ups for delivery rounds, whether this node may deliver for a provider now, and the
// provider's throttle group. ProviderCore::Host names it.
//
// Threading: called on the core thread only, synchronously from the ProviderCore.
#pragma once

#include <memory>
#include <string>

#include "associations/outstanding.h"
#include "npac/npacd/core/throttle_groups.h"

namespace npac::npacd {

class ProviderHost {
 public:
  virtual ~ProviderHost() = default;
  // Run a delivery round of `spid` soon (a posted handler; coalesced by the host).
  virtual void wakeDelivery(const std::string& spid) = 0;
  // Run a delivery round of `spid` once `delay` has passed (throttling released then).
  virtual void wakeDeliveryAfter(const std::string& spid, associations::Duration delay) = 0;
  // Whether this node may send `spid` anything from the queue now: it holds the
  // provider's lease and renewed it recently (provider_leases.h).
  virtual bool mayDeliver(const std::string& spid) const = 0;
  // The provisioned throttle group `spid` is a member of (throttle_groups.h), or none.
  virtual std::shared_ptr<ThrottleGroup> throttleGroupOf(const std::string& spid) const {
    (void)spid;
    return nullptr;
  }
};

}  // namespace npac::npacd
