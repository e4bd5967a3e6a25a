// TurnWrites: the `sent` and `acknowledged` writes the DeliveryStore collected since its
// last flush() (see "Few transactions" in delivery_store.h), in the order it applies them.
//
// Collecting the first write of a batch calls `schedule_flush`: the owner then calls
// DeliveryStore::flush() soon. take() hands the batch over: the sent writes in the order
// they came, then one acknowledging write per provider (the fence's unit), providers in
// first-seen order, all at the latest acknowledgement's time.
//
// Threading: the core thread only (the DeliveryStore's).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "db/outbound_queue.h"
#include "npac/npacd/core/progress_write.h"

namespace npac::npacd {

class TurnWrites {
 public:
  explicit TurnWrites(std::function<void()> schedule_flush) : schedule_flush_(std::move(schedule_flush)) {}

  void sent(ProgressWrite write);
  void acknowledged(const std::string& spid, db::MessageId id, db::TimeMs at);
  bool empty() const { return sent_.empty() && acks_.empty(); }
  // Everything collected (see above); empty afterwards.
  std::vector<ProgressWrite> take();

 private:
  void collected();  // a write is collected: schedule the flush if it is the first

  std::function<void()> schedule_flush_;
  std::vector<ProgressWrite> sent_;
  std::vector<std::pair<std::string, db::MessageId>> acks_;
  db::TimeMs acks_at_ = 0;
};

}  // namespace npac::npacd
