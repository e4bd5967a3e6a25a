// StorageHealth: whether npacd can write its database right now, and the one log line
// per change of that state.
//
// When a disk fills up or a file turns unwritable, every request, bind and queue commit
// fails the same way; a line per failure would flood the log and bury the cause. So
// every Database reports here: a storage failure (isStorageFailure: full, read-only,
// I/O error, locked, corrupt...) from any statement, and every write that committed.
// The tracker logs (spdlog, error) the first failure after a healthy period — the file,
// SQLite's codes, the errno's meaning and what to do, from Status::toString() — and again
// only when the cause changes (another file, another category or errno). The first
// committed write after failures logs (warn) "storage writable again" with how many
// operations failed meanwhile. Nothing else is logged; callers still get every Status.
//
// Threading: thread-safe. Every connection of the process reports to process() unless
// its OpenOptions name another tracker (tests). reportWritten() is one atomic load while
// healthy, so the write path pays nothing in the normal case.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "db/status.h"

namespace npac::db {

// The categories that mean the file cannot be used as it should: the disk or file
// refused (full, read-only, I/O error, cannot open, not initialised), the file is
// damaged, or another process held the lock past the busy timeout. Not: a missing row,
// a constraint, a bad argument, an in-memory queue limit or a shutdown.
bool isStorageFailure(const Status& status);

class StorageHealth {
 public:
  StorageHealth() = default;
  StorageHealth(const StorageHealth&) = delete;
  StorageHealth& operator=(const StorageHealth&) = delete;

  // The tracker every Database of this process reports to by default.
  static StorageHealth& process();

  // A database operation failed with `status`. Ignored unless isStorageFailure(status).
  void reportFailure(const Status& status);
  // A write reached the file (a COMMIT, or an autocommit write statement).
  void reportWritten(const std::string& file);

  bool failing() const { return failing_.load(std::memory_order_acquire); }
  // Storage failures reported since the last healthy state (0 while healthy).
  std::uint64_t failuresSinceHealthy() const;

 private:
  mutable std::mutex mutex_;
  std::atomic<bool> failing_{false};
  std::string cause_;  // the failure being reported: file, category, errno
  std::uint64_t failures_ = 0;
};

}  // namespace npac::db
