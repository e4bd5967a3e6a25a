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
// A PostgreSQL server that does not answer at all (stopped, hung, cut off) is a state of
// its own: the first statement that waited the whole answer bound (db/postgres_io.h)
// reports it with reportNotAnswering(); from then on every connection to that server is
// refused at once by notAnswering() — no thread waits on it again — while a thread of
// this tracker asks the server (the probe) every probe interval. One error line when it
// stops answering, one warn line when it answers again, naming how long it was gone and
// how many operations were refused meanwhile (docs/DATABASE.md "When PostgreSQL does not
// answer").
//
// Threading: thread-safe. Every connection of the process reports to process() unless
// its OpenOptions name another tracker (tests). reportWritten() and notAnswering() are
// one atomic load while healthy, so the write path pays nothing in the normal case.
// The probe thread is started at the first reportNotAnswering() and joined by the
// destructor (within one probe, itself bounded).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "common/time_source.h"
#include "db/status.h"

namespace npac::db {

// The categories that mean the file cannot be used as it should: the disk or file
// refused (full, read-only, I/O error, cannot open, not initialised), the file is
// damaged, or another process held the lock past the busy timeout. Not: a missing row,
// a constraint, a bad argument, an in-memory queue limit or a shutdown.
bool isStorageFailure(const Status& status);

class StorageHealth {
 public:
  // Asks a server that stopped answering whether it answers again (true: it does). Runs
  // on the probe thread; must itself be bounded.
  using Probe = std::function<bool()>;

  explicit StorageHealth(const common::TimeSource& time = common::realTimeSource()) : time_(time) {}
  ~StorageHealth();
  StorageHealth(const StorageHealth&) = delete;
  StorageHealth& operator=(const StorageHealth&) = delete;

  // The tracker every Database of this process reports to by default.
  static StorageHealth& process();

  // A database operation failed with `status`. Ignored unless isStorageFailure(status).
  void reportFailure(const Status& status);
  // A write reached the file (a COMMIT, or an autocommit write statement).
  void reportWritten(const std::string& file);

  // A statement on the server `status.file()` names got no answer within the bound.
  // Until `probe` returns true (asked every `interval`), notAnswering() refuses that
  // server's work at once. A second report for the same server changes nothing.
  void reportNotAnswering(const Status& status, Probe probe, std::chrono::milliseconds interval);
  // kUnavailable naming how long `location` has not answered, counted as a failure; ok
  // when it answers (or was never reported).
  Status notAnswering(const std::string& location);

  bool failing() const { return failing_.load(std::memory_order_acquire); }
  // Storage failures reported since the last healthy state (0 while healthy).
  std::uint64_t failuresSinceHealthy() const;
  // The failure in force, in one line (Status::toString of the first failure of this
  // state, or what a server not answering means now); empty while healthy.
  std::string cause() const;

 private:
  const common::TimeSource& time_;  // the problem's duration, the probes' cadence
  struct Silent {  // a server that does not answer
    Status status;  // the report that started it
    std::chrono::steady_clock::time_point since;
    Probe probe;
    std::chrono::milliseconds interval;
    std::chrono::steady_clock::time_point next_probe;
  };
  void probeLoop();
  std::string silentText(const std::string& location, const Silent& silent) const;  // mutex_ held
  static std::string causeKey(const Status& status);

  mutable std::mutex mutex_;
  std::atomic<bool> failing_{false};
  std::string cause_;  // the failure being reported: file, category, errno
  std::string cause_text_;
  std::uint64_t failures_ = 0;
  // Servers not answering, by location; silent_count_ mirrors its size for the fast path.
  std::map<std::string, Silent> silent_;
  std::atomic<std::size_t> silent_count_{0};
  std::condition_variable probe_wake_;
  bool stopping_ = false;
  std::thread prober_;
};

}  // namespace npac::db
