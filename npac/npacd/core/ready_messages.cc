#include "npac/npacd/core/ready_messages.h"

#include <spdlog/spdlog.h>

namespace npac::npacd {

namespace {

// Rounds to wait before trying to load a ReadyQueue again when the provider had more
// queued than kReadyLoadAtMost (the count costs an index scan of that many entries).
constexpr std::uint32_t kLoadBackoffRounds = 16;

}  // namespace

ReadyQueue* ReadyMessages::complete(const std::string& spid) {
  auto it = ready_.find(spid);
  return it != ready_.end() && it->second.queue.complete() ? &it->second.queue : nullptr;
}

ReadyQueue* ReadyMessages::load(const std::string& spid) {
  if (ReadyQueue* kept = complete(spid)) return kept;
  Entry& entry = ready_.try_emplace(spid, limits_.per_provider).first->second;
  if (entry.skip_loads > 0) {
    --entry.skip_loads;
    return nullptr;
  }
  // The mark first, then the snapshot: a row of this writer committed in between is in
  // the snapshot, one committed after it has a higher id than the mark.
  auto snapshot = committed_through_ ? queue_.queuedSnapshot(spid, kReadyLoadAtMost, committed_through_())
                                     : queue_.queuedSnapshot(spid, kReadyLoadAtMost);
  if (!snapshot.isOk()) return nullptr;  // the database read that follows reports it
  std::size_t bytes = 0;
  if (snapshot->has_value()) {
    for (const db::QueuedMessage& row : (*snapshot)->messages) bytes += row.pdu.size();
  }
  if (!snapshot->has_value() || total_ + (*snapshot)->messages.size() > limits_.total ||
      bytes_ + bytes > limits_.total_bytes) {
    entry.skip_loads = kLoadBackoffRounds;
    return nullptr;
  }
  entry.queue.load(std::move((*snapshot)->messages), (*snapshot)->committed_through);
  account(entry.queue, 0, 0);
  return &entry.queue;
}

std::optional<std::vector<db::QueuedMessage>> ReadyMessages::next(const std::string& spid, std::uint32_t functions,
                                                                  std::size_t limit,
                                                                  const std::function<void()>& before_load) {
  ReadyQueue* kept = complete(spid);
  if (kept == nullptr) {
    before_load();
    kept = load(spid);
  }
  if (kept == nullptr) {
    ++database_rounds_;
    return std::nullopt;
  }
  ++rounds_;
  return kept->next(functions, limit);
}

void ReadyMessages::account(const ReadyQueue& queue, std::size_t size, std::size_t bytes) {
  total_ = total_ - size + queue.size();
  bytes_ = bytes_ - bytes + queue.bytes();
}

void ReadyMessages::drop(const std::string& spid) {
  auto it = ready_.find(spid);
  if (it == ready_.end()) return;
  const std::size_t size = it->second.queue.size();
  const std::size_t bytes = it->second.queue.bytes();
  it->second.queue.invalidate();
  account(it->second.queue, size, bytes);
}

void ReadyMessages::dropAll() {
  for (auto& [spid, entry] : ready_) entry.queue.invalidate();
  total_ = 0;
  bytes_ = 0;
}

void ReadyMessages::committed(const std::string& spid, std::vector<db::QueuedMessage> rows) {
  auto it = ready_.find(spid);
  if (it == ready_.end() || !it->second.queue.complete()) return;  // the database has them
  ReadyQueue& queue = it->second.queue;
  for (db::QueuedMessage& row : rows) {
    if (!queue.covers(row.id) && (total_ >= limits_.total || bytes_ + row.pdu.size() > limits_.total_bytes)) {
      spdlog::debug("outbound queue: {} has more queued than memory keeps ({} messages, {} bytes held); "
                    "its delivery reads the database until its backlog drains",
                    spid, total_, bytes_);
      drop(spid);
      return;
    }
    const std::size_t size = queue.size();
    const std::size_t bytes = queue.bytes();
    const bool kept = queue.add(std::move(row));  // false: beyond its capacity, dropped whole
    account(queue, size, bytes);
    if (!kept) return;
  }
}

void ReadyMessages::noteSubmitted(const std::string& spid, const std::vector<db::MessageId>& ids) {
  auto it = ready_.find(spid);
  if (it == ready_.end() || !it->second.queue.complete()) return;
  for (db::MessageId id : ids) {
    if (!it->second.queue.covers(id)) return drop(spid);
  }
}

void ReadyMessages::remove(const std::string& spid, db::MessageId id) {
  auto it = ready_.find(spid);
  if (it == ready_.end()) return;
  const std::size_t size = it->second.queue.size();
  const std::size_t bytes = it->second.queue.bytes();
  it->second.queue.remove(id);
  account(it->second.queue, size, bytes);
}

}  // namespace npac::npacd
