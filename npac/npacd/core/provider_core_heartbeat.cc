// ProviderCore: the application heartbeat (NANC 404), per provider, off by default.
// After `heartbeat_interval` with nothing received on an association, npacd sends a
// confirmed M-EVENT-REPORT heartbeat (event type 1.3.6.1.4.1.103.7.0.0.90.5.1 on the NPAC
// SMS object lnpNpacSms, instance cmip::npacSmsInstance(), info Heartbeat{sentAt}); no
// answer within `heartbeat_timeout` aborts that association (its messages then move as on
// any loss). The heartbeat's invoke id comes from the provider's one allocator and stays
// reserved until answered, so it can never equal an outstanding request's; only an answer
// with that id ON that association completes it.
#include <spdlog/spdlog.h>

#include "cmip/cmip_operations.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "npac/npacd/core/provider_core.h"
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

void ProviderCore::heartbeats(associations::TimePoint now) {
  const auto interval = registry_.get(tunables::kHeartbeatInterval, spid_);
  if (interval.count() == 0) return;
  const auto timeout = registry_.get(tunables::kHeartbeatTimeout, spid_);
  std::vector<db::AssociationId> silent;
  for (auto& [id, entry] : links_) {
    if (entry.heartbeat) {
      if (now - entry.heartbeat_sent_at >= timeout) silent.push_back(id);
      continue;
    }
    if (now - entry.last_received < interval) continue;
    const std::optional<associations::InvokeId> invoke_id = egress_->outstanding().reserveInvokeId();
    if (!invoke_id) continue;  // every id in use: the next tick tries again
    if (entry.link->send(heartbeatPdu(*invoke_id, clock_.wallMs()), 0)) {
      entry.heartbeat = *invoke_id;
      entry.heartbeat_sent_at = now;
    } else {
      egress_->outstanding().releaseInvokeId(*invoke_id);
    }
  }
  for (db::AssociationId id : silent) {
    spdlog::warn("SPID {} association {}: no heartbeat response within heartbeat_timeout", spid_, id);
    abort(id, "no heartbeat response within heartbeat_timeout (NANC 404)");
  }
}

}  // namespace npac::npacd
