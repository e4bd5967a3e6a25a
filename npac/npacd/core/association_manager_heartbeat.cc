// AssociationManager: the application heartbeat (NANC 404), per provider, off by default.
// After `heartbeat_interval` with nothing received on an association, npacd sends a
// confirmed M-EVENT-REPORT heartbeat (event type 1.3.6.1.4.1.103.7.0.0.90.5.1 on the NPAC
// SMS object lnpNpacSms, instance cmip::npacSmsInstance(), info Heartbeat{sentAt}); no answer within `heartbeat_timeout` aborts the
// association (its messages then move as on any loss). Heartbeats use invoke ids from the
// provider's range for unconfirmed PDUs, never the egress's, so they cannot collide with
// an outstanding request.
#include <spdlog/spdlog.h>

#include "cmip/cmip_operations.h"
#include "cmip/oids.h"
#include "npac/npacd/core/association_manager.h"

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

void AssociationManager::heartbeats(Provider& provider, const std::string& spid) {
  const auto interval = registry_.get(tunables::kHeartbeatInterval, spid);
  if (interval.count() == 0) return;
  const auto timeout = registry_.get(tunables::kHeartbeatTimeout, spid);
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<Session>> silent;
  for (auto& [id, session] : provider.sessions) {
    auto pending = heartbeats_.find(id);
    if (pending != heartbeats_.end()) {
      if (now - pending->second.sent_at >= timeout) silent.push_back(session);
      continue;
    }
    if (now - session->lastReceived() < interval) continue;
    const std::int32_t invoke_id = provider.next_unconfirmed_id++;
    if (provider.next_unconfirmed_id == associations::kMaxInvokeId) provider.next_unconfirmed_id = 0x40000000;
    if (session->sendRoseEncoded(heartbeatPdu(invoke_id, nowMs()))) {
      heartbeats_[id] = Heartbeat{invoke_id, now};
    }
  }
  for (auto& session : silent) {
    spdlog::warn("SPID {} association {}: no heartbeat response within heartbeat_timeout",
                 spid, session->associationId());
    session->abort("no heartbeat response within heartbeat_timeout (NANC 404)");
  }
}

bool AssociationManager::heartbeatAnswered(std::int32_t invoke_id) {
  for (auto it = heartbeats_.begin(); it != heartbeats_.end(); ++it) {
    if (it->second.invoke_id == invoke_id) {
      heartbeats_.erase(it);
      return true;
    }
  }
  return false;
}

}  // namespace npac::npacd
