// OutboundQueue's settled mark and the read it bounds (the write-once log, db/progress_log.h):
// settle() moves a provider's mark past what is done, and nextQueued() reads only above it.
//
// Rows are never updated, so the partial index of queued rows (outbound_queue_ready:
// spid, priority DESC, id) keeps every row the provider ever had. What keeps the reads
// bounded is the mark: every message of the provider at or below it is acknowledged, or
// listed open (delivery_open). A read seeks each priority's rows above the mark (one index
// range per priority present) and folds only the records after it, plus the few open
// messages one by one (ProgressLog::covering).
//
// What settle() passes over, and what stops it:
//   - acknowledged messages: passed;
//   - failed ones: passed, listed open (they are "not acknowledged" to recovery);
//   - queued or sent ones created at least `stuck_after` ago: passed, listed open (a
//     message no association can carry, or one whose answer never came, must not hold
//     every later read back), while fewer than kMaxWaitingOpen are listed;
//   - any other message not acknowledged: the mark stops below it.
// Ids are assigned in commit order on SQLite (one writer; AUTOINCREMENT), so the rows a
// transaction sees are every row below the highest it sees. PostgreSQL's sequences give no
// such promise across nodes: there the mark is not moved (docs/DATABASE.md).
#include <algorithm>
#include <limits>

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

// The priorities of `spid`'s rows that were queued by their columns, highest first: one
// seek of the ready index each.
Result<std::vector<std::int64_t>> prioritiesOf(Database& db, std::string_view spid) {
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

}  // namespace

Result<MessageId> OutboundQueue::settle(std::string_view spid, TimeMs now, TimeMs stuck_after) {
  ProgressLog log(db_);
  if (db_.backend() == Backend::kPostgres) return log.settledThrough(spid);
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  Result<MessageId> mark = log.settledThrough(spid);
  if (!mark) return mark.status();
  Result<std::vector<ProgressLog::Open>> open = log.open(spid);
  if (!open) return open.status();
  // The open messages still waiting: settled now, failed now, or still waiting.
  std::vector<MessageId> settled;
  std::vector<ProgressLog::Open> listed;
  std::size_t waiting = 0;
  for (const ProgressLog::Open& message : *open) {
    if (!message.waiting) continue;
    Result<std::unordered_map<MessageId, QueuedMessage>> state = statesOf(std::span(&message.id, 1));
    if (!state) return state.status();
    auto it = state->find(message.id);
    if (it == state->end() || it->second.state == MessageState::kAcknowledged) {
      settled.push_back(message.id);
    } else if (it->second.state == MessageState::kFailed) {
      listed.push_back(ProgressLog::Open{message.id, false});
    } else {
      ++waiting;
    }
  }
  Result<ProgressView> view = progressView(spid, *mark);
  if (!view) return view.status();
  // Every message above the mark that is not acknowledged, within each priority's walk.
  struct Candidate {
    MessageId id;
    MessageState state;
    TimeMs created_at;
  };
  std::vector<Candidate> candidates;
  MessageId cut = std::numeric_limits<MessageId>::max();  // rows above it were not walked
  MessageId highest = *mark;                              // the highest row walked
  const auto consider = [&](MessageId id, MessageState base, TimeMs created_at) {
    highest = std::max(highest, id);
    const ProgressView::Named* named = view->find(id);
    const MessageState state = named != nullptr ? named->row.state : base;
    if (state != MessageState::kAcknowledged) candidates.push_back(Candidate{id, state, created_at});
  };
  Result<std::vector<std::int64_t>> priorities = prioritiesOf(db_, spid);
  if (!priorities) return priorities.status();
  Result<Statement> walk = db_.prepare(
      "SELECT id, created_at FROM outbound_queue WHERE spid = ? AND state = 'queued' AND priority = ? "
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
      consider(last, MessageState::kQueued, walk->columnInt64(1));
    }
    walk->reset();
    if (rows == kSettleWalkRows) cut = std::min(cut, last);
  }
  // Rows an earlier schema left sent or failed by their columns (outbound_queue_open_base).
  Result<Statement> base = db_.prepare(
      "SELECT id, state, created_at FROM outbound_queue WHERE spid = ? AND state IN ('sent', 'failed') "
      "AND id > ? ORDER BY id");
  if (!base) return base.status();
  base->bindText(0, spid).bindInt64(1, *mark);
  for (;;) {
    Result<bool> row = base->step();
    if (!row) return row.status();
    if (!*row) break;
    consider(base->columnInt64(0), parseMessageState(base->columnText(1)).value_or(MessageState::kSent),
             base->columnInt64(2));
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.id < b.id; });
  MessageId next_mark = std::min(cut, highest);
  for (const Candidate& c : candidates) {
    if (c.id > next_mark) break;
    if (c.state == MessageState::kFailed) {
      listed.push_back(ProgressLog::Open{c.id, false});
    } else if (now - c.created_at >= stuck_after && waiting < kMaxWaitingOpen) {
      listed.push_back(ProgressLog::Open{c.id, true});
      ++waiting;
    } else {
      next_mark = c.id - 1;
      break;
    }
  }
  // Only what the mark passes is listed (a candidate above it is read above the mark).
  std::erase_if(listed, [&](const ProgressLog::Open& o) { return o.id > next_mark; });
  if (next_mark > *mark) {
    if (Status status = log.saveSettled(spid, next_mark, now); !status) return status;
  } else {
    next_mark = *mark;
  }
  if (Status status = log.saveOpen(spid, listed, settled); !status) return status;
  if (Status status = txn.commit(); !status) return status;
  return next_mark;
}

Result<std::vector<QueuedMessage>> OutboundQueue::nextQueued(std::string_view spid,
                                                             std::uint32_t association_functions,
                                                             std::size_t limit) {
  ProgressLog log(db_);
  Result<MessageId> mark = log.settledThrough(spid);
  if (!mark) return mark.status();
  Result<ProgressView> view = progressView(spid, *mark);
  if (!view) return view.status();
  std::vector<QueuedMessage> out;
  // Above the mark: each priority's rows queued by their columns, in id order, that the
  // records left queued.
  Result<std::vector<std::int64_t>> priorities = prioritiesOf(db_, spid);
  if (!priorities) return priorities.status();
  constexpr std::size_t kPageRows = 512;
  Result<Statement> query = db_.prepare(
      std::string(queue_sql::kSelect) +
      "WHERE q.spid = ? AND q.state = 'queued' AND q.priority = ? AND (q.function_mask & ?) = q.function_mask "
      "AND q.id > ? ORDER BY q.id LIMIT ?");
  if (!query) return query.status();
  for (std::int64_t priority : *priorities) {
    if (out.size() >= limit) break;
    MessageId after = *mark;
    for (;;) {
      query->bindText(0, spid)
          .bindInt64(1, priority)
          .bindInt64(2, association_functions)
          .bindInt64(3, after)
          .bindInt64(4, static_cast<std::int64_t>(view->named.empty() ? limit - out.size() : kPageRows));
      Result<std::vector<QueuedMessage>> rows = select(*query);
      if (!rows) return rows.status();
      query->reset();
      const std::size_t read = rows->size();
      for (QueuedMessage& row : *rows) {
        after = row.id;
        const ProgressView::Named* named = view->find(row.id);
        if (named != nullptr && named->row.state != MessageState::kQueued) continue;
        if (named != nullptr) row = named->row;
        out.push_back(std::move(row));
        if (out.size() == limit) break;
      }
      if (out.size() >= limit || view->named.empty() || read < kPageRows) break;
    }
  }
  // Rows sent by their columns that a record put back, and open messages below the mark
  // that are queued: merged in send order.
  bool merged = false;
  for (const auto& [id, named] : view->named) {
    if (named.base != MessageState::kSent || named.row.state != MessageState::kQueued) continue;
    if (!carries(association_functions, named.row.function_mask)) continue;
    out.push_back(named.row);
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
