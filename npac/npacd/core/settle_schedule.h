// SettleSchedule: when the DeliveryStore moves a provider's settled mark.
//
// Settled marks (db/outbound_queue_settle.cc): in a turn's transaction, after its writes, a
// provider whose acknowledgements reached kSettleEveryAcks since its last settle — or any
// since a second ago — has its mark moved (OutboundQueue::settle, a savepoint), so every
// read of its queue stays above what is done. A settle that fails is undone alone, logged,
// and tried again with the provider's next acknowledgements; it changes no message's state.
//
// Threading: the core thread only (the DeliveryStore's; it writes on its progress connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "db/outbound_queue.h"
#include "npac/npacd/core/progress_write.h"

namespace npac::npacd {

// Acknowledgements of a provider between two moves of its settled mark, and the longest
// wait for one once any came.
inline constexpr std::size_t kSettleEveryAcks = 256;
inline constexpr db::TimeMs kSettleEveryMs = 1000;

class SettleSchedule {
 public:
  // Settles through `queue` (the DeliveryStore's, on its progress connection).
  explicit SettleSchedule(db::OutboundQueue& queue) : queue_(queue) {}

  // The acknowledging writes a turn applied, inside its transaction: counts them per
  // provider and moves the mark of each provider that is due.
  void settleAfter(const std::vector<const ProgressWrite*>& acknowledged);
  // Settles that moved a provider's mark.
  std::uint64_t settles() const { return settles_; }

 private:
  struct Settling {
    std::size_t acks = 0;  // since the last settle
    db::TimeMs last = 0;   // when it ran
  };
  db::OutboundQueue& queue_;
  std::map<std::string, Settling> settling_;
  std::uint64_t settles_ = 0;
};

}  // namespace npac::npacd
