// WalCheckpointer: SQLite's WAL checkpoints on a thread of their own, off the threads that
// commit.
//
// In WAL mode every commit appends to the -wal file; a checkpoint copies those pages back
// into the database file (and, at either --durability, fsyncs it). Left to SQLite, the
// checkpoint runs inside whichever COMMIT first finds the WAL past 1000 pages
// (wal_autocheckpoint): on npacd's core thread — the delivery round or the
// acknowledgements waiting behind it — or the queue writer's batch, for the several
// milliseconds the copy and its fsync take. With 16,000 submissions a second that was
// about ten times a second, and it doubled npacd's p99 submit→acknowledgement
// (bench/compare.sh "open loop", docs/DATABASE.md "Checkpoints").
//
// A connection opened with OpenOptions::checkpointer set to this object runs no checkpoint
// itself: its commits report the WAL's size here (sqlite3_wal_hook, which replaces
// SQLite's automatic checkpoint), and once the WAL holds wal_pages or more this object's
// thread checkpoints on its own connection. PASSIVE, as SQLite's automatic checkpoint
// is: it copies what no reader still needs and never waits for a writer or a reader, so
// commits go on meanwhile. When the WAL has nevertheless grown to restart_pages (commits
// arriving faster than a passive checkpoint can finish with none in between, so that no
// writer may start the WAL over), the checkpoint is a RESTART, which waits for the
// writers in progress and the readers so that the next commit starts the WAL file from
// its beginning: the file stays bounded. A RESTART holds new commits back while it waits,
// so it waits at most restart_wait; one that a long reader (a backup, an operator's
// sqlite3) still held back is not tried again before the WAL has grown by another
// restart_pages — the WAL then grows, as it would with SQLite's own checkpoints, instead
// of commits stalling again and again.
//
// Nothing about durability changes: a commit is as durable as before (the WAL is what
// makes it so); only who copies it into the database file, and when.
//
// A checkpoint that fails (disk full while the database file grows, an I/O error) is
// logged once (spdlog error, the Status naming the file) until one succeeds again (warn).
// It is tried again once the WAL has grown by another wal_pages since the failure — not at
// every commit, which would spend the thread on attempts bound to fail while the cause
// lasts. Commits are not affected: the WAL keeps them, so it is not reported to the
// StorageHealth (Database::checkpointWal).
//
// Threading: start() and stop() from the owning thread. The WAL hook (onCommit) runs on
// any committing thread and only touches atomics and, when a checkpoint is due and none
// is requested yet, the condition variable. Every connection given this object must be
// closed before it is destroyed. metrics() from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/metrics_text.h"
#include "db/database.h"
#include "db/status.h"

struct sqlite3;

namespace npac::db {

class WalCheckpointer {
 public:
  struct Options {
    int wal_pages = 1000;       // SQLite's own default wal_autocheckpoint
    int restart_pages = 16000;  // about 64 MB of 4 KiB pages
    // How long a RESTART may hold new commits back waiting for writers and readers.
    std::chrono::milliseconds restart_wait{50};
  };

  // Opens the checkpointer's own connection to `path` (an SQLite file; the schema is
  // brought up to date as by any Database::open) without starting its thread.
  static Result<std::unique_ptr<WalCheckpointer>> open(const std::string& path, const OpenOptions& open_options,
                                                       Options options);
  static Result<std::unique_ptr<WalCheckpointer>> open(const std::string& path, const OpenOptions& open_options) {
    return open(path, open_options, Options{});
  }
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Starts the thread that checkpoints whenever one is due. Idempotent.
  void start();
  // Stops and joins the thread (a checkpoint in progress finishes first). Idempotent.
  void stop();

  // One checkpoint now, on the calling thread, if one is due (requested by a commit);
  // whether one ran. What the thread does; for tests that drive it without the thread
  // (never while the thread runs).
  bool checkpointIfDue();

  // The WAL hook (sqlite3_wal_hook) Database::open installs on a connection given this
  // checkpointer: `pages` is the WAL's size after the commit.
  static int onCommit(void* checkpointer, sqlite3* connection, const char* schema, int pages);

  struct Metrics {
    std::uint64_t checkpoints = 0;  // completed (passive or restart)
    std::uint64_t restarts = 0;     // of them, RESTART checkpoints
    std::uint64_t failures = 0;
    std::uint64_t busy = 0;         // could not finish: another checkpoint, or a reader held it back
    std::int64_t wal_pages = 0;     // the WAL's size after the latest commit
    common::Histogram seconds{kSecondsBuckets};
  };
  static constexpr std::array<double, 10> kSecondsBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                          0.025,  0.05,  0.1,    0.25,  1};
  Metrics metrics() const;

 private:
  WalCheckpointer(std::unique_ptr<Database> db, Options options);
  void run();
  void checkpoint();

  std::unique_ptr<Database> db_;
  const Options options_;

  std::atomic<bool> requested_{false};
  std::atomic<std::int64_t> wal_pages_{0};
  // WAL pages from which a commit asks for a checkpoint: options_.wal_pages, or after a
  // failed one the WAL's size then plus wal_pages.
  std::atomic<std::int64_t> request_at_{0};

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool failing_ = false;
  std::uint64_t checkpoints_ = 0;
  std::uint64_t restarts_ = 0;
  std::uint64_t failures_ = 0;
  std::uint64_t busy_ = 0;
  std::int64_t restart_at_ = 0;  // the checkpoint thread's: WAL pages from which to RESTART
  common::Histogram seconds_{kSecondsBuckets};

  std::thread thread_;
};

}  // namespace npac::db
