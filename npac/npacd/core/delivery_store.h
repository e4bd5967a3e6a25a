// DeliveryStore: the association core's one door to the durable outbound queue — the
// reads delivery and recovery need, and every delivery-progress write (sent,
// acknowledged, failed, back to queued, moved), with the database's failure handled as a
// STATE, not per message.
//
// Why a state: when the disk fills or the WAL turns unwritable while providers are bound,
// markSent/markAcknowledged fail. If delivery carried on, the rows would still read
// `queued` and leave again and again (a flood of duplicates under fresh invoke ids). So:
//   - a progress write that fails with a storage failure (db::isStorageFailure) is kept,
//     in order, in a backlog, and the store turns unhealthy: healthy() is false and the
//     core sends no new delivery (answers to what is in flight are still taken: their
//     acknowledgements join the backlog). One log line when it turns unhealthy, one when
//     it recovers — db::StorageHealth already names the file and errno once.
//   - retry() (the core's tick) replays the backlog in order; when all of it committed the
//     store is healthy again and delivery resumes by itself. Rows left `sent` by the
//     failure are reconciled by that replay (acknowledged, re-queued or moved as they
//     would have been), not at the next restart.
//   - a write refused for another reason (a row not in the state the write expects) is
//     logged and dropped: replaying it could never succeed.
// Few transactions: markSent() and acknowledge() only collect, and flush() commits
// everything collected since the last flush in ONE transaction (sent before
// acknowledged, each batch one statement — db::OutboundQueue). The core flushes once
// after the delivery rounds due in a turn (all providers' rounds in one transaction),
// before their PDUs may leave (ProviderCore "decide, commit, then write"), and once per
// turn for acknowledgements (schedule_flush). Every database read and every other write
// flushes first (a round served from a complete ReadyQueue needs none: the queue is
// exact as writes are collected), so the store always reads what it wrote, and a row is
// `sent` before it can be moved, failed or re-queued. A flush that hits a storage
// failure commits nothing and keeps all of it, in order, in the backlog; a write refused
// for another reason is dropped alone (its savepoint undone) and the rest commits.
//
// The write path — the turn's transaction, the fence, the backlog and the health it
// implies: ProgressWriter (core/progress_writer.h).
//
// Fencing (two or more npacd nodes): ProgressFence (core/progress_fence.h).
//
// Ready messages in memory: ReadyMessages (core/ready_messages.h), one ReadyQueue per provider.
//
// Known states: KnownStates (core/known_states.h), so a turn's writes read no row back.
//
// Settled marks: SettleSchedule (core/settle_schedule.h), in the turn's transaction.
//
// Threading: the core thread only (it wraps the core's progress connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/outbound_queue.h"
#include "npac/npacd/core/known_states.h"
#include "npac/npacd/core/progress_fence.h"
#include "npac/npacd/core/progress_write.h"
#include "npac/npacd/core/progress_writer.h"
#include "npac/npacd/core/ready_messages.h"
#include "npac/npacd/core/settle_schedule.h"
#include "npac/npacd/core/turn_writes.h"

namespace npac::npacd {

class DeliveryStore {
 public:
  // The lease fence's settings: this node, the epoch of the lease it holds on a provider,
  // on_fenced (core/progress_fence.h).
  using Fence = ProgressFence::Lease;

  // `schedule_flush` is called when the first write of a batch is collected; the owner
  // then calls flush() soon (a posted handler; a test calls it directly).
  DeliveryStore(db::Database& progress_db, std::function<void()> schedule_flush);
  DeliveryStore(const DeliveryStore&) = delete;
  DeliveryStore& operator=(const DeliveryStore&) = delete;

  // Before the first write (core thread). Without one nothing is fenced (one node).
  void setFence(Fence fence) { fence_.set(std::move(fence)); }
  // Before the first round: this node's queue writer's committed mark
  // (QueueWriter::committedThrough). Without it a load reads the table's highest id,
  // which is right only while one writer fills the queue.
  void setCommittedThrough(std::function<db::MessageId()> mark) { ready_.setCommittedThrough(std::move(mark)); }
  // Before the first round: other bounds for the ready messages (tests).
  void setReadyLimits(ReadyLimits limits) { ready_.setLimits(limits); }

  bool healthy() const { return writer_.healthy(); }

  // What the store has done and holds (metrics, the queue view, tests).
  struct Figures {
    std::size_t backlog = 0;          // progress writes waiting for the database
    std::uint64_t fenced_writes = 0;  // progress writes refused: the provider's lease was lost
    std::uint64_t ready_rounds = 0;   // delivery rounds answered from memory
    std::uint64_t database_rounds = 0;  // and from the database
    std::size_t known_states = 0;     // messages whose state is remembered
    std::size_t ready_messages = 0;   // messages held in all ReadyQueues
    std::size_t ready_bytes = 0;      // and their PDU bytes
    std::uint64_t settles = 0;        // settles that moved a provider's mark
  };
  Figures figures() const;

  // Reads; a storage failure marks the store unhealthy until a retry() reads again.
  db::Result<std::vector<db::QueuedMessage>> nextQueued(const std::string& spid,
                                                        std::uint32_t functions,
                                                        std::size_t limit);
  db::Result<db::QueuedMessage> get(db::MessageId id);
  // A recovery request's candidates (NANC 351): the provider's unacknowledged messages, or
  // with `created` those created in [from, to).
  struct CreatedRange {
    db::TimeMs from = 0;
    db::TimeMs to = 0;
  };
  db::Result<std::vector<db::QueuedMessage>> recoveryCandidates(const std::string& spid,
                                                                std::optional<CreatedRange> created,
                                                                std::size_t limit);
  // Queued messages of `spid` by function mask (the queue view's "waiting").
  db::Result<std::map<std::uint32_t, std::size_t>> queuedByMask(const std::string& spid);

  // Progress writes (see above). `at` is the wall time they happened.
  // `spid` is the provider the rows belong to (the fence's key).
  void markSent(const std::string& spid, std::vector<db::MessageId> ids, db::AssociationId association,
                db::TimeMs at);
  void acknowledge(const std::string& spid, db::MessageId id, db::TimeMs at);
  // Commits what markSent() and acknowledge() collected, in one transaction.
  void flush();
  void markFailed(const std::string& spid, db::MessageId id, std::string reason, db::TimeMs at);
  void requeueAssociation(const std::string& spid, db::AssociationId association);
  void moveSent(const std::string& spid, db::MessageId id, db::AssociationId association);
  void requeue(const std::string& spid, std::vector<db::MessageId> ids);
  // The latest progress writes for `spid` were refused by the fence, and none has
  // committed since (see "Fencing" above).
  bool fenced(const std::string& spid) const { return fence_.fenced(spid); }

  // ---- ready messages (see above) ----
  // Messages of `spid` the queue writer committed (ids ascending), handed over once.
  void committed(const std::string& spid, std::vector<db::QueuedMessage> rows);
  // These ids were committed for `spid` (ProviderCore::onSubmitted): any the ReadyQueue
  // does not account for — appended without committed(), as a test may — drops it.
  void noteSubmitted(const std::string& spid, const std::vector<db::MessageId>& ids);
  // What is kept of `spid` is no longer known to be exact (a lease taken, a takeover,
  // rows another node committed).
  void forgetReady(const std::string& spid);
  void forgetAllReady() {
    ready_.dropAll();
    known_.forgetAll();
  }

  // Replays the backlog (and re-checks reads); true when healthy afterwards.
  bool retry();

 private:
  db::OutboundQueue queue_;
  ReadyMessages ready_;
  KnownStates known_;
  SettleSchedule settle_;
  ProgressFence fence_;
  TurnWrites turn_;
  ProgressWriter writer_;
};

}  // namespace npac::npacd
