#include "npac/npacd/core/ready_queue.h"

namespace npac::npacd {

void ReadyQueue::load(std::vector<db::QueuedMessage> rows, db::MessageId committed_through) {
  invalidate();
  if (rows.size() > capacity_) return;
  for (db::QueuedMessage& row : rows) {
    loaded_.insert(row.id);
    priority_of_.emplace(row.id, row.priority);
    bytes_ += row.pdu.size();
    Key key = keyOf(row);
    rows_.emplace(key, std::move(row));
  }
  high_water_ = committed_through;
  complete_ = true;
}

void ReadyQueue::invalidate() {
  complete_ = false;
  high_water_ = 0;
  rows_.clear();
  priority_of_.clear();
  loaded_.clear();
  bytes_ = 0;
}

bool ReadyQueue::add(db::QueuedMessage row) {
  if (!complete_) return false;
  if (covers(row.id)) return true;  // the load saw it, or it was committed before the load
  if (rows_.size() >= capacity_) {
    invalidate();
    return false;
  }
  high_water_ = row.id;
  priority_of_.emplace(row.id, row.priority);
  bytes_ += row.pdu.size();
  Key key = keyOf(row);
  rows_.emplace(key, std::move(row));
  return true;
}

void ReadyQueue::remove(db::MessageId id) {
  auto it = priority_of_.find(id);
  if (it == priority_of_.end()) return;
  auto row = rows_.find(Key{-it->second, id});
  if (row != rows_.end()) {
    bytes_ -= row->second.pdu.size();
    rows_.erase(row);
  }
  priority_of_.erase(it);
}

std::vector<db::QueuedMessage> ReadyQueue::next(std::uint32_t functions, std::size_t limit) const {
  std::vector<db::QueuedMessage> out;
  for (auto it = rows_.begin(); it != rows_.end() && out.size() < limit; ++it) {
    // The same test as OutboundQueue::nextQueued: every function the message needs.
    if ((it->second.function_mask & functions) == it->second.function_mask) out.push_back(it->second);
  }
  return out;
}

}  // namespace npac::npacd
