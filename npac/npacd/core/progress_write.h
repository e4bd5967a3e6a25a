// ProgressWrite: one delivery-progress write of the DeliveryStore (sent, acknowledged,
// failed, back to queued, moved) as it is collected, kept in the backlog and applied —
// the unit its known states, settled marks and fence look at.
//
// Threading: a plain value; the core thread that owns the DeliveryStore.
#pragma once

#include <string>
#include <vector>

#include "db/outbound_queue.h"

namespace npac::npacd {

struct ProgressWrite {
  enum class Kind { kSent, kAcknowledged, kFailed, kRequeueAssociation, kMoveSent, kRequeue };
  Kind kind;
  std::string spid;  // the provider the rows belong to (the fence's key)
  std::vector<db::MessageId> ids;
  db::AssociationId association = 0;
  db::TimeMs at = 0;
  std::string reason;
};

}  // namespace npac::npacd
