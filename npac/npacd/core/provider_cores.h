// ProviderCores: the providers of one core thread — their ProviderCores by SPID, made at a
// provider's first bind here, and the host each of them asks (ProviderCore::Host): a
// delivery round soon or later (the DeliveryScheduler), whether this node may deliver for
// it (its lease, ProviderLeases::valid) and its provisioned throttle group. It also draws
// the lease's consequences for them (docs/OPERATIONS.md "Two sites"):
//   - installFence(): the DeliveryStore refuses the writes of a provider whose lease
//     another node took, and reports it lost;
//   - tendLeases() (the manager's tick): renews what is due, releases the leases of
//     providers with nothing bound here, and reports the lost ones;
//   - providerLost(): the lease is gone — every association of the provider is aborted;
//   - leaseTaken(): a bind took the lease — the provider's queue is read again.
//
// Threading: the core thread only; no locks. Host callbacks run synchronously.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "common/time_source.h"
#include "db/status.h"
#include "npac/npacd/core/delivery_scheduler.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/provider_core.h"
#include "npac/npacd/core/provider_leases.h"
#include "npac/npacd/core/throttle_groups.h"
#include "tunables/registry.h"

namespace npac::npacd {

class ProviderCores : public ProviderCore::Host {
 public:
  using Map = std::map<std::string, std::unique_ptr<ProviderCore>>;

  // Every reference outlives this object; `io` is the core thread's.
  ProviderCores(boost::asio::io_context& io, const common::TimeSource& clock, tunables::TunableRegistry& registry,
                DeliveryStore& store, ProviderLeases& leases, DeliveryScheduler& delivery);
  ProviderCores(const ProviderCores&) = delete;
  ProviderCores& operator=(const ProviderCores&) = delete;

  ProviderCore* find(const std::string& spid);       // none if it never bound in this run
  ProviderCore& coreFor(const std::string& spid);    // made on first bind
  const Map& all() const { return cores_; }          // by SPID
  // Every provider with a core delivers soon.
  void wakeAll();

  // Counting for GET /metrics (core_metrics.h), for every core, present and future.
  void setCounting(bool on);
  bool counting() const { return counting_; }
  // The provisioned egress throttle groups (throttle_groups.h), shared by every core
  // thread; none by default. Before io runs.
  void setThrottleGroups(const ThrottleGroups* groups) { throttle_groups_ = groups; }

  // ProviderCore::Host.
  void wakeDelivery(const std::string& spid) override { delivery_.wake(spid); }
  void wakeDeliveryAfter(const std::string& spid, associations::Duration delay) override {
    delivery_.wakeAfter(spid, delay);
  }
  bool mayDeliver(const std::string& spid) const override { return leases_.valid(spid); }
  std::shared_ptr<ThrottleGroup> throttleGroupOf(const std::string& spid) const override;

  // Leases (see above). installFence() again whenever the node's name changes.
  void installFence();
  void tendLeases();
  void providerLost(const std::string& spid, const db::Status& why);
  void leaseTaken(const std::string& spid);

 private:
  boost::asio::io_context& io_;
  const common::TimeSource& clock_;
  tunables::TunableRegistry& registry_;
  DeliveryStore& store_;
  ProviderLeases& leases_;
  DeliveryScheduler& delivery_;
  const ThrottleGroups* throttle_groups_ = nullptr;
  bool counting_ = true;
  Map cores_;
};

}  // namespace npac::npacd
