// The SQL that db/outbound_queue.cc and db/outbound_queue_progress.cc share: how a queue row
// is read with its PDU, and how a batch of ids is handed to one statement. Internal to db/.
#pragma once

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

// The ids as a JSON array for `id IN (SELECT value FROM json_each(?))`: one statement
// changes a whole batch, so SQLite sets up and tears down one program per batch instead of
// one per message. PostgreSQL reads the same array with json_array_elements_text.
#define NPAC_SQLITE_ID_LIST "(SELECT value FROM json_each(?))"
#define NPAC_POSTGRES_ID_LIST "(SELECT CAST(json_array_elements_text(CAST(? AS json)) AS bigint))"
std::string idArray(std::span<const MessageId> ids);

// The priorities of `spid`'s rows queued by their columns, highest first: one seek of the
// ready index each (db/outbound_queue_settle.cc).
Result<std::vector<std::int64_t>> queuedPriorities(Database& db, std::string_view spid);

// The lowest id among `spid`'s rows, or none: the first of each priority's range in the
// ready index, the first sent or failed row an earlier schema left (open_base), and the
// first it left acknowledged — no index holds all of a provider's rows (schema 10).
Result<std::optional<MessageId>> lowestRow(Database& db, std::string_view spid);

// PostgreSQL: takes OutboundQueue::kAppendLock until the transaction ends
// (db/outbound_queue_postgres.cc). Taking it again in one transaction is a no-op.
Status lockAppends(Database& db);

}  // namespace npac::db::queue_sql
