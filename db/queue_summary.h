// QueueSummary: a read-only view of one provider's rows in the durable outbound queue
// (table outbound_queue, db/outbound_queue.h), for operators: how many messages are in
// each state for each function mask, and since when the oldest of them has been there.
// It is what GET /v1/providers/{spid}/queue counts (docs/API.md); why the queued ones
// wait is the association core's to say, not the database's.
//
// What is above the provider's settled mark is counted from its rows (a SELECT … GROUP BY
// state, function_mask over each index that holds them, db/queue_summary.cc countRows);
// what is at or below it — acknowledged, but for the open messages the records name — from
// the settled counts (schema 11, db/progress_log.h), one row per function mask. So the
// counts cost what is in flight, waiting or open, not the messages kept for queue_retention
// (10 million acknowledged ones: one read, not ten million; bench/compare.sh "retained").
// The oldest of each acknowledged group is a probe of its mask's first row (SummaryOldest).
// Rows an earlier schema left acknowledged by their columns are still counted one by one
// from their own index, until the retention purge has deleted them.
//
// Threading: as the Database it reads (one thread at a time). Never writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "db/clock.h"
#include "db/outbound_queue.h"
#include "db/status.h"

namespace npac::db {

class Database;

// The rows of one provider in one state that need the same association functions.
struct QueueCount {
  MessageState state = MessageState::kQueued;
  std::uint32_t function_mask = 0;  // bits as in associations::AssociationFunction
  std::size_t count = 0;
  TimeMs oldest_created_at = 0;  // the earliest created_at among them
  friend bool operator==(const QueueCount&, const QueueCount&) = default;
};

struct QueueSummary {
  // By state (queued, sent, acknowledged, failed), then function mask ascending; only
  // groups that have rows.
  std::vector<QueueCount> counts;

  // How many rows are in `state`, whatever their functions.
  std::size_t total(MessageState state) const;
  // The created_at of the oldest queued row, or nullopt when none is queued.
  std::optional<TimeMs> oldestQueuedAt() const;
};

// Which groups' oldest created_at a summary finds. An acknowledged group's oldest at or
// below the mark is its mask's first row there: one index probe, unless rows of other masks
// lie before it (then it reads past them — an operator's query). /metrics reads only the
// oldest queued row, so it asks for kQueued: the acknowledged groups then say 0.
enum class SummaryOldest { kEveryGroup, kQueued };

// The summary of `spid`'s rows; an unknown or empty provider has no counts. Errors:
// kInvalidArgument (not a SPID), kCorrupt (a state the schema does not allow), storage
// errors.
Result<QueueSummary> summarizeQueue(Database& db, std::string_view spid,
                                    SummaryOldest oldest = SummaryOldest::kEveryGroup);

}  // namespace npac::db
