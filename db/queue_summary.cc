#include "db/queue_summary.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "db/database.h"
#include "db/outbound_queue_sql.h"
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

// Moves each message the records moved from its row's group to its group after them; a
// group that lost messages has its oldest recomputed without them. A row at or below the
// settled mark counts as acknowledged (summarizeQueue), so an open one moves from there.
Status moveCounts(Database& db, std::string_view spid, const OutboundQueue::ProgressView& view,
                  QueueSummary& summary) {
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
    if (!group.left.empty()) {
      // The group's rows as summarizeQueue counted them, less those that left.
      const bool acknowledged = key.first == MessageState::kAcknowledged;
      Result<Statement> query = db.prepare(
          std::string("SELECT min(created_at) FROM outbound_queue WHERE spid = ? AND function_mask = ? AND ") +
          (acknowledged ? "(state = ? OR id <= ?)" : "state = ? AND id > ?") + " AND id NOT IN " +
          (db.backend() == Backend::kPostgres ? NPAC_POSTGRES_ID_LIST : NPAC_SQLITE_ID_LIST));
      if (!query) return query.status();
      query->bindText(0, spid)
          .bindInt64(1, key.second)
          .bindText(2, toString(key.first))
          .bindInt64(3, view.mark)
          .bindText(4, queue_sql::idArray(group.left));
      Result<bool> row = query->step();
      if (!row) return row.status();
      oldest = *row && !query->columnIsNull(0) ? std::optional<TimeMs>(query->columnInt64(0)) : std::nullopt;
    }
    if (group.joined_oldest) oldest = std::min(oldest.value_or(*group.joined_oldest), *group.joined_oldest);
    summary.counts.push_back(
        QueueCount{key.first, key.second, static_cast<std::size_t>(group.count), oldest.value_or(0)});
  }
  return Status::ok();
}

}  // namespace

Result<QueueSummary> summarizeQueue(Database& db, std::string_view spid) {
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
  Result<Statement> query = db.prepare(
      "SELECT CASE WHEN id <= ? THEN 'acknowledged' ELSE state END AS counted, function_mask, count(*), "
      "min(created_at) FROM outbound_queue WHERE spid = ? GROUP BY counted, function_mask");
  if (!query) return query.status();
  query->bindInt64(0, view->mark).bindText(1, spid);
  QueueSummary summary;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!row.value()) break;
    const std::string state_text = query->columnText(0);
    std::optional<MessageState> state = parseMessageState(state_text);
    if (!state) {
      std::string message("outbound_queue holds a row of provider ");
      message.append(spid).append(" in state '").append(state_text).append("', which the schema does not allow");
      return Status::make(Status::Code::kCorrupt, std::move(message));
    }
    summary.counts.push_back(QueueCount{*state, static_cast<std::uint32_t>(query->columnInt64(1)),
                                        static_cast<std::size_t>(query->columnInt64(2)), query->columnInt64(3)});
  }
  // Each message the delivery progress records moved counts in its state after them
  // (db/outbound_queue.h ProgressView): it leaves its row's group and joins another.
  if (!view->named.empty()) {
    if (Status status = moveCounts(db, spid, *view, summary); !status) return status;
  }
  // The order the header promises (the lifecycle order, not SQLite's text order).
  std::sort(summary.counts.begin(), summary.counts.end(), [](const QueueCount& a, const QueueCount& b) {
    if (a.state != b.state) return a.state < b.state;
    return a.function_mask < b.function_mask;
  });
  return summary;
}

}  // namespace npac::db
