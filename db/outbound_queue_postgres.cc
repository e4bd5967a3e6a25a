// OutboundQueue::writeRowsAtOnce: an append's new rows and bodies on PostgreSQL in four
// round trips, whatever the batch's size (issue "A message is written once": "PostgreSQL
// gets the same shape … one round trip per batch"). One INSERT per row cost a round trip
// each (two per message with its body), which bounded the queue writer's thread at a few
// thousand messages a second on loopback whatever the server could do.
//
// The ids are drawn first from the tables' identity sequences (an id drawn by a batch that
// then rolls back is never used again, as AUTOINCREMENT on SQLite), so each row knows its
// body's id before either is written; then the bodies and the rows are each inserted by one
// INSERT … SELECT over a JSON array (bytea as hex), bound as one parameter.
#include <string>

#include "common/hex.h"
#include "db/database.h"
#include "db/outbound_queue.h"

namespace npac::db {
namespace {

// `text` as a JSON string. Idempotency keys are visible ASCII and SPIDs four characters,
// but any byte is escaped so that no value can end the string early.
void appendJsonString(std::string& out, std::string_view text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20 || byte >= 0x7f) {
      out += "\\u00";
      out.push_back(kDigits[byte >> 4]);
      out.push_back(kDigits[byte & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

// `count` ids drawn from the identity sequence of `table`.id, in the order drawn.
Result<std::vector<std::int64_t>> drawIds(Database& db, const char* table, std::size_t count) {
  Result<Statement> draw =
      db.prepare("SELECT nextval(pg_get_serial_sequence(?, 'id')) FROM generate_series(1, ?)");
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

Status OutboundQueue::writeRowsAtOnce(std::span<const NewMessage> messages, const std::vector<bool>& stored,
                                      const std::vector<BodyPlan>& bodies, const std::vector<std::size_t>& body_of,
                                      TimeMs now, std::vector<AppendOutcome>& outcomes) {
  if (bodies.empty()) return Status::ok();
  std::size_t rows = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) rows += stored[i] ? 0 : 1;
  Result<std::vector<std::int64_t>> body_ids = drawIds(db_, "message_bodies", bodies.size());
  if (!body_ids) return body_ids.status();
  Result<std::vector<std::int64_t>> row_ids = drawIds(db_, "outbound_queue", rows);
  if (!row_ids) return row_ids.status();

  std::string json = "[";
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    if (b != 0) json.push_back(',');
    json += '[' + std::to_string((*body_ids)[b]) + ",\"" + common::toHex(messages[bodies[b].first].pdu) + "\"," +
            std::to_string(bodies[b].addressees) + ']';
  }
  json.push_back(']');
  Result<Statement> insert_bodies = db_.prepare(
      "INSERT INTO message_bodies(id, pdu, addressees) SELECT CAST(e->>0 AS bigint), decode(e->>1, 'hex'), "
      "CAST(e->>2 AS bigint) FROM json_array_elements(CAST(? AS json)) AS e");
  if (!insert_bodies) return insert_bodies.status();
  insert_bodies->bindText(0, json);
  if (Status status = insert_bodies->run(); !status) return status;

  json = "[";
  std::size_t next = 0;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (stored[i]) continue;
    const NewMessage& message = messages[i];
    if (next != 0) json.push_back(',');
    json += '[' + std::to_string((*row_ids)[next]) + ',';
    appendJsonString(json, message.spid);
    json += ',' + std::to_string(message.function_mask) + ',' + std::to_string(message.priority) + ',' +
            std::to_string((*body_ids)[body_of[i]]) + ',';
    if (message.idempotency_key) {
      appendJsonString(json, *message.idempotency_key);
    } else {
      json += "null";
    }
    json += ",\"";
    json += toString(message.kind);
    json += "\"," + std::to_string(message.opcode) + ',' + (message.confirmed ? "1" : "0") + ']';
    outcomes[i] = AppendOutcome{(*row_ids)[next], false};
    ++next;
  }
  json.push_back(']');
  Result<Statement> insert_rows = db_.prepare(
      "INSERT INTO outbound_queue(id, spid, function_mask, priority, body_id, created_at, idempotency_key, "
      "kind, opcode, confirmed) SELECT CAST(e->>0 AS bigint), e->>1, CAST(e->>2 AS bigint), "
      "CAST(e->>3 AS bigint), CAST(e->>4 AS bigint), CAST(? AS bigint), e->>5, e->>6, CAST(e->>7 AS bigint), "
      "CAST(e->>8 AS bigint) FROM json_array_elements(CAST(? AS json)) AS e");
  if (!insert_rows) return insert_rows.status();
  insert_rows->bindInt64(0, now).bindText(1, json);
  if (Status status = insert_rows->run(); !status) {
    if (status.code() != Status::Code::kConstraint) return status;
    // PostgreSQL's detail names the key ("Key (spid)=(…) is not present in table …").
    return Status::make(Status::Code::kConstraint, "cannot queue the messages: " + status.message(), status.file(),
                        "provision the provider before queuing for it");
  }
  return Status::ok();
}

}  // namespace npac::db
