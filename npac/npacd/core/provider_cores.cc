// ProviderCores: see provider_cores.h.
#include "npac/npacd/core/provider_cores.h"

#include <vector>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace npac::npacd {
namespace asio = boost::asio;

ProviderCores::ProviderCores(asio::io_context& io, const common::TimeSource& clock,
                             tunables::TunableRegistry& registry, DeliveryStore& store, ProviderLeases& leases,
                             DeliveryScheduler& delivery)
    : io_(io), clock_(clock), registry_(registry), store_(store), leases_(leases), delivery_(delivery) {}

ProviderCore* ProviderCores::find(const std::string& spid) {
  auto it = cores_.find(spid);
  return it == cores_.end() ? nullptr : it->second.get();
}

ProviderCore& ProviderCores::coreFor(const std::string& spid) {
  auto& slot = cores_[spid];
  if (!slot) {
    slot = std::make_unique<ProviderCore>(spid, clock_, registry_, store_, *this);
    slot->setCounting(counting_);
  }
  return *slot;
}

void ProviderCores::wakeAll() {
  for (auto& [spid, c] : cores_) delivery_.wake(spid);
}

void ProviderCores::setCounting(bool on) {
  counting_ = on;
  for (auto& [spid, provider] : cores_) provider->setCounting(on);
}

std::shared_ptr<ThrottleGroup> ProviderCores::throttleGroupOf(const std::string& spid) const {
  return throttle_groups_ != nullptr ? throttle_groups_->groupOf(spid) : nullptr;
}

void ProviderCores::installFence() {
  DeliveryStore::Fence fence;
  fence.owner = leases_.node();
  fence.epoch_of = [this](const std::string& spid) { return leases_.epoch(spid); };
  fence.on_fenced = [this](const std::string& spid, const db::Status& why) {
    // Not from inside the store's flush: aborting records progress again.
    asio::post(io_, [this, spid, why] { providerLost(spid, why); });
  };
  store_.setFence(std::move(fence));
}

void ProviderCores::providerLost(const std::string& spid, const db::Status& why) {
  const bool was_held = leases_.held(spid);
  leases_.forget(spid);
  store_.forgetReady(spid);
  ProviderCore* c = find(spid);
  const std::size_t aborted = c != nullptr ? c->abortAll("provider lease lost to another npacd node") : 0;
  // Said once: the writes refused after the abort (their associations' losses) add nothing.
  if (!was_held && aborted == 0) return;
  spdlog::error("provider {}: this node ('{}') lost its lease — {}; {} association(s) aborted, nothing more "
                "is sent or recorded for it here",
                spid, leases_.node(), why.message(), aborted);
}

void ProviderCores::leaseTaken(const std::string& spid) {
  store_.forgetReady(spid);  // what the store kept of the provider is read again
  delivery_.wake(spid);      // rows queued meanwhile (or re-queued by the takeover) leave now
}

void ProviderCores::tendLeases() {
  store_.flush();  // what was recorded under a lease commits before it is released
  std::vector<std::string> unbound;
  for (const std::string& spid : leases_.heldSpids()) {
    ProviderCore* c = find(spid);
    if (c == nullptr || c->associationCount() == 0) unbound.push_back(spid);
  }
  leases_.release(unbound);
  std::vector<std::string> paused;
  for (const std::string& spid : leases_.heldSpids()) {
    if (!leases_.valid(spid)) paused.push_back(spid);
  }
  for (ProviderLeases::Lost& lost : leases_.renewDue()) providerLost(lost.spid, lost.why);
  for (const std::string& spid : paused) {
    if (leases_.valid(spid)) delivery_.wake(spid);  // renewed again: what waited leaves
  }
}

}  // namespace npac::npacd
