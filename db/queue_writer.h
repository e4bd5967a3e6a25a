// QueueWriter: group commit for the outbound queue.
//
// Any number of threads submit() messages; one writer thread owned by the QueueWriter
// collects whatever submissions are waiting, appends them all inside ONE transaction
// (each submission in its own savepoint, through OutboundQueue::appendBatch, so one bad
// submission — an unknown SPID, say — fails alone), COMMITs, and only then completes each
// submission with its assigned ids. A submitter is therefore never told "accepted"
// before its messages are on disk (as durable as the Durability setting makes a commit).
// While one batch commits, new submissions accumulate for the next: the busier the
// server, the larger the batches and the fewer the fsyncs per message.
//
// If the transaction fails (disk full, I/O error, locked past the busy timeout), every
// submission in that batch is completed with that error and nothing of the batch is on
// disk. Submissions are bounded (Options::max_pending_messages): beyond it submit()
// completes at once, on the calling thread, with kOverloaded, so a stalled disk pushes
// back on the clients instead of growing memory.
//
// Threading: submit() may be called from any thread, concurrently. Completions run on
// the writer thread, one at a time, after COMMIT: keep them short and never wait in one
// for another submission (submitting from a completion is fine). stop() and the
// destructor drain what was already submitted, then join the writer thread; later
// submissions complete with kShutdown. The writer uses its own Database connection.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/metrics_text.h"
#include "db/clock.h"
#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/status.h"

namespace npac::db {

class QueueWriter {
 public:
  struct Options {
    // Messages per transaction at most (a submission is never split, so one larger
    // submission still commits whole).
    std::size_t max_batch_messages = 1024;
    // Messages submitted but not yet committed, at most; beyond it kOverloaded.
    std::size_t max_pending_messages = 65536;
    // This npacd's node name, sent with each submission's NOTIFY (PostgreSQL) so that the
    // node receiving it tells its own writer's rows from another node's
    // (db/notification_listener.h). Empty: the rows are announced as from an unknown node.
    std::string node;
  };

  using Completion = std::function<void(Result<std::vector<MessageId>>)>;
  // With each message's outcome: its id and whether it was a duplicate of a stored
  // message (same idempotency key and content, OutboundQueue::appendBatchOutcomes).
  using OutcomeCompletion = std::function<void(Result<std::vector<AppendOutcome>>)>;
  // The same, with the submitted messages handed back (moved, in input order) and the
  // instant they were stamped with (created_at: the writer's clock, or the newest row's
  // stamp when the clock is behind it, OutboundQueue::appendStamp): for a caller that keeps what was
  // committed in memory (the core's ReadyQueue) without copying PDUs or reading them back.
  using CommittedCompletion =
      std::function<void(Result<std::vector<AppendOutcome>>, std::vector<NewMessage>, TimeMs created_at)>;

  // Opens its own connection to `path` (schema applied) and starts the writer thread.
  static Result<std::unique_ptr<QueueWriter>> start(const std::string& path,
                                                    const OpenOptions& open_options, Clock clock,
                                                    Options options);
  static Result<std::unique_ptr<QueueWriter>> start(const std::string& path,
                                                    const OpenOptions& open_options, Clock clock) {
    return start(path, open_options, std::move(clock), Options{});
  }

  ~QueueWriter();
  QueueWriter(const QueueWriter&) = delete;
  QueueWriter& operator=(const QueueWriter&) = delete;

  // Queues `messages` for the next group commit; `done` receives their ids (input order)
  // once committed, or the error.
  void submit(std::vector<NewMessage> messages, Completion done);
  // The same, as a future.
  std::future<Result<std::vector<MessageId>>> submit(std::vector<NewMessage> messages);
  // The same, saying for each message whether it was a duplicate (nothing added).
  void submitOutcomes(std::vector<NewMessage> messages, OutcomeCompletion done);
  // The same, handing the messages back (see CommittedCompletion).
  void submitCommitted(std::vector<NewMessage> messages, CommittedCompletion done);

  // Commits everything already submitted, then stops the writer thread. Idempotent.
  void stop();

  // The highest message id this writer has committed, set after each COMMIT and before
  // that batch's completions run. Its ids only grow from one batch to the next (an SQLite
  // AUTOINCREMENT, or a PostgreSQL sequence drawn inside each batch): a row of this writer
  // that is not committed yet will have a higher id. The core's ReadyQueue reads it before
  // it loads a provider's queue (core/delivery_store.h). Any thread.
  MessageId committedThrough() const { return committed_through_.load(std::memory_order_acquire); }

  // Statistics for tests and metrics.
  std::uint64_t committedBatches() const;
  std::uint64_t committedMessages() const;

  // For GET /metrics: a copy taken under the writer's lock (the writer thread updates it
  // under the same lock once per batch, never per message).
  struct Metrics {
    std::uint64_t committed_batches = 0;
    std::uint64_t committed_messages = 0;
    std::uint64_t failed_batches = 0;  // rolled back: every submission got the error
    std::size_t backlog_messages = 0;  // submitted, not yet committed
    // The COMMIT statement's duration (seconds): the fsync --durability asks for.
    common::Histogram commit_seconds{kCommitBuckets};
  };
  static constexpr std::array<double, 12> kCommitBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                         0.05,   0.1,   0.25,   0.5,   1,     2.5};
  Metrics metrics() const;

 private:
  struct Submission {
    std::vector<NewMessage> messages;
    CommittedCompletion done;
  };

  QueueWriter(std::unique_ptr<Database> db, Clock clock, Options options);
  void run();
  void commitBatch(std::vector<Submission>& batch);

  std::unique_ptr<Database> db_;
  Clock clock_;
  Options options_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Submission> pending_;
  std::size_t pending_messages_ = 0;
  bool stopping_ = false;
  std::uint64_t committed_batches_ = 0;
  std::uint64_t committed_messages_ = 0;
  std::uint64_t failed_batches_ = 0;
  common::Histogram commit_seconds_{kCommitBuckets};
  std::atomic<MessageId> committed_through_{0};

  std::thread writer_;  // last: started after every member above exists
};

}  // namespace npac::db
