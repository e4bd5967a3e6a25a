// AssociationLink: what a ProviderCore needs from one bound association — write a PDU,
// end it, and describe it — so the core owns decisions and the Session owns the socket.
// npacd's links are Sessions (SessionLink, session_link.h); the core's tests drive a
// ProviderCore through recording links on a manual clock.
//
// Threading: the core thread, like the Session behind it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

class AssociationLink {
 public:
  virtual ~AssociationLink() = default;
  // A pre-encoded ROSE APDU; false if the association cannot take it (gone, or its write
  // queue over its limit). A non-zero `tag` comes back through ProviderCore::onWritten
  // once the PDU was written.
  virtual bool send(const std::vector<std::uint8_t>& apdu, std::int64_t tag) = 0;
  // ABRT; the owner then reports the loss (ProviderCore::onLost).
  virtual void abort(const std::string& reason) = 0;
  // Why our RLRQ will be sent (session.h kRelease*); the first reason set stays.
  virtual void setReleaseReason(const std::string& reason) = 0;
  virtual void requestRelease() = 0;  // RLRQ; the loss is reported when it ended
  virtual void countRetransmission() = 0;
  virtual bool releasing() const = 0;
  // Identity and counters for listings (the core adds spid, state and outstanding).
  virtual AssociationInfo describe() const = 0;
};

}  // namespace npac::npacd
