// RecoveryState: a provider's normal / recovering mode and what it means for its messages.
//
// The NPAC IIS recovery procedure (re-bind in recovery mode, then SWIM, NANC 351) and
// NANC 353 7.b.i (the logical association recovers as one):
//   - normal: messages are pushed as they arrive; while the provider has no association
//     they wait in the durable queue, and the next normal bind delivers them in order.
//   - a bind with recovery mode on (admitted only while no association is up, NANC 353
//     7.b.vi) puts the provider in recovery: nothing is pushed. New messages are held.
//   - the provider's recovery request (an M-ACTION: a time range, or everything not yet
//     acknowledged — SWIM, NANC 351) is answered from the queue: answer() picks, from the
//     queue rows the caller supplies, the messages to send, in queue order, leaving out the
//     held ones (they come after recovery, not inside it). The action's result follows.
//   - the provider's recovery-complete action returns it to normal and releases the held
//     messages in arrival order.
//   - if every association is lost while recovering, the mode returns to normal and the
//     held messages are handed back: they are still queued and the next bind decides.
// Only decisions live here; the queue, the sending and the ROSE results are the caller's.
//
// Threading: none; driven from the provider's strand. No I/O, no clock.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "associations/bind_facts.h"
#include "associations/outstanding.h"
#include "common/status.h"

namespace npac::associations {

enum class ProviderMode : std::uint8_t { kNormal, kRecovering };
std::string_view toString(ProviderMode mode);

// One queue row as the caller reads it from the durable queue.
struct RecoveryMessage {
  MessageId id = 0;
  WallTime created_at{};
  bool acknowledged = false;
};

struct RecoveryRequest {
  enum class Kind : std::uint8_t {
    kTimeRange,       // every message created in [from, to], acknowledged or not
    kUnacknowledged,  // every message the provider has not acknowledged (SWIM)
  };
  Kind kind = Kind::kUnacknowledged;
  WallTime from{};
  WallTime to{};
};

// A recovery step refused is a Status of the association group (common/status.h):
// kNotRecovering (a recovery request or recovery-complete outside recovery mode) or
// kBadRecoveryRange (from is after to).

enum class Disposition : std::uint8_t { kPush, kHold };

class RecoveryState {
 public:
  ProviderMode mode() const { return mode_; }
  bool mayPush() const { return mode_ == ProviderMode::kNormal; }

  // A bind was admitted for the provider.
  void onBind(bool recovery_mode);
  // A new message for the provider was committed to the queue.
  Disposition onNewMessage(MessageId id);
  // The recovery request: the messages to send, in queue order (created_at, then id).
  Result<std::vector<MessageId>> answer(const RecoveryRequest& request, std::span<const RecoveryMessage> queue) const;
  // Recovery complete: back to normal; the held messages to push now, in arrival order.
  Result<std::vector<MessageId>> complete();
  // The provider's last association is gone: back to normal; what was held, in order.
  std::vector<MessageId> onAllAssociationsLost();

  const std::vector<MessageId>& held() const { return held_; }

 private:
  ProviderMode mode_ = ProviderMode::kNormal;
  std::vector<MessageId> held_;  // arrival order
};

}  // namespace npac::associations
