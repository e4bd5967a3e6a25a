#include "db/wal_checkpointer.h"

#include <chrono>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/time_source.h"
#include "db/postgres_connection.h"

namespace npac::db {

Result<std::unique_ptr<WalCheckpointer>> WalCheckpointer::open(const std::string& path,
                                                                const OpenOptions& open_options, Options options) {
  if (isPostgresUrl(path)) {
    return Status::make(Status::Code::kInvalidArgument, "WAL checkpoints are SQLite's", path,
                        "PostgreSQL checkpoints by itself: open no WalCheckpointer for it");
  }
  OpenOptions own = open_options;
  own.checkpointer = nullptr;  // its own connection checkpoints when told to, not on commit
  Result<std::unique_ptr<Database>> db = Database::open(path, own);
  if (!db) return db.status();
  if (options.wal_pages < 1) options.wal_pages = 1;
  if (options.restart_pages < options.wal_pages) options.restart_pages = options.wal_pages;
  // The schema is in place: from now on this connection waits for others only in a
  // RESTART, and only that long.
  (*db)->setBusyTimeout(options.restart_wait);
  return std::unique_ptr<WalCheckpointer>(new WalCheckpointer(std::move(db).value(), options));
}

WalCheckpointer::WalCheckpointer(std::unique_ptr<Database> db, Options options)
    : db_(std::move(db)), options_(options), request_at_(options.wal_pages), restart_at_(options.restart_pages) {}

WalCheckpointer::~WalCheckpointer() { stop(); }

void WalCheckpointer::start() {
  std::lock_guard lock(mutex_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { run(); });
}

void WalCheckpointer::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int WalCheckpointer::onCommit(void* checkpointer, sqlite3*, const char*, int pages) {
  auto* self = static_cast<WalCheckpointer*>(checkpointer);
  self->wal_pages_.store(pages, std::memory_order_relaxed);
  // One wake-up per checkpoint: later commits find it requested and touch nothing else.
  if (pages >= self->request_at_.load(std::memory_order_relaxed) &&
      !self->requested_.exchange(true, std::memory_order_acq_rel)) {
    { std::lock_guard lock(self->mutex_); }  // a waiter between its check and its wait sees the flag
    self->wake_.notify_one();
  }
  return 0;  // SQLITE_OK
}

void WalCheckpointer::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || requested_.load(std::memory_order_acquire); });
    if (stopping_) return;
    lock.unlock();
    checkpointIfDue();
    lock.lock();
  }
}

bool WalCheckpointer::checkpointIfDue() {
  // Cleared before the checkpoint: a commit during it asks for the next one.
  if (!requested_.exchange(false, std::memory_order_acq_rel)) return false;
  checkpoint();
  return true;
}

void WalCheckpointer::checkpoint() {
  const std::int64_t pages = wal_pages_.load(std::memory_order_relaxed);
  const bool restart = pages >= restart_at_;
  const auto started = common::realTimeSource().now();
  Result<Database::CheckpointResult> done =
      db_->checkpointWal(restart ? Database::CheckpointMode::kRestart : Database::CheckpointMode::kPassive);
  const double seconds = std::chrono::duration<double>(common::realTimeSource().now() - started).count();

  std::lock_guard lock(mutex_);
  if (!done) {
    ++failures_;
    request_at_.store(pages + options_.wal_pages, std::memory_order_relaxed);
    if (!failing_) {
      failing_ = true;
      spdlog::error("WAL checkpoint failed: {} — commits go on into the WAL, which grows until a checkpoint "
                    "succeeds; it is tried again each time the WAL has grown by another {} pages",
                    done.status().toString(), options_.wal_pages);
    }
    return;
  }
  request_at_.store(options_.wal_pages, std::memory_order_relaxed);
  if (failing_) {
    failing_ = false;
    spdlog::warn("WAL checkpoint succeeded again on {} ({} failed meanwhile)", db_->path(), failures_);
  }
  if (done->busy) {
    // Another checkpoint ran, or readers outlasted restart_wait: a RESTART is tried again
    // only once the WAL grew by another restart_pages (commits must not stall at each).
    ++busy_;
    if (restart) restart_at_ = pages + options_.restart_pages;
    return;
  }
  ++checkpoints_;
  if (restart) ++restarts_;
  // Every frame copied: the next commit starts the WAL over (no reader holds it).
  if (restart || done->backfilled_frames >= done->wal_frames) restart_at_ = options_.restart_pages;
  seconds_.observe(seconds);
}

WalCheckpointer::Metrics WalCheckpointer::metrics() const {
  std::lock_guard lock(mutex_);
  Metrics m;
  m.checkpoints = checkpoints_;
  m.restarts = restarts_;
  m.failures = failures_;
  m.busy = busy_;
  m.wal_pages = wal_pages_.load(std::memory_order_relaxed);
  m.seconds = seconds_;
  return m;
}

}  // namespace npac::db
