#include "db/queue_summary.h"

#include <algorithm>
#include <string>

#include "db/database.h"
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

Result<QueueSummary> summarizeQueue(Database& db, std::string_view spid) {
  if (!isValidSpid(spid)) {
    // Appended, not "literal" + std::string: g++ 12 warns on that (-Wrestrict, PR105651).
    std::string message(1, '\'');
    message.append(spid).append("' is not a SPID: 4 ASCII letters or digits");
    return Status::invalidArgument(std::move(message));
  }
  Result<Statement> query = db.prepare(
      "SELECT state, function_mask, count(*), min(created_at) FROM outbound_queue "
      "WHERE spid = ? GROUP BY state, function_mask");
  if (!query) return query.status();
  query->bindText(0, spid);
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
  // The order the header promises (the lifecycle order, not SQLite's text order).
  std::sort(summary.counts.begin(), summary.counts.end(), [](const QueueCount& a, const QueueCount& b) {
    if (a.state != b.state) return a.state < b.state;
    return a.function_mask < b.function_mask;
  });
  return summary;
}

}  // namespace npac::db
