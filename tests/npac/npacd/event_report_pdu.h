// The PDU the npacd tests queue when any pushed operation will do: an M-EVENT-REPORT of
// the NPAC heartbeat event type (NANC 404; docs/PROTOCOL.md) on the NPAC SMS object
// (CN=NPAC), without event information, encoded as the queue stores a submitted message:
// its ROSE Invoke with the placeholder invoke id (core_service.h encodeQueuedInvoke).
// Pure, no state: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cmip/cmip.h"
#include "cmip/cmip_operations.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd::testing {

// `opcode`: kEventReportConfirmed (a response is expected) or kEventReport.
inline std::vector<std::uint8_t> queuedEventReport(
    cmip::CmipOpcode opcode = cmip::CmipOpcode::kEventReportConfirmed) {
  cmip::EventReportArgument argument;
  argument.managedObjectClass = cmip::ObjectClass::global(cmip::oids::kLnpNpacSmsClass);
  argument.managedObjectInstance = cmip::npacSmsInstance();
  argument.eventType = cmip::EventTypeId::global(cmip::oids::kNpacHeartbeatEvent);
  return encodeQueuedInvoke(cmip::CmipInvoke{kPlaceholderInvokeId, std::nullopt, opcode, argument});
}

}  // namespace npac::npacd::testing
