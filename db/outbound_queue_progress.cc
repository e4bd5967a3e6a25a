// OutboundQueue's reads through the delivery progress records (db/progress_log.h, the
// write-once log): a row's state columns are its base state, and the records that name it,
// in append order, take it from there (db/delivery_progress.h applyEvent).
//
// A reader that selects rows by state cannot ask SQL for the state the records give, so it
// selects by a superset of base states, page by page in its order, and keeps the rows whose
// state after the records is the one asked for (ProgressView). Records only move a state
// along db::OutboundQueue's transitions, so the superset is known: a queued message was
// queued or sent by its row; an unacknowledged one was anything but acknowledged.
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "db/database.h"
#include "db/delivery_progress.h"
#include "db/outbound_queue.h"
#include "db/outbound_queue_sql.h"
#include "db/progress_log.h"
#include "db/queue_summary.h"

namespace npac::db {
namespace {

// Rows read per page by the readers that filter by the state after the records.
constexpr std::size_t kPageRows = 512;

}  // namespace

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

const OutboundQueue::ProgressView::Named* OutboundQueue::ProgressView::find(MessageId id) const {
  auto it = named.find(id);
  return it == named.end() ? nullptr : &it->second;
}

Result<OutboundQueue::ProgressView> OutboundQueue::progressView(std::string_view spid, MessageId above) {
  ProgressView view;
  Result<std::vector<ProgressRecord>> records = ProgressLog(db_).after(spid, above);
  if (!records) return records.status();
  if (records->empty()) return view;
  std::vector<MessageId> ids;
  {
    std::unordered_set<MessageId> seen;
    for (const ProgressRecord& record : *records) {
      for (MessageId id : record.ids) {
        if (id > above && seen.insert(id).second) ids.push_back(id);
      }
    }
  }
  std::unordered_map<MessageId, MessageProgress> progress;
  // The base state of every named row of this provider (a named id without one — purged,
  // or another provider's — is left out).
  Result<Statement> base = db_.prepare(
      std::string(queue_sql::kSelect) + "WHERE q.spid = ? AND q.id IN " +
      (db_.backend() == Backend::kPostgres ? NPAC_POSTGRES_ID_LIST : NPAC_SQLITE_ID_LIST));
  if (!base) return base.status();
  for (std::size_t from = 0; from < ids.size(); from += kPageRows) {
    const std::size_t n = std::min(kPageRows, ids.size() - from);
    base->bindText(0, spid).bindText(1, queue_sql::idArray(std::span(ids).subspan(from, n)));
    Result<std::vector<QueuedMessage>> rows = select(*base);
    if (!rows) return rows.status();
    for (QueuedMessage& row : *rows) {
      progress.emplace(row.id, progressOf(row));
      const MessageState state = row.state;
      view.named.emplace(row.id, ProgressView::Named{state, std::move(row)});
    }
    base->reset();
  }
  for (const ProgressRecord& record : *records) {
    for (MessageId id : record.ids) {
      auto it = progress.find(id);
      if (it != progress.end()) applyEvent(record, it->second);
    }
  }
  for (auto& [id, named] : view.named) setProgress(named.row, progress.at(id));
  return view;
}

Result<OutboundQueue::ProgressView> OutboundQueue::settledView(std::string_view spid) {
  ProgressLog log(db_);
  Result<MessageId> mark = log.settledThrough(spid);
  if (!mark) return mark.status();
  Result<ProgressView> view = progressView(spid, *mark);
  if (!view) return view.status();
  view->mark = *mark;
  Result<std::vector<ProgressLog::Open>> open = log.open(spid);
  if (!open) return open.status();
  if (open->empty()) return view;
  // Each open message by its row and the records covering it (one indexed read each: an
  // open message may lie far below the mark, under every record since).
  Result<Statement> row = db_.prepare(std::string(queue_sql::kSelect) + "WHERE q.spid = ? AND q.id = ?");
  if (!row) return row.status();
  for (const ProgressLog::Open& message : *open) {
    row->bindText(0, spid).bindInt64(1, message.id);
    Result<std::vector<QueuedMessage>> found = select(*row);
    if (!found) return found.status();
    row->reset();
    if (found->empty()) continue;  // purged
    QueuedMessage& base = found->front();
    const MessageState column = base.state;
    Result<std::vector<ProgressRecord>> records = log.covering(spid, base.id);
    if (!records) return records.status();
    MessageProgress progress = progressOf(base);
    for (const ProgressRecord& record : *records) applyEvent(record, progress);
    setProgress(base, progress);
    view->named.emplace(base.id, ProgressView::Named{column, std::move(base)});
  }
  return view;
}

Result<std::vector<QueuedMessage>> OutboundQueue::unacknowledged(std::string_view spid, std::size_t limit) {
  Result<ProgressView> view = settledView(spid);
  if (!view) return view.status();
  std::vector<QueuedMessage> out;
  // At or below the mark only open messages are not acknowledged; they come first in id order.
  std::vector<const QueuedMessage*> open;
  for (const auto& [id, named] : view->named) {
    if (id <= view->mark && named.row.state != MessageState::kAcknowledged) open.push_back(&named.row);
  }
  std::sort(open.begin(), open.end(), [](const QueuedMessage* a, const QueuedMessage* b) { return a->id < b->id; });
  for (const QueuedMessage* row : open) {
    if (out.size() == limit) return out;
    out.push_back(*row);
  }
  Result<Statement> query = db_.prepare(std::string(queue_sql::kSelect) +
                                        "WHERE q.spid = ? AND q.state <> 'acknowledged' AND q.id > ? "
                                        "ORDER BY q.id LIMIT ?");
  if (!query) return query.status();
  MessageId after = view->mark;
  while (out.size() < limit) {
    query->bindText(0, spid).bindInt64(1, after).bindInt64(
        2, static_cast<std::int64_t>(view->named.empty() ? limit - out.size() : kPageRows));
    Result<std::vector<QueuedMessage>> rows = select(*query);
    if (!rows) return rows.status();
    query->reset();
    const std::size_t read = rows->size();
    for (QueuedMessage& row : *rows) {
      after = row.id;
      const ProgressView::Named* named = view->find(row.id);
      if (named != nullptr && named->row.state == MessageState::kAcknowledged) continue;
      if (named != nullptr) row = named->row;
      out.push_back(std::move(row));
      if (out.size() == limit) break;
    }
    if (view->named.empty() || read < kPageRows) break;
  }
  return out;
}

Result<std::size_t> OutboundQueue::count(MessageState state) {
  Result<Statement> providers = db_.prepare("SELECT DISTINCT spid FROM outbound_queue");
  if (!providers) return providers.status();
  std::vector<std::string> spids;
  for (;;) {
    Result<bool> next = providers->step();
    if (!next) return next.status();
    if (!*next) break;
    spids.push_back(providers->columnText(0));
  }
  std::size_t total = 0;
  for (const std::string& spid : spids) {
    Result<QueueSummary> summary = summarizeQueue(db_, spid);
    if (!summary) return summary.status();
    total += summary->total(state);
  }
  return total;
}

Status OutboundQueue::probe() {
  Result<Statement> query = db_.prepare("SELECT max(id) FROM outbound_queue");
  if (!query) return query.status();
  return query->step().status();
}

Result<std::map<std::uint32_t, std::size_t>> OutboundQueue::queuedByMask(std::string_view spid) {
  Result<ProgressView> view = settledView(spid);
  if (!view) return view.status();
  // Rows queued by their columns above the mark, one index range per priority.
  Result<std::vector<std::int64_t>> priorities = queue_sql::queuedPriorities(db_, spid);
  if (!priorities) return priorities.status();
  Result<Statement> query = db_.prepare(
      "SELECT function_mask, COUNT(*) FROM outbound_queue WHERE spid = ? AND state = 'queued' AND priority = ? "
      "AND id > ? GROUP BY function_mask");
  if (!query) return query.status();
  std::map<std::uint32_t, std::int64_t> counts;
  for (std::int64_t priority : *priorities) {
    query->bindText(0, spid).bindInt64(1, priority).bindInt64(2, view->mark);
    for (;;) {
      Result<bool> row = query->step();
      if (!row) return row.status();
      if (!*row) break;
      counts[static_cast<std::uint32_t>(query->columnInt64(0))] += query->columnInt64(1);
    }
    query->reset();
  }
  for (const auto& [id, named] : view->named) {
    const bool was = id > view->mark && named.base == MessageState::kQueued;  // counted above
    const bool is = named.row.state == MessageState::kQueued;
    if (was != is) counts[named.row.function_mask] += is ? 1 : -1;
  }
  std::map<std::uint32_t, std::size_t> out;
  for (const auto& [mask, n] : counts) {
    if (n > 0) out[mask] = static_cast<std::size_t>(n);
  }
  return out;
}

Result<OutboundQueue::DueRows> OutboundQueue::acknowledgedByRangesBefore(TimeMs cutoff, std::size_t max) {
  // db/progress_log.h "Retention ranges": per provider, its rows at or below the newest
  // mark noted as acknowledged before the cutoff are due, as one id range of each source,
  // less those listed open or late; the late ones go by their own acknowledgement time.
  ProgressLog log(db_);
  DueRows due;
  // Listed late: few (messages the mark passed waiting), read a bounded page at a time.
  Result<std::vector<MessageId>> late = log.late(std::min<std::size_t>(max, kMaxWaitingOpen));
  if (!late) return late.status();
  if (!late->empty()) {
    Result<std::unordered_map<MessageId, QueuedMessage>> states = statesOf(*late);
    if (!states) return states.status();
    for (MessageId id : *late) {
      auto it = states->find(id);
      if (it == states->end()) {
        due.late.push_back(id);  // its row is gone: only the listing is left
      } else if (it->second.state == MessageState::kAcknowledged && it->second.acknowledged_at < cutoff) {
        due.late.push_back(id);
        due.ids.push_back(id);
      }
    }
  }
  Result<std::vector<std::pair<std::string, MessageId>>> marks = log.retentionMarks(cutoff);
  if (!marks) return marks.status();
  for (const auto& [spid, through] : *marks) {
    if (due.ids.size() >= max) break;
    Result<std::vector<queue_sql::RowSource>> sources =
        queue_sql::rowSources(db_, spid, queue_sql::LegacyAcknowledged::kExclude);
    if (!sources) return sources.status();
    for (const queue_sql::RowSource& source : *sources) {
      if (due.ids.size() >= max) break;
      Result<Statement> range = db_.prepare(
          std::string("SELECT id FROM outbound_queue") + source.indexedBy(db_) + " WHERE " + source.where +
          " AND id <= ? AND NOT EXISTS (SELECT 1 FROM delivery_open AS o WHERE o.spid = outbound_queue.spid "
          "AND o.id = outbound_queue.id) AND NOT EXISTS (SELECT 1 FROM delivery_late AS l "
          "WHERE l.spid = outbound_queue.spid AND l.id = outbound_queue.id) ORDER BY id LIMIT ?");
      if (!range) return range.status();
      const int next = source.bind(*range, spid);
      range->bindInt64(next, through).bindInt64(next + 1, static_cast<std::int64_t>(max - due.ids.size()));
      for (;;) {
        Result<bool> row = range->step();
        if (!row) return row.status();
        if (!*row) break;
        due.ids.push_back(range->columnInt64(0));
      }
    }
    // The notes before this one can no longer widen a range.
    if (Status status = log.pruneNotes(spid, cutoff, through); !status) return status;
  }
  std::sort(due.ids.begin(), due.ids.end());
  due.ids.erase(std::unique(due.ids.begin(), due.ids.end()), due.ids.end());
  return due;
}

Status OutboundQueue::purgeRecordsBelowRows(std::string_view spid) {
  Result<std::optional<MessageId>> lowest = queue_sql::lowestRow(db_, spid);
  if (!lowest) return lowest.status();
  const MessageId below = lowest->value_or(std::numeric_limits<MessageId>::max());
  return ProgressLog(db_).purgeThrough(spid, below - 1).status();
}

std::int64_t OutboundQueue::ProgressView::delta(MessageState state) const {
  std::int64_t delta = 0;
  for (const auto& [id, named] : this->named) {
    delta += (named.row.state == state ? 1 : 0) - (named.base == state ? 1 : 0);
  }
  return delta;
}

}  // namespace npac::db
