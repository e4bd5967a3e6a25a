// OutboundQueue's settled mark and the read it bounds (the write-once log, db/progress_log.h):
// settle() moves a provider's mark past what is done, and nextQueued() reads only above it.
//
// Rows are never updated, so the partial index of queued rows (outbound_queue_ready:
// spid, priority DESC, id) keeps every row the provider ever had; since schema 10 it is
// the only index over a provider's rows (beside the partial ones of rows an earlier
// schema moved out of 'queued'). What keeps the reads
// bounded is the mark: every message of the provider at or below it is acknowledged, or
// listed open (delivery_open). A read seeks each priority's rows above the mark (one index
// range per priority present) and folds the records written since the mark over them
// (Window: built from the records alone, no row read for it), plus the few open messages
// one by one (ProgressLog::covering).
//
// What settle() passes over, and what stops it:
//   - acknowledged messages: passed;
//   - failed ones: passed, listed open (they are "not acknowledged" to recovery);
//   - queued or sent ones created at least `stuck_after` ago with acknowledged messages
//     above them: passed, listed open (a message no association can carry, or one whose
//     answer never came, must not hold every later read back), while fewer than
//     kMaxWaitingOpen are listed; a backlog merely waiting its turn is not passed;
//   - any other message not acknowledged: the mark stops below it (and the walk of its
//     priority ends there).
// The mark is sound because ids are committed in order: on SQLite one writer draws them
// (AUTOINCREMENT); on PostgreSQL every append holds OutboundQueue::kAppendLock from drawing
// its ids to its commit, whichever node it runs on. So the rows a statement sees are every
// row below the highest it sees, and no message is committed later below the mark.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "db/database.h"
#include "db/delivery_progress.h"
#include "db/outbound_queue.h"
#include "db/outbound_queue_sql.h"
#include "db/progress_log.h"
#include "db/transaction.h"

namespace npac::db {
namespace {

bool carries(std::uint32_t association_functions, std::uint32_t needed) {
  return (association_functions & needed) == needed;
}

// The records of a provider written since its settled mark, indexed by the ids above the
// mark they name: a message's state is its row's base state with these applied in order.
// Built from the records alone — no row is read — so a read costs what was written since
// the mark, not what is in flight or waiting.
struct Window {
  std::vector<ProgressRecord> records;
  std::unordered_map<MessageId, std::vector<std::uint32_t>> naming;  // id -> records, in order

  MessageProgress fold(MessageId id, MessageProgress base) const {
    auto it = naming.find(id);
    if (it == naming.end()) return base;
    for (std::uint32_t index : it->second) applyEvent(records[index], base);
    return base;
  }
  MessageState stateOf(MessageId id, MessageState base) const {
    MessageProgress progress;
    progress.state = base;
    return fold(id, progress).state;
  }
};

Result<Window> windowAbove(Database& db, std::string_view spid, MessageId mark) {
  Window window;
  Result<std::vector<ProgressRecord>> records = ProgressLog(db).after(spid, mark);
  if (!records) return records.status();
  window.records = std::move(records).value();
  for (std::uint32_t i = 0; i < window.records.size(); ++i) {
    for (MessageId id : window.records[i].ids) {
      if (id > mark) window.naming[id].push_back(i);
    }
  }
  return window;
}

}  // namespace

Result<std::vector<std::int64_t>> queue_sql::queuedPriorities(Database& db, std::string_view spid) {
  Result<Statement> next = db.prepare(
      "SELECT priority FROM outbound_queue WHERE spid = ? AND state = 'queued' AND priority < ? "
      "ORDER BY priority DESC, id LIMIT 1");
  if (!next) return next.status();
  std::vector<std::int64_t> out;
  std::int64_t below = std::numeric_limits<std::int64_t>::max();
  for (;;) {
    next->bindText(0, spid).bindInt64(1, below);
    Result<bool> row = next->step();
    if (!row) return row.status();
    if (!*row) break;
    below = next->columnInt64(0);
    out.push_back(below);
    next->reset();
  }
  return out;
}

const char* queue_sql::RowSource::indexedBy(const Database& db) const {
  return kind == Kind::kAcknowledged && db.backend() == Backend::kSqlite ? " INDEXED BY outbound_queue_acknowledged"
                                                                         : "";
}

int queue_sql::RowSource::bind(Statement& statement, std::string_view spid) const {
  statement.bindText(0, spid);
  if (kind != Kind::kQueued) return 1;
  statement.bindInt64(1, priority);
  return 2;
}

Result<std::vector<queue_sql::RowSource>> queue_sql::rowSources(Database& db, std::string_view spid,
                                                                LegacyAcknowledged legacy) {
  Result<std::vector<std::int64_t>> priorities = queuedPriorities(db, spid);
  if (!priorities) return priorities.status();
  std::vector<RowSource> out;
  for (std::int64_t priority : *priorities) {
    out.push_back(RowSource{RowSource::Kind::kQueued, priority, "spid = ? AND state = 'queued' AND priority = ?"});
  }
  out.push_back(RowSource{RowSource::Kind::kOpenBase, 0, "spid = ? AND state IN ('sent', 'failed')"});
  if (legacy == LegacyAcknowledged::kInclude) {
    out.push_back(RowSource{RowSource::Kind::kAcknowledged, 0, "state = 'acknowledged' AND spid = ?"});
  }
  return out;
}

Result<std::optional<MessageId>> queue_sql::lowestRow(Database& db, std::string_view spid) {
  Result<std::vector<RowSource>> sources = rowSources(db, spid, LegacyAcknowledged::kInclude);
  if (!sources) return sources.status();
  std::optional<MessageId> lowest;
  for (const RowSource& source : *sources) {
    Result<Statement> query =
        db.prepare(std::string("SELECT min(id) FROM outbound_queue") + source.indexedBy(db) + " WHERE " + source.where);
    if (!query) return query.status();
    source.bind(*query, spid);
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (*row && !query->columnIsNull(0)) lowest = std::min(lowest.value_or(query->columnInt64(0)), query->columnInt64(0));
  }
  return lowest;
}

Result<MessageId> OutboundQueue::settle(std::string_view spid, TimeMs now, TimeMs stuck_after) {
  ProgressLog log(db_);
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  Result<MessageId> mark = log.settledThroughForUpdate(spid);
  if (!mark) return mark.status();
  Result<std::vector<ProgressLog::Open>> open = log.open(spid);
  if (!open) return open.status();
  // The open messages still waiting: settled now, failed now, or still waiting.
  std::vector<MessageId> settled;
  std::vector<MessageId> late;  // of them, the ones acknowledged (not gone): listed late
  std::vector<ProgressLog::Open> listed;
  std::size_t waiting = 0;
  for (const ProgressLog::Open& message : *open) {
    if (!message.waiting) continue;
    Result<std::unordered_map<MessageId, QueuedMessage>> state = statesOf(std::span(&message.id, 1));
    if (!state) return state.status();
    auto it = state->find(message.id);
    if (it == state->end() || it->second.state == MessageState::kAcknowledged) {
      settled.push_back(message.id);
      if (it != state->end()) late.push_back(message.id);
    } else if (it->second.state == MessageState::kFailed) {
      listed.push_back(ProgressLog::Open{message.id, false});
    } else {
      ++waiting;
    }
  }
  Result<Window> window = windowAbove(db_, spid, *mark);
  if (!window) return window.status();
  // Each priority's rows above the mark, in id order, up to its first message that is
  // neither acknowledged nor passable (failed, or waiting since `stuck_after`): the mark
  // stops below it whatever the other priorities hold.
  struct Candidate {
    MessageId id;
    MessageState state;
  };
  std::vector<Candidate> candidates;  // passable messages not acknowledged
  std::vector<MessageId> acknowledged;
  MessageId bound = std::numeric_limits<MessageId>::max();  // the mark may not pass it
  MessageId highest = *mark;                                // the highest row walked
  const auto stateOf = [&](MessageId id, MessageState base) { return window->stateOf(id, base); };
  // Every row walked, with its function mask: the rows the mark passes are all among them
  // (each priority's walk and the open_base read stop only above where the mark can go),
  // so the settled counts are taken from here, not read again.
  std::vector<std::pair<MessageId, std::uint32_t>> walked;
  // False when the row stops the walk.
  const auto consider = [&](MessageId id, MessageState state, TimeMs created_at) {
    highest = std::max(highest, id);
    if (state == MessageState::kAcknowledged) {
      acknowledged.push_back(id);
    } else if (state == MessageState::kFailed || now - created_at >= stuck_after) {
      candidates.push_back(Candidate{id, state});
    } else {
      bound = std::min(bound, id - 1);
      return false;
    }
    return true;
  };
  Result<std::vector<std::int64_t>> priorities = queue_sql::queuedPriorities(db_, spid);
  if (!priorities) return priorities.status();
  Result<Statement> walk = db_.prepare(
      "SELECT id, created_at, function_mask FROM outbound_queue WHERE spid = ? AND state = 'queued' AND priority = ? "
      "AND id > ? ORDER BY id LIMIT ?");
  if (!walk) return walk.status();
  for (std::int64_t priority : *priorities) {
    walk->bindText(0, spid)
        .bindInt64(1, priority)
        .bindInt64(2, *mark)
        .bindInt64(3, static_cast<std::int64_t>(kSettleWalkRows));
    std::size_t rows = 0;
    MessageId last = 0;
    for (;;) {
      Result<bool> row = walk->step();
      if (!row) return row.status();
      if (!*row) break;
      ++rows;
      last = walk->columnInt64(0);
      walked.emplace_back(last, static_cast<std::uint32_t>(walk->columnInt64(2)));
      if (!consider(last, stateOf(last, MessageState::kQueued), walk->columnInt64(1))) break;
    }
    walk->reset();
    if (rows == kSettleWalkRows) bound = std::min(bound, last);
  }
  // Rows an earlier schema left sent or failed by their columns (outbound_queue_open_base).
  Result<Statement> base = db_.prepare(
      "SELECT id, state, created_at, function_mask FROM outbound_queue WHERE spid = ? AND state IN ('sent', 'failed') "
      "AND id > ? ORDER BY id");
  if (!base) return base.status();
  base->bindText(0, spid).bindInt64(1, *mark);
  for (;;) {
    Result<bool> row = base->step();
    if (!row) return row.status();
    if (!*row) break;
    const MessageId id = base->columnInt64(0);
    const MessageState state = stateOf(id, parseMessageState(base->columnText(1)).value_or(MessageState::kSent));
    walked.emplace_back(id, static_cast<std::uint32_t>(base->columnInt64(3)));
    if (!consider(id, state, base->columnInt64(2))) break;
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
  std::sort(acknowledged.begin(), acknowledged.end());
  MessageId next_mark = std::min(bound, highest);
  // Waiting messages are listed only up to kMaxWaitingOpen, and only where acknowledged
  // ones lie above them: a backlog waiting its turn is not passed over, its reads cost
  // nothing above the mark.
  for (const Candidate& c : candidates) {
    if (c.id > next_mark) break;
    if (c.state != MessageState::kFailed && waiting == kMaxWaitingOpen) {
      next_mark = c.id - 1;
      break;
    }
    if (c.state != MessageState::kFailed) ++waiting;
  }
  const auto acknowledgedIn = [&](MessageId above, MessageId through) {
    auto it = std::upper_bound(acknowledged.begin(), acknowledged.end(), above);
    return it != acknowledged.end() && *it <= through;
  };
  for (auto c = candidates.rbegin(); c != candidates.rend(); ++c) {
    if (c->id > next_mark) continue;
    if (c->state == MessageState::kFailed) continue;
    if (acknowledgedIn(c->id, next_mark)) break;
    next_mark = c->id - 1;
  }
  for (const Candidate& c : candidates) {
    if (c.id > next_mark) break;
    listed.push_back(ProgressLog::Open{c.id, c.state != MessageState::kFailed});
  }
  if (next_mark > *mark) {
    // The rows the mark passes join the provider's settled counts (db/progress_log.h).
    std::map<std::uint32_t, std::int64_t> passed;
    for (const auto& [id, mask] : walked) {
      if (id <= next_mark) ++passed[mask];
    }
    if (Status status = log.addSettledCounts(spid, passed); !status) return status;
    if (Status status = log.saveSettled(spid, next_mark, now); !status) return status;
    // When what it passed was acknowledged (the retention purge's ranges, db/progress_log.h):
    // from the acknowledgement records naming the ids it passed, each at or after the
    // provider's newest note (by which the messages below the old mark were acknowledged).
    std::vector<std::pair<TimeMs, MessageId>> acknowledgements;
    for (const ProgressRecord& record : window->records) {
      if (record.event != ProgressEvent::kAcknowledged) continue;
      auto first = std::upper_bound(record.ids.begin(), record.ids.end(), *mark);  // stored ascending
      if (first != record.ids.end() && *first <= next_mark) acknowledgements.emplace_back(record.at, *first);
    }
    if (!acknowledgements.empty()) {
      Result<std::optional<TimeMs>> newest = log.newestNote(spid);
      if (!newest) return newest.status();
      const std::vector<ProgressLog::MarkNote> notes = ProgressLog::notesFor(
          std::move(acknowledgements), next_mark, newest->value_or(std::numeric_limits<TimeMs>::min()));
      if (Status status = log.saveNotes(spid, notes); !status) return status;
    }
  } else {
    next_mark = *mark;
  }
  if (Status status = log.saveOpen(spid, listed, settled); !status) return status;
  if (Status status = log.saveLate(spid, late); !status) return status;
  if (Status status = txn.commit(); !status) return status;
  return next_mark;
}

Result<std::size_t> OutboundQueue::settleLagging(TimeMs cutoff) {
  // One probe of delivery_progress_by_last per provider: an acknowledgement record older
  // than the cutoff that names an id above the provider's mark.
  Result<Statement> lagging = db_.prepare(
      "SELECT p.spid FROM service_providers AS p LEFT JOIN delivery_settled AS s ON s.spid = p.spid "
      "WHERE EXISTS (SELECT 1 FROM delivery_progress AS d WHERE d.spid = p.spid "
      "AND d.last_id > coalesce(s.settled_through, 0) AND d.event = ? AND d.at < ?) ORDER BY p.spid");
  if (!lagging) return lagging.status();
  lagging->bindInt64(0, static_cast<std::int64_t>(ProgressEvent::kAcknowledged)).bindInt64(1, cutoff);
  std::vector<std::string> spids;
  for (;;) {
    Result<bool> row = lagging->step();
    if (!row) return row.status();
    if (!*row) break;
    spids.push_back(lagging->columnText(0));
  }
  std::size_t moved = 0;
  for (const std::string& spid : spids) {
    Result<MessageId> before = ProgressLog(db_).settledThrough(spid);
    if (!before) return before.status();
    Result<MessageId> after = settle(spid, cutoff);
    if (!after) return after.status();
    if (*after > *before) ++moved;
  }
  return moved;
}

Result<std::vector<QueuedMessage>> OutboundQueue::nextQueued(std::string_view spid,
                                                             std::uint32_t association_functions,
                                                             std::size_t limit) {
  ProgressLog log(db_);
  Result<MessageId> mark = log.settledThrough(spid);
  if (!mark) return mark.status();
  Result<Window> window = windowAbove(db_, spid, *mark);
  if (!window) return window.status();
  std::vector<QueuedMessage> out;
  // Above the mark: each priority's rows queued by their columns, in id order, that the
  // records left queued. The ids first (what is in flight sits at the front of that order
  // and is skipped without reading its row and body), then the chosen rows by id.
  Result<std::vector<std::int64_t>> priorities = queue_sql::queuedPriorities(db_, spid);
  if (!priorities) return priorities.status();
  constexpr std::size_t kPageIds = 1024;
  Result<Statement> scan = db_.prepare(
      "SELECT id FROM outbound_queue WHERE spid = ? AND state = 'queued' AND priority = ? "
      "AND (function_mask & ?) = function_mask AND id > ? ORDER BY id LIMIT ?");
  if (!scan) return scan.status();
  std::vector<MessageId> chosen;
  for (std::int64_t priority : *priorities) {
    if (chosen.size() >= limit) break;
    MessageId after = *mark;
    for (;;) {
      scan->bindText(0, spid)
          .bindInt64(1, priority)
          .bindInt64(2, association_functions)
          .bindInt64(3, after)
          .bindInt64(4, static_cast<std::int64_t>(window->naming.empty() ? limit - chosen.size() : kPageIds));
      std::size_t read = 0;
      for (;;) {
        Result<bool> row = scan->step();
        if (!row) return row.status();
        if (!*row) break;
        ++read;
        after = scan->columnInt64(0);
        if (chosen.size() < limit && window->stateOf(after, MessageState::kQueued) == MessageState::kQueued) {
          chosen.push_back(after);
        }
      }
      scan->reset();
      if (chosen.size() >= limit || window->naming.empty() || read < kPageIds) break;
    }
  }
  if (!chosen.empty()) {
    Result<Statement> rows = db_.prepare(
        std::string(queue_sql::kSelect) + "WHERE q.id IN " +
        (db_.backend() == Backend::kPostgres ? NPAC_POSTGRES_ID_LIST : NPAC_SQLITE_ID_LIST));
    if (!rows) return rows.status();
    rows->bindText(0, queue_sql::idArray(chosen));
    Result<std::vector<QueuedMessage>> read = select(*rows);
    if (!read) return read.status();
    for (QueuedMessage& row : *read) {
      setProgress(row, window->fold(row.id, progressOf(row)));
      out.push_back(std::move(row));
    }
    std::sort(out.begin(), out.end(), [](const QueuedMessage& a, const QueuedMessage& b) {
      return a.priority != b.priority ? a.priority > b.priority : a.id < b.id;
    });
  }
  // Rows an earlier schema left sent by their columns that a record put back, and open
  // messages below the mark that are queued: merged in send order.
  bool merged = false;
  Result<Statement> base = db_.prepare(std::string(queue_sql::kSelect) +
                                       "WHERE q.spid = ? AND q.state IN ('sent', 'failed') AND q.id > ?");
  if (!base) return base.status();
  base->bindText(0, spid).bindInt64(1, *mark);
  Result<std::vector<QueuedMessage>> based = select(*base);
  if (!based) return based.status();
  for (QueuedMessage& row : *based) {
    const MessageProgress progress = window->fold(row.id, progressOf(row));
    if (progress.state != MessageState::kQueued || !carries(association_functions, row.function_mask)) continue;
    setProgress(row, progress);
    out.push_back(std::move(row));
    merged = true;
  }
  Result<std::vector<ProgressLog::Open>> open = log.open(spid);
  if (!open) return open.status();
  for (const ProgressLog::Open& message : *open) {
    if (!message.waiting) continue;
    Result<std::unordered_map<MessageId, QueuedMessage>> state = statesOf(std::span(&message.id, 1));
    if (!state) return state.status();
    auto it = state->find(message.id);
    if (it == state->end() || it->second.state != MessageState::kQueued) continue;
    if (!carries(association_functions, it->second.function_mask)) continue;
    out.push_back(std::move(it->second));
    merged = true;
  }
  if (merged) {
    std::sort(out.begin(), out.end(), [](const QueuedMessage& a, const QueuedMessage& b) {
      return a.priority != b.priority ? a.priority > b.priority : a.id < b.id;
    });
    if (out.size() > limit) out.resize(limit);
  }
  return out;
}

}  // namespace npac::db
