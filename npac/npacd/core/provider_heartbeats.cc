// ProviderHeartbeats: see provider_heartbeats.h.
#include "npac/npacd/core/provider_heartbeats.h"

#include "cmip/cmip_operations.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "tunables/catalogue.h"

namespace npac::npacd {

namespace {

std::vector<std::uint8_t> heartbeatPdu(std::int32_t invoke_id, db::TimeMs now) {
  cmip::EventReportArgument argument;
  argument.managedObjectClass = cmip::ObjectClass::global(cmip::oids::kLnpNpacSmsClass);
  argument.managedObjectInstance = cmip::npacSmsInstance();
  argument.eventType = cmip::EventTypeId::global(cmip::oids::kNpacHeartbeatEvent);
  argument.eventInfo = cmip::encodeHeartbeat(cmip::GeneralizedTime::fromUnixMillis(now));
  return cmip::encodeRoseApdu(cmip::toRose(
      cmip::CmipInvoke{invoke_id, std::nullopt, cmip::CmipOpcode::kEventReportConfirmed, argument}));
}

}  // namespace

ProviderHeartbeats::ProviderHeartbeats(std::string spid, tunables::TunableRegistry& registry,
                                       const common::TimeSource& clock)
    : spid_(std::move(spid)), registry_(registry), clock_(clock) {}

void ProviderHeartbeats::add(db::AssociationId id, std::shared_ptr<AssociationLink> link,
                             associations::TimePoint now) {
  State& state = associations_[id];
  state.link = std::move(link);
  state.last_received = now;
}

std::optional<associations::InvokeId> ProviderHeartbeats::forget(db::AssociationId id) {
  auto it = associations_.find(id);
  if (it == associations_.end()) return std::nullopt;
  const std::optional<associations::InvokeId> pending = it->second.heartbeat;
  associations_.erase(it);
  return pending;
}

void ProviderHeartbeats::received(db::AssociationId id, associations::TimePoint now) {
  auto it = associations_.find(id);
  if (it != associations_.end()) it->second.last_received = now;
}

std::optional<double> ProviderHeartbeats::answered(db::AssociationId id, associations::InvokeId invoke_id,
                                                   associations::TimePoint now) {
  auto it = associations_.find(id);
  if (it == associations_.end() || it->second.heartbeat != invoke_id) return std::nullopt;
  const double rtt = std::chrono::duration<double>(now - it->second.sent_at).count();
  it->second.rtt_seconds = rtt;
  it->second.heartbeat.reset();
  return rtt;
}

std::vector<db::AssociationId> ProviderHeartbeats::tick(associations::TimePoint now,
                                                        associations::OutstandingRequests& ids) {
  std::vector<db::AssociationId> silent;
  const auto interval = registry_.get(tunables::kHeartbeatInterval, spid_);
  if (interval.count() == 0) return silent;
  const auto timeout = registry_.get(tunables::kHeartbeatTimeout, spid_);
  for (auto& [id, state] : associations_) {
    if (state.heartbeat) {
      if (now - state.sent_at >= timeout) silent.push_back(id);
      continue;
    }
    if (now - state.last_received < interval) continue;
    const std::optional<associations::InvokeId> invoke_id = ids.reserveInvokeId();
    if (!invoke_id) continue;  // every id in use: the next tick tries again
    if (state.link->send(heartbeatPdu(*invoke_id, clock_.wallMs()), 0)) {
      state.heartbeat = *invoke_id;
      state.sent_at = now;
    } else {
      ids.releaseInvokeId(*invoke_id);
    }
  }
  return silent;
}

std::optional<double> ProviderHeartbeats::rtt(db::AssociationId id) const {
  auto it = associations_.find(id);
  return it == associations_.end() ? std::nullopt : it->second.rtt_seconds;
}

}  // namespace npac::npacd
