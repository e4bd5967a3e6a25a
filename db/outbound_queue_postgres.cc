// OutboundQueue::writeRowsAtOnce: an append's new rows and bodies on PostgreSQL in four
// round trips, whatever the batch's size (issue "A message is written once": "PostgreSQL
// gets the same shape … one round trip per batch"). One INSERT per row cost a round trip
// each (two per message with its body), which bounded the queue writer's thread at a few
// thousand messages a second on loopback whatever the server could do.
//
// The ids are drawn first from the tables' identity sequences (an id drawn by a batch that
// then rolls back is never used again, as AUTOINCREMENT on SQLite), so each row knows its
// body's id before either is written; then the bodies and the rows are each inserted by one
// INSERT … SELECT over unnest() of one array per column, each bound as one parameter in
// PostgreSQL's binary array format (db/postgres_array.h).
//
// Ids in commit order: before reading anything (OutboundQueue::appendStamp, which reads
// the newest row's stamp) the append takes a transaction-level advisory lock
// (kAppendLock), held until it commits or rolls back, so two appends —
// of one node's writer or of two nodes' — draw and commit one after the other: every id a
// reader sees committed is below every id drawn by an append still open. A provider's
// settled mark (db/outbound_queue_settle.cc) relies on it: no message can be committed
// later below a mark computed from what is committed now.
#include <string>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/outbound_queue_sql.h"
#include "db/postgres_array.h"

namespace npac::db {
namespace {

// `count` ids drawn from the identity sequence of `table`.id, in the order drawn.
Result<std::vector<std::int64_t>> drawIds(Database& db, const char* table, std::size_t count) {
  // The sequence looked up once, not for every id (perf: pg_get_serial_sequence was a
  // tenth of the writer's backend).
  Result<Statement> draw = db.prepare(
      "WITH s AS MATERIALIZED (SELECT CAST(pg_get_serial_sequence(?, 'id') AS regclass) AS seq) "
      "SELECT nextval(s.seq) FROM s, generate_series(1, ?)");
  if (!draw) return draw.status();
  draw->bindText(0, table).bindInt64(1, static_cast<std::int64_t>(count));
  std::vector<std::int64_t> ids;
  ids.reserve(count);
  for (;;) {
    Result<bool> row = draw->step();
    if (!row) return row.status();
    if (!*row) break;
    ids.push_back(draw->columnInt64(0));
  }
  if (ids.size() != count) {
    return Status::internal("drew " + std::to_string(ids.size()) + " ids for " + table + ", wanted " +
                            std::to_string(count));
  }
  return ids;
}

}  // namespace

Status queue_sql::lockAppends(Database& db) {
  Result<Statement> lock = db.prepare("SELECT pg_advisory_xact_lock(?)");
  if (!lock) return lock.status();
  lock->bindInt64(0, OutboundQueue::kAppendLock);
  Result<bool> row = lock->step();
  return row ? Status::ok() : row.status();
}

Status OutboundQueue::writeRowsAtOnce(std::span<const NewMessage> messages, const std::vector<bool>& stored,
                                      const std::vector<BodyPlan>& bodies, const std::vector<std::size_t>& body_of,
                                      TimeMs now, std::vector<AppendOutcome>& outcomes) {
  if (bodies.empty()) return Status::ok();
  std::size_t rows = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) rows += stored[i] ? 0 : 1;
  Result<std::vector<std::int64_t>> body_ids = drawIds(db_, "message_bodies", bodies.size());
  if (!body_ids) return body_ids.status();
  // kAppendLock is held: appendStamp took it before anything was read (OutboundQueue::append).
  Result<std::vector<std::int64_t>> row_ids = drawIds(db_, "outbound_queue", rows);
  if (!row_ids) return row_ids.status();

  PostgresArray body_id(PostgresArray::Type::kInt8), pdu(PostgresArray::Type::kBytea),
      addressees(PostgresArray::Type::kInt8);
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    body_id.addInt64((*body_ids)[b]);
    pdu.addBytes(messages[bodies[b].first].pdu);
    addressees.addInt64(static_cast<std::int64_t>(bodies[b].addressees));
  }
  Result<Statement> insert_bodies = db_.prepare(
      "INSERT INTO message_bodies(id, pdu, addressees) "
      "SELECT * FROM unnest(CAST(? AS bigint[]), CAST(? AS bytea[]), CAST(? AS bigint[]))");
  if (!insert_bodies) return insert_bodies.status();
  insert_bodies->bindBlob(0, body_id.encoded()).bindBlob(1, pdu.encoded()).bindBlob(2, addressees.encoded());
  if (Status status = insert_bodies->run(); !status) return status;
  if (rows == 0) return Status::ok();  // every message a duplicate of one already queued

  PostgresArray id(PostgresArray::Type::kInt8), spid(PostgresArray::Type::kText),
      function_mask(PostgresArray::Type::kInt8), priority(PostgresArray::Type::kInt8),
      body(PostgresArray::Type::kInt8), key(PostgresArray::Type::kText), kind(PostgresArray::Type::kText),
      opcode(PostgresArray::Type::kInt8), confirmed(PostgresArray::Type::kInt8);
  std::size_t next = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (stored[i]) continue;
    const NewMessage& message = messages[i];
    id.addInt64((*row_ids)[next]);
    spid.addText(message.spid);
    function_mask.addInt64(message.function_mask);
    priority.addInt64(message.priority);
    body.addInt64((*body_ids)[body_of[i]]);
    if (message.idempotency_key) {
      key.addText(*message.idempotency_key);
    } else {
      key.addNull();
    }
    kind.addText(toString(message.kind));
    opcode.addInt64(message.opcode);
    confirmed.addInt64(message.confirmed ? 1 : 0);
    outcomes[i] = AppendOutcome{(*row_ids)[next], false};
    ++next;
  }
  Result<Statement> insert_rows = db_.prepare(
      "INSERT INTO outbound_queue(id, spid, function_mask, priority, body_id, created_at, idempotency_key, "
      "kind, opcode, confirmed) SELECT u.id, u.spid, u.function_mask, u.priority, u.body_id, CAST(? AS bigint), "
      "u.idempotency_key, u.kind, u.opcode, u.confirmed FROM unnest(CAST(? AS bigint[]), CAST(? AS text[]), "
      "CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS text[]), CAST(? AS text[]), "
      "CAST(? AS bigint[]), CAST(? AS bigint[])) AS u(id, spid, function_mask, priority, body_id, "
      "idempotency_key, kind, opcode, confirmed)");
  if (!insert_rows) return insert_rows.status();
  insert_rows->bindInt64(0, now);
  int column = 1;
  for (const PostgresArray* array : {&id, &spid, &function_mask, &priority, &body, &key, &kind, &opcode, &confirmed}) {
    insert_rows->bindBlob(column++, array->encoded());
  }
  if (Status status = insert_rows->run(); !status) {
    if (status.code() != Status::Code::kConstraint) return status;
    // PostgreSQL's detail names the key ("Key (spid)=(…) is not present in table …").
    return Status::make(Status::Code::kConstraint, "cannot queue the messages: " + status.message(), status.file(),
                        "provision the provider before queuing for it");
  }
  return Status::ok();
}

}  // namespace npac::db
