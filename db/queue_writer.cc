#include "db/queue_writer.h"

#include <algorithm>
#include <set>

#include "common/time_source.h"
#include "db/notification_listener.h"

#include <utility>

#include "db/database.h"
#include "db/postgres_connection.h"
#include "db/transaction.h"

namespace npac::db {

Result<std::unique_ptr<QueueWriter>> QueueWriter::start(const std::string& path,
                                                        const OpenOptions& open_options,
                                                        Clock clock, Options options) {
  Result<std::unique_ptr<Database>> db = Database::open(path, open_options);
  if (!db) return db.status();
  if (options.max_batch_messages == 0) options.max_batch_messages = 1;
  return std::unique_ptr<QueueWriter>(
      new QueueWriter(std::move(db).value(), std::move(clock), options));
}

QueueWriter::QueueWriter(std::unique_ptr<Database> db, Clock clock, Options options)
    : db_(std::move(db)), clock_(std::move(clock)), options_(options) {
  writer_ = std::thread([this] { run(); });
}

QueueWriter::~QueueWriter() { stop(); }

void QueueWriter::submit(std::vector<NewMessage> messages, Completion done) {
  submitOutcomes(std::move(messages), [done = std::move(done)](Result<std::vector<AppendOutcome>> outcomes) {
    if (!outcomes) return done(outcomes.status());
    std::vector<MessageId> ids;
    ids.reserve(outcomes->size());
    for (const AppendOutcome& outcome : *outcomes) ids.push_back(outcome.id);
    done(std::move(ids));
  });
}

void QueueWriter::submitOutcomes(std::vector<NewMessage> messages, OutcomeCompletion done) {
  submitCommitted(std::move(messages),
                  [done = std::move(done)](Result<std::vector<AppendOutcome>> outcomes, std::vector<NewMessage>,
                                           TimeMs) { done(std::move(outcomes)); });
}

void QueueWriter::submitCommitted(std::vector<NewMessage> messages, CommittedCompletion done) {
  Status refused;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      refused = Status::shutdown("the outbound queue writer is stopping; message not accepted");
    } else if (pending_messages_ + messages.size() > options_.max_pending_messages &&
               pending_messages_ > 0) {
      refused = Status::overloaded(
          "the outbound queue has " + std::to_string(pending_messages_) +
          " messages waiting for the disk; message not accepted, retry later");
    } else {
      pending_messages_ += messages.size();
      pending_.push_back(Submission{std::move(messages), std::move(done)});
      wake_.notify_one();
      return;
    }
  }
  done(refused.withFile(db_->path()), std::move(messages), 0);
}

std::future<Result<std::vector<MessageId>>> QueueWriter::submit(std::vector<NewMessage> messages) {
  auto promise = std::make_shared<std::promise<Result<std::vector<MessageId>>>>();
  auto future = promise->get_future();
  submit(std::move(messages), [promise](Result<std::vector<MessageId>> result) {
    promise->set_value(std::move(result));
  });
  return future;
}

void QueueWriter::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (writer_.joinable()) writer_.join();
}

std::uint64_t QueueWriter::committedBatches() const {
  std::lock_guard lock(mutex_);
  return committed_batches_;
}

std::uint64_t QueueWriter::committedMessages() const {
  std::lock_guard lock(mutex_);
  return committed_messages_;
}

QueueWriter::Metrics QueueWriter::metrics() const {
  std::lock_guard lock(mutex_);
  Metrics out;
  out.committed_batches = committed_batches_;
  out.committed_messages = committed_messages_;
  out.failed_batches = failed_batches_;
  out.backlog_messages = pending_messages_;
  out.commit_seconds = commit_seconds_;
  return out;
}

void QueueWriter::run() {
  std::vector<Submission> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, and everything submitted is done
      std::size_t messages = 0;
      while (!pending_.empty() &&
             (batch.empty() ||
              messages + pending_.front().messages.size() <= options_.max_batch_messages)) {
        messages += pending_.front().messages.size();
        batch.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
      pending_messages_ -= messages;
    }
    commitBatch(batch);
    batch.clear();
  }
}

namespace {

// Whether a failed submission took the batch's transaction with it, so the others cannot
// commit either. SQLite rolls the whole transaction back by itself after these codes
// (SQLite "Response To Errors Within A Transaction"); PostgreSQL after a lost connection
// (kUnavailable); and either may be found out of, or failed in, its transaction.
bool transactionLost(Database& db, const Status& status) {
  const Status::Code code = status.code();
  if (code == Status::Code::kFull || code == Status::Code::kIoError || code == Status::Code::kBusy ||
      code == Status::Code::kCorrupt || code == Status::Code::kReadOnly || code == Status::Code::kUnavailable) {
    return true;
  }
  if (!db.inTransaction()) return true;
  return db.postgres() != nullptr && db.postgres()->transactionFailed();
}

}  // namespace

void QueueWriter::commitBatch(std::vector<Submission>& batch) {
  TimeMs now = clock_();
  OutboundQueue queue(*db_);
  std::vector<Result<std::vector<AppendOutcome>>> results;
  results.reserve(batch.size());

  Transaction txn(*db_);
  Status status = txn.begin();
  double commit_duration = 0;
  std::size_t appended = 0;
  std::set<std::string> providers;  // with a row added, for the other nodes' wake-up
  if (status) {
    // The created_at the rows get (never below the newest row's, schema 10), handed on
    // with them: the copies the core keeps say what the rows say.
    Result<TimeMs> stamp = queue.appendStamp(now);
    if (stamp) {
      now = *stamp;
    } else {
      status = stamp.status();
    }
  }
  if (status) {
    for (Submission& submission : batch) {
      // Inside our transaction appendBatch() is a savepoint: a failing submission is
      // rolled back alone and the others still commit.
      results.push_back(queue.appendStampedOutcomes(submission.messages, now));
      if (results.back()) {
        const std::vector<AppendOutcome>& outcomes = *results.back();
        for (std::size_t m = 0; m < outcomes.size(); ++m) {
          if (outcomes[m].duplicate) continue;
          ++appended;
          providers.insert(submission.messages[m].spid);
        }
      }
      if (!results.back() && transactionLost(*db_, results.back().status())) {
        status = results.back().status();  // the whole transaction is lost
        break;
      }
    }
    if (status && db_->backend() == Backend::kPostgres) {
      // LISTEN/NOTIFY (db/notification_listener.h): the node owning each provider is woken
      // at COMMIT, wherever the message was submitted; delivered only if the batch commits.
      std::vector<std::string> payloads;
      payloads.reserve(providers.size());
      for (const std::string& spid : providers) {
        payloads.push_back(options_.node.empty() ? spid : spid + " " + options_.node);
      }
      status = notifyNodes(*db_, kSubmittedChannel, payloads);
    }
    if (status) {
      const auto started = common::realTimeSource().now();
      status = txn.commit();
      commit_duration = std::chrono::duration<double>(common::realTimeSource().now() - started).count();
    }
  }
  if (!status) {
    txn.rollback();
    {
      std::lock_guard lock(mutex_);
      ++failed_batches_;
    }
    for (Submission& submission : batch) submission.done(status, std::move(submission.messages), now);
    return;
  }
  MessageId highest = committed_through_.load(std::memory_order_relaxed);
  for (const Result<std::vector<AppendOutcome>>& result : results) {
    if (!result) continue;
    for (const AppendOutcome& outcome : *result) highest = std::max(highest, outcome.id);
  }
  committed_through_.store(highest, std::memory_order_release);
  {
    std::lock_guard lock(mutex_);
    ++committed_batches_;
    committed_messages_ += appended;
    commit_seconds_.observe(commit_duration);
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    batch[i].done(std::move(results[i]), std::move(batch[i].messages), now);
  }
}

}  // namespace npac::db
