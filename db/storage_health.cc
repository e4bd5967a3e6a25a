#include "db/storage_health.h"

#include <spdlog/spdlog.h>

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

void StorageHealth::reportFailure(const Status& status) {
  if (!isStorageFailure(status)) return;
  std::string cause = status.file() + "|" + toString(status.code()) + "|" +
                      std::to_string(status.systemErrno());
  std::lock_guard lock(mutex_);
  ++failures_;
  if (failing_.load(std::memory_order_relaxed) && cause == cause_) return;  // already said
  const bool first = !failing_.load(std::memory_order_relaxed);
  cause_ = std::move(cause);
  failing_.store(true, std::memory_order_release);
  spdlog::error("storage failing{}: {}", first ? "" : " (the cause changed)", status.toString());
}

void StorageHealth::reportWritten(const std::string& file) {
  if (!failing_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  if (!failing_.load(std::memory_order_relaxed)) return;
  spdlog::warn("storage writable again: {} ({} operations failed meanwhile)", file, failures_);
  failing_.store(false, std::memory_order_release);
  cause_.clear();
  failures_ = 0;
}

std::uint64_t StorageHealth::failuresSinceHealthy() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

}  // namespace npac::db
