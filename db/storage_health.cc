#include "db/storage_health.h"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace npac::db {

bool isStorageFailure(const Status& status) {
  using Code = Status::Code;
  switch (status.code()) {
    case Code::kBusy:
    case Code::kReadOnly:
    case Code::kFull:
    case Code::kCorrupt:
    case Code::kCantOpen:
    case Code::kIoError:
    case Code::kUninitialized:
    case Code::kUnavailable:
      return true;
    default:
      return false;
  }
}

StorageHealth& StorageHealth::process() {
  static StorageHealth health;
  return health;
}

StorageHealth::~StorageHealth() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  probe_wake_.notify_all();
  if (prober_.joinable()) prober_.join();
}

std::string StorageHealth::causeKey(const Status& status) {
  return status.file() + "|" + toString(status.code()) + "|" + std::to_string(status.systemErrno());
}

void StorageHealth::reportFailure(const Status& status) {
  if (!isStorageFailure(status)) return;
  std::string cause = causeKey(status);
  std::lock_guard lock(mutex_);
  ++failures_;
  if (failing_.load(std::memory_order_relaxed) && cause == cause_) return;  // already said
  // A server known not to answer is the cause in force; what its connections report
  // meanwhile (lost, unavailable) is the same story.
  if (silent_.count(status.file()) != 0 && status.code() == Status::Code::kUnavailable &&
      failing_.load(std::memory_order_relaxed)) {
    return;
  }
  const bool first = !failing_.load(std::memory_order_relaxed);
  cause_ = std::move(cause);
  cause_text_ = status.toString();
  failing_.store(true, std::memory_order_release);
  spdlog::error("storage failing{}: {}", first ? "" : " (the cause changed)", status.toString());
}

void StorageHealth::reportNotAnswering(const Status& status, Probe probe, std::chrono::milliseconds interval) {
  const auto now = time_.now();
  {
    std::lock_guard lock(mutex_);
    ++failures_;
    if (silent_.count(status.file()) != 0) return;  // already said, already probed
    silent_.emplace(status.file(), Silent{status, now, std::move(probe), interval, now + interval});
    silent_count_.store(silent_.size(), std::memory_order_release);
    cause_ = causeKey(status);
    cause_text_ = status.toString();
    failing_.store(true, std::memory_order_release);
    spdlog::error("database not answering: {} — until it answers, every database operation is refused at once "
                  "(API 503 database_unavailable, binds rejected transient, no delivery progress recorded) and "
                  "the server is asked again every {} ms",
                  status.toString(), interval.count());
    if (!prober_.joinable() && !stopping_) prober_ = std::thread([this] { probeLoop(); });
  }
  probe_wake_.notify_all();
}

Status StorageHealth::notAnswering(const std::string& location) {
  if (silent_count_.load(std::memory_order_acquire) == 0) return Status::ok();
  std::lock_guard lock(mutex_);
  auto it = silent_.find(location);
  if (it == silent_.end()) return Status::ok();
  ++failures_;
  return Status::make(Status::Code::kUnavailable, silentText(location, it->second), location,
                      it->second.status.hint());
}

std::string StorageHealth::silentText(const std::string& location, const Silent& silent) const {
  const double seconds =
      std::chrono::duration<double>(time_.now() - silent.since).count();
  char gone[32];
  std::snprintf(gone, sizeof gone, "%.1f", seconds);
  return "PostgreSQL at " + location + " has not answered for " + gone + " s (" + silent.status.message() +
         "); npacd asks it again every " + std::to_string(silent.interval.count()) + " ms";
}

void StorageHealth::probeLoop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (silent_.empty()) {
      probe_wake_.wait(lock, [this] { return stopping_ || !silent_.empty(); });
      continue;
    }
    // The server whose probe is due first.
    auto due = silent_.begin();
    for (auto it = silent_.begin(); it != silent_.end(); ++it) {
      if (it->second.next_probe < due->second.next_probe) due = it;
    }
    if (time_.now() < due->second.next_probe) {
      probe_wake_.wait_until(lock, due->second.next_probe);
      continue;
    }
    const std::string location = due->first;
    Probe probe = due->second.probe;
    due->second.next_probe = time_.now() + due->second.interval;
    lock.unlock();
    const bool answered = probe();  // bounded by the probe itself; never under the lock
    lock.lock();
    if (!answered || stopping_) continue;
    auto it = silent_.find(location);
    if (it == silent_.end()) continue;
    const double seconds =
        std::chrono::duration<double>(time_.now() - it->second.since).count();
    const std::string key = causeKey(it->second.status);
    // Said and the health cleared BEFORE the server is published as answering: a caller
    // that finds notAnswering() ok (its lock-free fast path) also finds the line logged and
    // failing() false.
    spdlog::warn("database answering again: PostgreSQL at {} after {:.1f} s without an answer ({} operation(s) "
                 "refused or failed meanwhile); npacd uses it again",
                 location, seconds, failures_);
    if (cause_ == key) {
      failing_.store(false, std::memory_order_release);
      cause_.clear();
      cause_text_.clear();
      failures_ = 0;
    }
    silent_.erase(it);
    silent_count_.store(silent_.size(), std::memory_order_release);
  }
}

void StorageHealth::reportWritten(const std::string& file) {
  if (!failing_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  if (!failing_.load(std::memory_order_relaxed)) return;
  if (silent_.count(file) != 0) return;  // its answer is the probe's to report
  spdlog::warn("storage writable again: {} ({} operations failed meanwhile)", file, failures_);
  failing_.store(false, std::memory_order_release);
  cause_.clear();
  cause_text_.clear();
  failures_ = 0;
}

std::string StorageHealth::cause() const {
  std::lock_guard lock(mutex_);
  if (!failing_.load(std::memory_order_relaxed)) return {};
  for (const auto& [location, silent] : silent_) {
    if (causeKey(silent.status) == cause_) return silentText(location, silent);
  }
  return cause_text_;
}

std::uint64_t StorageHealth::failuresSinceHealthy() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

}  // namespace npac::db
