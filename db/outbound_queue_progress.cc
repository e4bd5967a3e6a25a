// OutboundQueue's reads through the delivery progress records (db/progress_log.h, the
// write-once log): a row's state columns are its base state, and the records that name it,
// in append order, take it from there (db/delivery_progress.h applyEvent).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "db/delivery_progress.h"
#include "db/outbound_queue.h"
#include "db/progress_log.h"

namespace npac::db {

Status OutboundQueue::foldProgress(std::vector<QueuedMessage>& rows) {
  if (rows.empty()) return Status::ok();
  ProgressLog log(db_);
  if (rows.size() == 1) {
    Result<std::vector<ProgressRecord>> records = log.covering(rows.front().spid, rows.front().id);
    if (!records) return records.status();
    MessageProgress progress = progressOf(rows.front());
    for (const ProgressRecord& record : *records) applyEvent(record, progress);
    setProgress(rows.front(), progress);
    return Status::ok();
  }
  // Per provider: every record that names one of its rows names an id at or above the
  // lowest of them.
  std::map<std::string, MessageId, std::less<>> lowest;
  std::unordered_map<MessageId, std::size_t> at;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto [it, fresh] = lowest.emplace(rows[i].spid, rows[i].id);
    if (!fresh) it->second = std::min(it->second, rows[i].id);
    at.emplace(rows[i].id, i);
  }
  std::vector<MessageProgress> progress;
  progress.reserve(rows.size());
  for (const QueuedMessage& row : rows) progress.push_back(progressOf(row));
  bool any = false;
  for (const auto& [spid, low] : lowest) {
    Result<std::vector<ProgressRecord>> records = log.after(spid, low - 1);
    if (!records) return records.status();
    for (const ProgressRecord& record : *records) {
      for (MessageId id : record.ids) {
        auto it = at.find(id);
        if (it != at.end() && rows[it->second].spid == spid) any |= applyEvent(record, progress[it->second]);
      }
    }
  }
  if (any) {
    for (std::size_t i = 0; i < rows.size(); ++i) setProgress(rows[i], progress[i]);
  }
  return Status::ok();
}

}  // namespace npac::db
