// ReadyQueue: one provider's queued messages held in memory in send order, so that
// delivery does not read back from the database what the queue writer has just committed
// (issue "A message is written once": "the core never reads its own writes back in steady
// state"). The database stays the truth; this is a copy the DeliveryStore keeps exact or
// drops.
//
// Two states:
//   - incomplete (at start, and after invalidate()): it holds nothing and answers nothing;
//     the DeliveryStore reads the database as before.
//   - complete (after load()): it holds EVERY queued message of the provider that the
//     load's snapshot saw or that was added since, and next() answers
//     exactly what OutboundQueue::nextQueued would: priority DESC, id ASC, only messages
//     whose function mask the asking association's functions cover (NANC 111).
// It stays complete while every change to the provider's queued set reaches it:
//   add()    a message the writer committed. Not added twice: a message the load's snapshot
//            read (even one sent since), or one at or below high_water — the writer's
//            committed mark when the load began, raised by every add — is accounted for.
//            The mark is this node's writer's own, not the highest id in the table: on
//            PostgreSQL another node's rows may carry higher ids than this writer's next
//            ones (one sequence, several writers), and counting them would refuse this
//            writer's rows committed after the snapshot. Another node's rows reach this
//            queue only through a reload (DeliveryStore::forgetReady on its NOTIFY).
//   remove() a message that left `queued` (sent, failed, acknowledged).
// Anything it cannot follow — messages put back to `queued` (a lost association, a lease
// taken over), a refused write, a storage failure, more than `capacity` messages — makes
// the owner call invalidate(), and the next delivery round reads the database again.
//
// Threading: none of its own; the core thread that owns the DeliveryStore.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "db/outbound_queue.h"

namespace npac::npacd {

class ReadyQueue {
 public:
  explicit ReadyQueue(std::size_t capacity) : capacity_(capacity) {}

  bool complete() const { return complete_; }
  std::size_t size() const { return rows_.size(); }
  std::size_t bytes() const { return bytes_; }
  db::MessageId highWater() const { return high_water_; }

  // Every queued message of the provider (at most capacity), read in one snapshot taken
  // after this node's queue writer had committed every id up to `committed_through` that
  // it ever will (QueueWriter::committedThrough read before the snapshot).
  void load(std::vector<db::QueuedMessage> rows, db::MessageId committed_through);
  // Forget everything; incomplete until the next load().
  void invalidate();

  // A committed message of this provider. False when it could not be kept (incomplete, or
  // beyond capacity: the queue is then invalidated). A message at or below high_water is
  // already accounted for and is not added again.
  bool add(db::QueuedMessage row);
  // The message is no longer queued (no-op if it is not held).
  void remove(db::MessageId id);
  // Whether the message is accounted for: complete, and the load read it or id <= high_water.
  bool covers(db::MessageId id) const { return complete_ && (id <= high_water_ || loaded_.count(id) != 0); }

  // Up to `limit` messages an association with `functions` may carry, in send order
  // (copies: the caller may send and remove them).
  std::vector<db::QueuedMessage> next(std::uint32_t functions, std::size_t limit) const;

 private:
  // Send order: higher priority first, then older (smaller id) first.
  using Key = std::pair<int, db::MessageId>;  // (-priority, id)
  static Key keyOf(const db::QueuedMessage& row) { return {-row.priority, row.id}; }

  std::size_t capacity_;
  bool complete_ = false;
  db::MessageId high_water_ = 0;
  std::map<Key, db::QueuedMessage> rows_;
  std::unordered_map<db::MessageId, int> priority_of_;
  std::unordered_set<db::MessageId> loaded_;  // every id the load read (at most capacity)
  std::size_t bytes_ = 0;  // PDU bytes held
};

}  // namespace npac::npacd
