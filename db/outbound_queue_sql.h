// The SQL that db/outbound_queue.cc and db/outbound_queue_progress.cc share: how a queue row
// is read with its PDU, and how a batch of ids is handed to one statement. Internal to db/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/outbound_queue.h"

namespace npac::db::queue_sql {

// A row with its body's PDU (schema 8: the bytes live once in message_bodies). Conditions
// after it name the row's columns as q.*.
#define NPAC_QUEUE_COLUMNS                                                                       \
  "SELECT q.id, q.spid, q.function_mask, q.priority, b.pdu, q.state, q.attempts, q.created_at, " \
  "q.sent_at, q.acknowledged_at, q.association_id, q.retransmission, q.failure_reason, "         \
  "q.failed_at, q.idempotency_key, q.kind, q.opcode, q.confirmed "
inline constexpr const char* kSelect =
    NPAC_QUEUE_COLUMNS "FROM outbound_queue AS q JOIN message_bodies AS b ON b.id = q.body_id ";
// The same through outbound_queue_acknowledged (SQLite: INDEXED BY), for the rows an earlier
// schema left acknowledged by their columns: only such rows are in that index.
inline constexpr const char* kSelectAcknowledgedSqlite =
    NPAC_QUEUE_COLUMNS "FROM outbound_queue AS q INDEXED BY outbound_queue_acknowledged "
                       "JOIN message_bodies AS b ON b.id = q.body_id ";

// The retention purge's choice of rows an earlier schema left acknowledged by their columns
// (parameters: the cutoff, the step's size), oldest acknowledgement first through their
// partial index.
inline constexpr const char* kChooseAcknowledgedByColumnsPostgres =
    "SELECT id FROM outbound_queue WHERE state = 'acknowledged' AND acknowledged_at < ? "
    "ORDER BY acknowledged_at LIMIT ?";
inline constexpr const char* kChooseAcknowledgedByColumnsSqlite =
    "SELECT id FROM outbound_queue INDEXED BY outbound_queue_acknowledged "
    "WHERE state = 'acknowledged' AND acknowledged_at < ? ORDER BY acknowledged_at LIMIT ?";

// Each provider's newest mark noted before a cutoff (ProgressLog::retentionMarks;
// parameters: the cutoff's minute, the cutoff): one search of delivery_marks' key per
// provider with a mark, NULL where none is noted before it.
inline constexpr const char* kRetentionMarks =
    "SELECT s.spid, (SELECT max(m.settled_through) FROM delivery_marks AS m WHERE m.spid = s.spid "
    "AND m.minute <= ? AND m.at < ?) FROM delivery_settled AS s ORDER BY s.spid";

// The ids as a JSON array for `id IN (SELECT value FROM json_each(?))`: one statement
// changes a whole batch, so SQLite sets up and tears down one program per batch instead of
// one per message. PostgreSQL reads the same array with json_array_elements_text.
#define NPAC_SQLITE_ID_LIST "(SELECT value FROM json_each(?))"
#define NPAC_POSTGRES_ID_LIST "(SELECT CAST(json_array_elements_text(CAST(? AS json)) AS bigint))"
std::string idArray(std::span<const MessageId> ids);

// The priorities of `spid`'s rows queued by their columns, highest first: one seek of the
// ready index each (db/outbound_queue_settle.cc).
Result<std::vector<std::int64_t>> queuedPriorities(Database& db, std::string_view spid);

// Where a provider's rows are: no index holds them all (schema 10). Each priority's range of
// the ready index (outbound_queue_ready: the rows queued by their columns, every row since
// schema 9), the rows an earlier schema left sent or failed (outbound_queue_open_base), and
// those it left acknowledged (outbound_queue_acknowledged; only such rows are in it, until
// the retention purge deletes them). A caller writes its statement as
//   SELECT … FROM outbound_queue <source.indexedBy(db)> WHERE <source.where> AND …
// and binds the source's parameters first (bind(): the SPID, then the priority if any),
// its own from the index bind() answers.
struct RowSource {
  enum class Kind { kQueued, kOpenBase, kAcknowledged };
  Kind kind = Kind::kQueued;
  std::int64_t priority = 0;  // kQueued only
  std::string where;          // its conditions over the table's columns
  // " INDEXED BY outbound_queue_acknowledged" for kAcknowledged on SQLite (its planner
  // would otherwise scan by rowid), else nothing.
  const char* indexedBy(const Database& db) const;
  // Binds the SPID and the priority; the index of the caller's first parameter.
  int bind(Statement& statement, std::string_view spid) const;
};
enum class LegacyAcknowledged { kExclude, kInclude };
// The sources of `spid`'s rows, the ready index's first (highest priority first).
// (OutboundQueue::createdBetween, which joins the bodies, still spells them out.)
Result<std::vector<RowSource>> rowSources(Database& db, std::string_view spid, LegacyAcknowledged legacy);

// The lowest id among `spid`'s rows (every source above), or none.
Result<std::optional<MessageId>> lowestRow(Database& db, std::string_view spid);


// PostgreSQL: takes OutboundQueue::kAppendLock until the transaction ends
// (db/outbound_queue_postgres.cc). Taking it again in one transaction is a no-op.
Status lockAppends(Database& db);

}  // namespace npac::db::queue_sql
