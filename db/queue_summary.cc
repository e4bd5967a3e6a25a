#include "db/queue_summary.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "db/database.h"
#include "db/outbound_queue_sql.h"
#include "db/progress_log.h"
#include "db/provider_store.h"

namespace npac::db {

std::size_t QueueSummary::total(MessageState state) const {
  std::size_t sum = 0;
  for (const QueueCount& c : counts) {
    if (c.state == state) sum += c.count;
  }
  return sum;
}

std::optional<TimeMs> QueueSummary::oldestQueuedAt() const {
  std::optional<TimeMs> oldest;
  for (const QueueCount& c : counts) {
    if (c.state == MessageState::kQueued && (!oldest || c.oldest_created_at < *oldest)) {
      oldest = c.oldest_created_at;
    }
  }
  return oldest;
}

namespace {

// Only the rows of one function mask, less some ids: what a group that lost messages to
// the records is made of (moveCounts).
struct Exclusion {
  std::uint32_t function_mask = 0;
  std::vector<MessageId> ids;
};

// The created_at of the first of `spid`'s rows at or below `mark` with `mask` in the ready
// index or open_base (less `excluded`), or none: the oldest of them, as created_at never
// decreases in id order (schema 10). Each source's probe stops at its first row of that
// mask; it reads further only past rows of other masks or excluded ones.
Result<std::optional<TimeMs>> oldestSettled(Database& db, std::string_view spid,
                                            const std::vector<queue_sql::RowSource>& sources, std::uint32_t mask,
                                            MessageId mark, const std::vector<MessageId>* excluded) {
  const bool postgres = db.backend() == Backend::kPostgres;
  std::optional<TimeMs> oldest;
  for (const queue_sql::RowSource& source : sources) {
    if (source.kind == queue_sql::RowSource::Kind::kAcknowledged) continue;
    Result<Statement> probe = db.prepare(
        "SELECT created_at FROM outbound_queue WHERE " + source.where + " AND function_mask = ? AND id <= ?" +
        (excluded ? std::string(" AND id NOT IN ") + (postgres ? NPAC_POSTGRES_ID_LIST : NPAC_SQLITE_ID_LIST)
                  : std::string()) +
        " ORDER BY id LIMIT 1");
    if (!probe) return probe.status();
    const int next = source.bind(*probe, spid);
    probe->bindInt64(next, mask).bindInt64(next + 1, mark);
    if (excluded) probe->bindText(next + 2, queue_sql::idArray(*excluded));
    Result<bool> row = probe->step();
    if (!row) return row.status();
    if (*row) oldest = std::min(oldest.value_or(probe->columnInt64(0)), probe->columnInt64(0));
  }
  return oldest;
}

// The provider's rows counted by (state as summarizeQueue counts it, function mask), with
// the oldest created_at of each group: a row at or below the settled mark counts as
// acknowledged. Above the mark, each source's rows (queue_sql::rowSources) by their columns;
// at or below it, the settled counts (db/progress_log.h) — one row per mask, not one per
// retained message — with each mask's oldest from its first row (oldestSettled); the rows
// an earlier schema left acknowledged from their own index, whatever their id.
// With `only`, the groups of one function mask less some ids: only their oldest is right
// (the settled counts cannot leave ids out), which is all moveCounts reads of them.
Result<std::map<std::pair<MessageState, std::uint32_t>, QueueCount>> countRows(
    Database& db, std::string_view spid, MessageId mark, const Exclusion* only, bool settled_oldest) {
  const bool postgres = db.backend() == Backend::kPostgres;
  const std::string filter =
      only ? std::string(" AND function_mask = ? AND id NOT IN ") +
                 (postgres ? NPAC_POSTGRES_ID_LIST : NPAC_SQLITE_ID_LIST)
           : std::string();
  std::map<std::pair<MessageState, std::uint32_t>, QueueCount> groups;
  const auto addGroup = [&](MessageState state, std::uint32_t mask, std::size_t count, TimeMs oldest) {
    auto [it, added] = groups.try_emplace({state, mask}, QueueCount{state, mask, count, oldest});
    if (!added) {
      it->second.count += count;
      it->second.oldest_created_at = std::min(it->second.oldest_created_at, oldest);
    }
  };
  Result<std::vector<queue_sql::RowSource>> sources =
      queue_sql::rowSources(db, spid, queue_sql::LegacyAcknowledged::kInclude);
  if (!sources) return sources.status();
  for (const queue_sql::RowSource& source : *sources) {
    const bool legacy = source.kind == queue_sql::RowSource::Kind::kAcknowledged;
    Result<Statement> query =
        db.prepare(std::string("SELECT state, function_mask, count(*), min(created_at) FROM outbound_queue") +
                   source.indexedBy(db) + " WHERE " + source.where + (legacy ? "" : " AND id > ?") + filter +
                   " GROUP BY state, function_mask");
    if (!query) return query.status();
    int next = source.bind(*query, spid);
    if (!legacy) query->bindInt64(next++, mark);
    if (only) query->bindInt64(next, only->function_mask).bindText(next + 1, queue_sql::idArray(only->ids));
    for (;;) {
      Result<bool> row = query->step();
      if (!row) return row.status();
      if (!*row) break;
      const std::string state_text = query->columnText(0);
      std::optional<MessageState> state = parseMessageState(state_text);
      if (!state) {
        std::string message("outbound_queue holds a row of provider ");
        message.append(spid).append(" in state '").append(state_text).append("', which the schema does not allow");
        return Status::make(Status::Code::kCorrupt, std::move(message));
      }
      addGroup(*state, static_cast<std::uint32_t>(query->columnInt64(1)),
               static_cast<std::size_t>(query->columnInt64(2)), query->columnInt64(3));
    }
  }
  Result<std::map<std::uint32_t, std::int64_t>> settled = ProgressLog(db).settledCounts(spid);
  if (!settled) return settled.status();
  for (const auto& [mask, count] : *settled) {
    if (count <= 0 || (only && mask != only->function_mask)) continue;
    if (!settled_oldest) {
      addGroup(MessageState::kAcknowledged, mask, static_cast<std::size_t>(count), 0);
      continue;
    }
    Result<std::optional<TimeMs>> oldest = oldestSettled(db, spid, *sources, mask, mark, only ? &only->ids : nullptr);
    if (!oldest) return oldest.status();
    if (only && !*oldest) continue;  // every settled row of the mask is excluded
    addGroup(MessageState::kAcknowledged, mask, static_cast<std::size_t>(count), oldest->value_or(0));
  }
  return groups;
}

// Moves each message the records moved from its row's group to its group after them; a
// group that lost messages has its oldest recomputed without them. A row at or below the
// settled mark counts as acknowledged (summarizeQueue), so an open one moves from there.
Status moveCounts(Database& db, std::string_view spid, const OutboundQueue::ProgressView& view,
                  bool settled_oldest, QueueSummary& summary) {
  struct Group {
    std::int64_t count = 0;
    std::optional<TimeMs> oldest;          // of the rows' own group (before the moves)
    std::optional<TimeMs> joined_oldest;   // of the messages that joined it
    std::vector<MessageId> left;
  };
  std::map<std::pair<MessageState, std::uint32_t>, Group> groups;
  for (const QueueCount& c : summary.counts) {
    groups[{c.state, c.function_mask}] = Group{static_cast<std::int64_t>(c.count), c.oldest_created_at, {}, {}};
  }
  for (const auto& [id, named] : view.named) {
    const MessageState counted = id <= view.mark ? MessageState::kAcknowledged : named.base;
    if (counted == named.row.state) continue;
    Group& from = groups[{counted, named.row.function_mask}];
    --from.count;
    from.left.push_back(id);
    Group& to = groups[{named.row.state, named.row.function_mask}];
    ++to.count;
    to.joined_oldest = std::min(to.joined_oldest.value_or(named.row.created_at), named.row.created_at);
  }
  summary.counts.clear();
  for (auto& [key, group] : groups) {
    if (group.count <= 0) continue;
    std::optional<TimeMs> oldest = group.oldest;
    if (!group.left.empty() && (settled_oldest || key.first != MessageState::kAcknowledged)) {
      // The group's rows as summarizeQueue counted them, less those that left.
      Exclusion exclusion{key.second, group.left};
      Result<std::map<std::pair<MessageState, std::uint32_t>, QueueCount>> rest =
          countRows(db, spid, view.mark, &exclusion, settled_oldest);
      if (!rest) return rest.status();
      auto it = rest->find(key);
      oldest = it == rest->end() ? std::nullopt : std::optional<TimeMs>(it->second.oldest_created_at);
    }
    if (group.joined_oldest) oldest = std::min(oldest.value_or(*group.joined_oldest), *group.joined_oldest);
    summary.counts.push_back(
        QueueCount{key.first, key.second, static_cast<std::size_t>(group.count), oldest.value_or(0)});
  }
  return Status::ok();
}

}  // namespace

Result<QueueSummary> summarizeQueue(Database& db, std::string_view spid, SummaryOldest oldest) {
  const bool settled_oldest = oldest == SummaryOldest::kEveryGroup;
  if (!isValidSpid(spid)) {
    // Appended, not "literal" + std::string: g++ 12 warns on that (-Wrestrict, PR105651).
    std::string message(1, '\'');
    message.append(spid).append("' is not a SPID: 4 ASCII letters or digits");
    return Status::invalidArgument(std::move(message));
  }
  // The settled view first: its mark splits the rows. At or below it every message is
  // acknowledged (its row's columns still say queued: rows are written once) or open — in
  // the view, moved from acknowledged by moveCounts.
  Result<OutboundQueue::ProgressView> view = OutboundQueue(db).settledView(spid);
  if (!view) return view.status();
  Result<std::map<std::pair<MessageState, std::uint32_t>, QueueCount>> groups =
      countRows(db, spid, view->mark, nullptr, settled_oldest);
  if (!groups) return groups.status();
  QueueSummary summary;
  for (const auto& [key, count] : *groups) summary.counts.push_back(count);
  // Each message the delivery progress records moved counts in its state after them
  // (db/outbound_queue.h ProgressView): it leaves its row's group and joins another.
  if (!view->named.empty()) {
    if (Status status = moveCounts(db, spid, *view, settled_oldest, summary); !status) return status;
  }
  // The order the header promises (the lifecycle order, not SQLite's text order).
  std::sort(summary.counts.begin(), summary.counts.end(), [](const QueueCount& a, const QueueCount& b) {
    if (a.state != b.state) return a.state < b.state;
    return a.function_mask < b.function_mask;
  });
  return summary;
}

}  // namespace npac::db
