// ProgressWriter: the DeliveryStore's write path — applies the delivery-progress writes
// (sent, acknowledged, failed, back to queued, moved) to the durable outbound queue, and
// holds the store's health: the backlog of writes a storage failure refused, in order.
//
// A turn's writes (TurnWrites, collected by the DeliveryStore) commit in ONE transaction:
// the fence checked once per provider first, each write its own savepoint
// (db::OutboundQueue), the settled marks moved inside it (SettleSchedule). A write outside
// a turn is its own transaction, fence first. What a storage failure refuses
// (db::isStorageFailure: a full disk, an unwritable WAL) is kept whole and in order in the
// backlog, and the writer turns unhealthy: one log line then, one when retry() has
// replayed all of it. A write refused for another reason is logged and dropped alone:
// replaying it could never succeed. Why a state and not per message: core/delivery_store.h.
//
// While the backlog is not empty every new write goes behind it, never around it (sent
// before acknowledged). A read that failed for a storage reason (readFailed) turns the
// writer unhealthy too, until retry() reads again.
//
// Threading: the core thread only (the DeliveryStore's; it uses the store's connection and
// parts by reference).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/status.h"
#include "npac/npacd/core/known_states.h"
#include "npac/npacd/core/progress_fence.h"
#include "npac/npacd/core/progress_write.h"
#include "npac/npacd/core/ready_messages.h"
#include "npac/npacd/core/settle_schedule.h"

namespace npac::npacd {

class ProgressWriter {
 public:
  // The parts of the DeliveryStore a write reads or updates: what is remembered of each
  // message's state, the messages kept ready (dropped for a provider whose write was
  // refused), the settled marks and the lease fence.
  struct Parts {
    db::Database& db;
    db::OutboundQueue& queue;
    KnownStates& known;
    ReadyMessages& ready;
    SettleSchedule& settle;
    ProgressFence& fence;
  };
  explicit ProgressWriter(Parts parts) : p_(parts) {}
  ProgressWriter(const ProgressWriter&) = delete;
  ProgressWriter& operator=(const ProgressWriter&) = delete;

  bool healthy() const { return backlog_.empty() && !read_failed_; }
  std::size_t backlog() const { return backlog_.size(); }

  // A turn's writes, in the order collected, in one transaction.
  void commitTurn(std::vector<ProgressWrite> writes);
  // One write outside a turn (failed, re-queued, moved): its own transaction.
  void write(ProgressWrite write);
  // A read of the queue failed: a storage failure turns the writer unhealthy.
  void readFailed(const db::Status& status, const char* what);
  // Replays the backlog in order (and re-checks reads); true when healthy afterwards.
  bool retry();

 private:
  db::Status apply(const ProgressWrite& write);
  db::Status applyFenced(const ProgressWrite& write);
  void defer(std::vector<ProgressWrite>& writes);
  void becameUnhealthy(const db::Status& status, const char* what);

  Parts p_;
  std::deque<ProgressWrite> backlog_;
  bool read_failed_ = false;
  bool logged_unhealthy_ = false;
  std::uint64_t deferred_ = 0;  // writes that joined the backlog while unhealthy
};

}  // namespace npac::npacd
