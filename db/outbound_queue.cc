#include "db/outbound_queue.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>

#include "db/database.h"
#include "db/outbound_queue_sql.h"
#include "db/progress_log.h"
#include "db/transaction.h"

namespace npac::db {

std::string queue_sql::idArray(std::span<const MessageId> ids) {
  std::string out;
  out.reserve(ids.size() * 12 + 2);
  out.push_back('[');
  char digits[24];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i != 0) out.push_back(',');
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, ids[i]);
    out.append(digits, end);
  }
  out.push_back(']');
  return out;
}

namespace {

using queue_sql::idArray;
using queue_sql::kSelect;

// The kConstraint answer to a row refused by the provider's foreign key.
Status unknownProvider(std::string_view spid, const Status& status) {
  return Status::make(Status::Code::kConstraint,
                      "cannot queue a message for provider '" + std::string(spid) + "': " + status.message(),
                      status.file(), "provision the provider before queuing for it", status.sqliteCode(),
                      status.extendedCode());
}

}  // namespace

const char* toString(MessageState state) {
  switch (state) {
    case MessageState::kQueued: return "queued";
    case MessageState::kSent: return "sent";
    case MessageState::kAcknowledged: return "acknowledged";
    case MessageState::kFailed: return "failed";
  }
  return "unknown";
}

const char* toString(MessageKind kind) {
  switch (kind) {
    case MessageKind::kPush: return "push";
    case MessageKind::kResponse: return "response";
  }
  return "unknown";
}

std::optional<MessageKind> parseMessageKind(std::string_view text) {
  for (MessageKind kind : {MessageKind::kPush, MessageKind::kResponse}) {
    if (text == toString(kind)) return kind;
  }
  return std::nullopt;
}

std::optional<MessageState> parseMessageState(std::string_view text) {
  for (MessageState state : {MessageState::kQueued, MessageState::kSent,
                             MessageState::kAcknowledged, MessageState::kFailed}) {
    if (text == toString(state)) return state;
  }
  return std::nullopt;
}

bool isValidIdempotencyKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxIdempotencyKeyLength) return false;
  for (char c : key) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

Result<std::vector<MessageId>> OutboundQueue::appendBatch(std::span<const NewMessage> messages,
                                                          TimeMs now) {
  Result<std::vector<AppendOutcome>> outcomes = appendBatchOutcomes(messages, now);
  if (!outcomes) return outcomes.status();
  std::vector<MessageId> ids;
  ids.reserve(outcomes->size());
  for (const AppendOutcome& outcome : *outcomes) ids.push_back(outcome.id);
  return ids;
}

Result<std::vector<AppendOutcome>> OutboundQueue::appendBatchOutcomes(
    std::span<const NewMessage> messages, TimeMs now) {
  return append(messages, now, false);
}

Result<std::vector<AppendOutcome>> OutboundQueue::appendStampedOutcomes(std::span<const NewMessage> messages,
                                                                         TimeMs stamp) {
  return append(messages, stamp, true);
}

Result<std::vector<AppendOutcome>> OutboundQueue::append(std::span<const NewMessage> messages, TimeMs now,
                                                         bool stamped) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const NewMessage& message = messages[i];
    if (message.spid.size() != 4) {
      return Status::invalidArgument("queued message needs a 4-character SPID, got '" +
                                     message.spid + "'");
    }
    if (!message.idempotency_key) continue;
    if (!isValidIdempotencyKey(*message.idempotency_key)) {
      return Status::invalidArgument(
          "idempotency key of message " + std::to_string(i) + " must be 1.." +
          std::to_string(kMaxIdempotencyKeyLength) + " visible ASCII characters");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (messages[j].idempotency_key == message.idempotency_key && messages[j].spid == message.spid) {
        return Status::invalidArgument("idempotency key '" + *message.idempotency_key +
                                       "' is given to messages " + std::to_string(j) + " and " +
                                       std::to_string(i) + " of one submission for provider " +
                                       message.spid);
      }
    }
  }
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  if (!stamped) {
    Result<TimeMs> stamp = appendStamp(now);
    if (!stamp) return stamp.status();
    now = *stamp;
  }
  // First the messages already stored under their idempotency key: they add no row, and
  // a body counts only the rows written for it.
  std::vector<AppendOutcome> outcomes(messages.size());
  std::vector<bool> stored(messages.size(), false);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].idempotency_key) continue;
    Result<std::optional<AppendOutcome>> found = findStored(messages[i]);
    if (!found) return found.status();
    if (*found) {
      outcomes[i] = **found;
      stored[i] = true;
    }
  }
  // One body for each run of new messages that carry the same PDU: a broadcast's rows
  // (the same message for each addressee) are consecutive in its submission.
  std::vector<BodyPlan> bodies;
  std::vector<std::size_t> body_of(messages.size(), 0);
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (stored[i]) continue;
    if (bodies.empty() || messages[bodies.back().first].pdu != messages[i].pdu) {
      bodies.push_back(BodyPlan{i, 0});
    }
    ++bodies.back().addressees;
    body_of[i] = bodies.size() - 1;
  }
  Status written = db_.backend() == Backend::kPostgres ? writeRowsAtOnce(messages, stored, bodies, body_of, now, outcomes)
                                                       : writeRows(messages, stored, bodies, body_of, now, outcomes);
  if (!written) return written;
  if (Status status = txn.commit(); !status) return status;
  return outcomes;
}

Result<TimeMs> OutboundQueue::appendStamp(TimeMs now) {
  if (db_.backend() == Backend::kPostgres) {
    if (Status locked = queue_sql::lockAppends(db_); !locked) return locked;
  }
  Result<Statement> newest = db_.prepare("SELECT created_at FROM outbound_queue ORDER BY id DESC LIMIT 1");
  if (!newest) return newest.status();
  Result<bool> row = newest->step();
  if (!row) return row.status();
  return *row ? std::max(now, newest->columnInt64(0)) : now;
}

Status OutboundQueue::writeRows(std::span<const NewMessage> messages, const std::vector<bool>& stored,
                                const std::vector<BodyPlan>& bodies, const std::vector<std::size_t>& body_of,
                                TimeMs now, std::vector<AppendOutcome>& outcomes) {
  Result<Statement> insert_body = db_.prepare("INSERT INTO message_bodies(pdu, addressees) VALUES(?, ?)");
  if (!insert_body) return insert_body.status();
  Result<Statement> insert = db_.prepare(
      "INSERT INTO outbound_queue(spid, function_mask, priority, body_id, created_at, "
      "idempotency_key, kind, opcode, confirmed) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.status();
  std::vector<std::int64_t> body_ids;
  body_ids.reserve(bodies.size());
  for (const BodyPlan& body : bodies) {
    insert_body->reset();
    insert_body->bindBlob(0, messages[body.first].pdu).bindInt64(1, body.addressees);
    if (Status status = insert_body->run(); !status) return status;
    body_ids.push_back(db_.lastInsertRowId());
  }
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (stored[i]) continue;
    const NewMessage& message = messages[i];
    insert->reset();
    insert->bindText(0, message.spid)
        .bindInt64(1, message.function_mask)
        .bindInt64(2, message.priority)
        .bindInt64(3, body_ids[body_of[i]])
        .bindInt64(4, now)
        .bindOptionalText(5, message.idempotency_key)
        .bindText(6, toString(message.kind))
        .bindInt64(7, message.opcode)
        .bindInt64(8, message.confirmed ? 1 : 0);
    if (Status status = insert->run(); !status) {
      if (status.code() == Status::Code::kConstraint) return unknownProvider(message.spid, status);
      return status;
    }
    outcomes[i] = AppendOutcome{db_.lastInsertRowId(), false};
  }
  return Status::ok();
}

Result<std::optional<AppendOutcome>> OutboundQueue::findStored(const NewMessage& message) {
  // The unique index outbound_queue_idempotency makes this lookup one index probe.
  Result<Statement> existing = db_.prepare(
      "SELECT q.id, q.function_mask, q.priority, b.pdu, q.kind, q.opcode, q.confirmed "
      "FROM outbound_queue AS q JOIN message_bodies AS b ON b.id = q.body_id "
      "WHERE q.spid = ? AND q.idempotency_key = ?");
  if (!existing) return existing.status();
  existing->bindText(0, message.spid).bindText(1, *message.idempotency_key);
  Result<bool> row = existing->step();
  if (!row) return row.status();
  if (!*row) return std::optional<AppendOutcome>();
  const MessageId id = existing->columnInt64(0);
  if (static_cast<std::uint32_t>(existing->columnInt64(1)) != message.function_mask ||
      existing->columnInt(2) != message.priority || existing->columnBlob(3) != message.pdu ||
      existing->columnText(4) != toString(message.kind) || existing->columnInt(5) != message.opcode ||
      existing->columnBool(6) != message.confirmed) {
    return Status::make(Status::Code::kConstraint,
                        "idempotency key '" + *message.idempotency_key + "' of provider " +
                            message.spid + " was already used by message " + std::to_string(id) +
                            " with different content (repeat a key only to retry the same "
                            "message; a new message needs a new key)");
  }
  return std::optional<AppendOutcome>(AppendOutcome{id, true});
}

Result<std::vector<QueuedMessage>> OutboundQueue::select(Statement& query) {
  std::vector<QueuedMessage> out;
  for (;;) {
    Result<bool> row = query.step();
    if (!row) return row.status();
    if (!*row) return out;
    QueuedMessage message;
    message.id = query.columnInt64(0);
    message.spid = query.columnText(1);
    message.function_mask = static_cast<std::uint32_t>(query.columnInt64(2));
    message.priority = query.columnInt(3);
    message.pdu = query.columnBlob(4);
    message.state = parseMessageState(query.columnText(5)).value_or(MessageState::kFailed);
    message.attempts = query.columnInt(6);
    message.created_at = query.columnInt64(7);
    message.sent_at = query.columnOptionalInt64(8);
    message.acknowledged_at = query.columnOptionalInt64(9);
    message.association_id = query.columnOptionalInt64(10);
    message.retransmission = query.columnBool(11);
    message.failure_reason = query.columnOptionalText(12);
    message.failed_at = query.columnOptionalInt64(13);
    message.idempotency_key = query.columnOptionalText(14);
    message.kind = parseMessageKind(query.columnText(15)).value_or(MessageKind::kPush);
    message.opcode = query.columnInt(16);
    message.confirmed = query.columnBool(17);
    out.push_back(std::move(message));
  }
}

Result<QueuedMessage> OutboundQueue::get(MessageId id) {
  Result<Statement> query = db_.prepare(std::string(kSelect) + "WHERE q.id = ?");
  if (!query) return query.status();
  query->bindInt64(0, id);
  Result<std::vector<QueuedMessage>> found = select(*query);
  if (!found) return found.status();
  if (found->empty()) {
    return Status::notFound("message " + std::to_string(id) + " is not in the outbound queue");
  }
  if (Status status = foldProgress(*found); !status) return status;
  return std::move(found->front());
}

Result<std::vector<QueuedMessage>> OutboundQueue::createdBetween(std::string_view spid, TimeMs from,
                                                                 TimeMs to, std::size_t limit) {
  std::vector<QueuedMessage> found;
  if (from >= to || limit == 0) return found;
  Result<std::optional<MessageId>> first = firstCreatedAtOrAfter(from);
  if (!first) return first.status();
  if (!*first) return found;
  Result<std::optional<MessageId>> past = firstCreatedAtOrAfter(to);
  if (!past) return past.status();
  const MessageId lo = **first;
  const MessageId hi = past->value_or(std::numeric_limits<MessageId>::max());
  if (lo >= hi) return found;
  const auto readInto = [&](Statement& query) -> Status {
    Result<std::vector<QueuedMessage>> rows = select(query);
    if (!rows) return rows.status();
    for (QueuedMessage& row : *rows) found.push_back(std::move(row));
    return Status::ok();
  };
  // The rows queued by their columns (every row since schema 9): one range of the ready
  // index per priority, each at most `limit` rows.
  Result<std::vector<std::int64_t>> priorities = queue_sql::queuedPriorities(db_, spid);
  if (!priorities) return priorities.status();
  Result<Statement> queued = db_.prepare(std::string(kSelect) +
                                         "WHERE q.spid = ? AND q.state = 'queued' AND q.priority = ? "
                                         "AND q.id >= ? AND q.id < ? ORDER BY q.id LIMIT ?");
  if (!queued) return queued.status();
  for (std::int64_t priority : *priorities) {
    queued->reset();
    queued->bindText(0, spid).bindInt64(1, priority).bindInt64(2, lo).bindInt64(3, hi).bindInt64(
        4, static_cast<std::int64_t>(limit));
    if (Status status = readInto(*queued); !status) return status;
  }
  // Rows an earlier schema moved out of 'queued': sent or failed ones in
  // outbound_queue_open_base, acknowledged ones in outbound_queue_acknowledged (which only
  // such rows are in, until the retention purge deletes them).
  Result<Statement> open = db_.prepare(std::string(kSelect) +
                                       "WHERE q.spid = ? AND q.state IN ('sent', 'failed') AND q.id >= ? "
                                       "AND q.id < ? ORDER BY q.id LIMIT ?");
  if (!open) return open.status();
  open->bindText(0, spid).bindInt64(1, lo).bindInt64(2, hi).bindInt64(3, static_cast<std::int64_t>(limit));
  if (Status status = readInto(*open); !status) return status;
  const bool postgres = db_.backend() == Backend::kPostgres;
  Result<Statement> acknowledged = db_.prepare(std::string(postgres ? kSelect : queue_sql::kSelectAcknowledgedSqlite) +
                                               "WHERE q.state = 'acknowledged' AND q.spid = ? "
                                               "AND q.id >= ? AND q.id < ? ORDER BY q.id LIMIT ?");
  if (!acknowledged) return acknowledged.status();
  acknowledged->bindText(0, spid).bindInt64(1, lo).bindInt64(2, hi).bindInt64(
      3, static_cast<std::int64_t>(limit));
  if (Status status = readInto(*acknowledged); !status) return status;
  std::sort(found.begin(), found.end(), [](const QueuedMessage& a, const QueuedMessage& b) { return a.id < b.id; });
  if (found.size() > limit) found.resize(limit);
  if (Status status = foldProgress(found); !status) return status;
  return found;
}

Result<std::optional<MessageId>> OutboundQueue::firstCreatedAtOrAfter(TimeMs at) {
  Result<Statement> probe = db_.prepare("SELECT id, created_at FROM outbound_queue WHERE id >= ? ORDER BY id LIMIT 1");
  if (!probe) return probe.status();
  // The first row at or after `from`: its id and created_at, or none past the last row.
  const auto rowFrom = [&](MessageId from) -> Result<std::optional<std::pair<MessageId, TimeMs>>> {
    probe->reset();
    probe->bindInt64(0, from);
    Result<bool> row = probe->step();
    if (!row) return row.status();
    if (!*row) return std::optional<std::pair<MessageId, TimeMs>>();
    return std::optional<std::pair<MessageId, TimeMs>>({probe->columnInt64(0), probe->columnInt64(1)});
  };
  // Invariant: every row below `low` was created before `at`; the answer, if any, is at
  // or below `high` (the best row found so far).
  std::optional<MessageId> answer;
  MessageId low = 0;  // ids start at 1
  MessageId high = std::numeric_limits<MessageId>::max();
  while (low <= high) {
    const MessageId middle = low + (high - low) / 2;
    Result<std::optional<std::pair<MessageId, TimeMs>>> row = rowFrom(middle);
    if (!row) return row.status();
    if (!*row || (*row)->first > high) {
      high = middle - 1;  // no row in [middle, high]
    } else if ((*row)->second >= at) {
      answer = (*row)->first;
      high = middle - 1;
    } else {
      low = (*row)->first + 1;
    }
  }
  return answer;
}

Result<std::size_t> OutboundQueue::purgeAcknowledgedBefore(TimeMs cutoff) {
  std::size_t purged = 0;
  for (;;) {
    Result<std::size_t> step = purgeAcknowledgedBefore(cutoff, kPurgeStepRows);
    if (!step) return step.status();
    purged += *step;
    if (*step < kPurgeStepRows) return purged;
  }
}

Result<std::size_t> OutboundQueue::purgeAcknowledgedBefore(TimeMs cutoff, std::size_t max_rows) {
  // Oldest first, at most max_rows: the purge runs in small steps off the hot path.
  const bool postgres = db_.backend() == Backend::kPostgres;
  // Rows acknowledged by records go only at or below their provider's mark: bring the marks
  // that lag behind the cutoff up first (each settle its own transaction, or savepoint).
  if (Result<std::size_t> moved = settleLagging(cutoff); !moved) return moved.status();
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  // Two nodes on one PostgreSQL database purge one at a time: each step counts a body's
  // rows from what it reads, so two steps purging the same rows at once would take them off
  // a body twice. (SQLite's BEGIN IMMEDIATE already serialises writers.)
  if (postgres) {
    if (Status status = db_.execute("SELECT pg_advisory_xact_lock(7236054)"); !status) return status;
  }
  // The rows an earlier schema left acknowledged by their columns, in the order of their
  // index (outbound_queue_acknowledged). Ordered by id, SQLite scanned the whole table by
  // rowid for them — on a file of 10 million rows acknowledged by records, where none
  // matches, a second per step: 147 rows purged a second (bench/compare.sh "retained").
  Result<Statement> chosen = db_.prepare(postgres ? queue_sql::kChooseAcknowledgedByColumnsPostgres
                                                  : queue_sql::kChooseAcknowledgedByColumnsSqlite);
  if (!chosen) return chosen.status();
  chosen->bindInt64(0, cutoff).bindInt64(1, static_cast<std::int64_t>(max_rows));
  std::vector<MessageId> ids;
  for (;;) {
    Result<bool> row = chosen->step();
    if (!row) return row.status();
    if (!*row) break;
    ids.push_back(chosen->columnInt64(0));
  }
  // Messages acknowledged by a delivery progress record (their rows still say queued), by
  // retention ranges.
  Result<DueRows> due = acknowledgedByRangesBefore(cutoff, max_rows);
  if (!due) return due.status();
  const std::vector<MessageId>& by_records = due->ids;
  if (!by_records.empty()) {
    ids.insert(ids.end(), by_records.begin(), by_records.end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.size() > max_rows) ids.resize(max_rows);
  }
  // A listing dropped here whose row the cut to max_rows below leaves is due all the same:
  // its range takes it later.
  if (Status status = ProgressLog(db_).dropLate(due->late); !status) return status;
  if (ids.empty()) {
    if (Status status = txn.commit(); !status) return status;  // notes pruned, listings dropped
    return std::size_t{0};
  }
  const std::string list = idArray(ids);
  // The providers whose records may now name only purged rows.
  std::vector<std::string> providers;
  if (!by_records.empty()) {
    Result<Statement> spids = db_.prepare(
        postgres ? "SELECT DISTINCT spid FROM outbound_queue WHERE id IN " NPAC_POSTGRES_ID_LIST
                 : "SELECT DISTINCT spid FROM outbound_queue WHERE id IN " NPAC_SQLITE_ID_LIST);
    if (!spids) return spids.status();
    spids->bindText(0, list);
    for (;;) {
      Result<bool> row = spids->step();
      if (!row) return row.status();
      if (!*row) break;
      providers.push_back(spids->columnText(0));
    }
  }
  // Each body loses the rows purged with it; a body whose last row goes is deleted with it
  // (schema 8: a broadcast's body is shared by its addressees' rows, purged in any order).
  // First the bodies all of whose remaining rows are purged now (their count would reach
  // 0, below the table's CHECK addressees >= 1), then the others' counts go down.
  Result<Statement> drop_bodies = db_.prepare(
      postgres ? "DELETE FROM message_bodies WHERE id IN (SELECT body_id FROM outbound_queue "
                 "WHERE id IN " NPAC_POSTGRES_ID_LIST " GROUP BY body_id "
                 "HAVING count(*) >= (SELECT addressees FROM message_bodies AS b WHERE b.id = body_id))"
               : "DELETE FROM message_bodies WHERE id IN (SELECT body_id FROM outbound_queue "
                 "WHERE id IN " NPAC_SQLITE_ID_LIST " GROUP BY body_id "
                 "HAVING count(*) >= (SELECT addressees FROM message_bodies AS b WHERE b.id = body_id))");
  if (!drop_bodies) return drop_bodies.status();
  drop_bodies->bindText(0, list);
  if (Status status = drop_bodies->run(); !status) return status;
  Result<Statement> release = db_.prepare(
      postgres ? "UPDATE message_bodies SET addressees = message_bodies.addressees - d.n FROM "
                 "(SELECT body_id, count(*) AS n FROM outbound_queue WHERE id IN " NPAC_POSTGRES_ID_LIST
                 " GROUP BY body_id) AS d WHERE message_bodies.id = d.body_id"
               : "UPDATE message_bodies SET addressees = message_bodies.addressees - d.n FROM "
                 "(SELECT body_id, count(*) AS n FROM outbound_queue WHERE id IN " NPAC_SQLITE_ID_LIST
                 " GROUP BY body_id) AS d WHERE message_bodies.id = d.body_id");
  if (!release) return release.status();
  release->bindText(0, list);
  if (Status status = release->run(); !status) return status;
  // The rows settled counts hold (all but those an earlier schema left acknowledged: every
  // other row chosen is at or below its provider's mark) come off them.
  if (!by_records.empty()) {
    Result<Statement> kept = db_.prepare(
        postgres ? "SELECT spid, function_mask, count(*) FROM outbound_queue WHERE id IN " NPAC_POSTGRES_ID_LIST
                   " AND state <> 'acknowledged' GROUP BY spid, function_mask ORDER BY spid"
                 : "SELECT spid, function_mask, count(*) FROM outbound_queue WHERE id IN " NPAC_SQLITE_ID_LIST
                   " AND state <> 'acknowledged' GROUP BY spid, function_mask ORDER BY spid");
    if (!kept) return kept.status();
    kept->bindText(0, list);
    std::map<std::string, std::map<std::uint32_t, std::int64_t>> taken;
    for (;;) {
      Result<bool> row = kept->step();
      if (!row) return row.status();
      if (!*row) break;
      taken[kept->columnText(0)][static_cast<std::uint32_t>(kept->columnInt64(1))] -= kept->columnInt64(2);
    }
    ProgressLog log(db_);
    for (const auto& [spid, delta] : taken) {
      if (Status status = log.addSettledCounts(spid, delta); !status) return status;
    }
  }
  Result<Statement> erase = db_.prepare(
      postgres ? "DELETE FROM outbound_queue WHERE id IN " NPAC_POSTGRES_ID_LIST
               : "DELETE FROM outbound_queue WHERE id IN " NPAC_SQLITE_ID_LIST);
  if (!erase) return erase.status();
  erase->bindText(0, list);
  if (Status status = erase->run(); !status) return status;
  const auto purged = static_cast<std::size_t>(db_.changes());
  for (const std::string& spid : providers) {
    if (Status status = purgeRecordsBelowRows(spid); !status) return status;
  }
  if (Status status = txn.commit(); !status) return status;
  return purged;
}

QueuedMessage committedMessage(NewMessage message, MessageId id, TimeMs created_at) {
  QueuedMessage row;
  row.id = id;
  row.spid = std::move(message.spid);
  row.function_mask = message.function_mask;
  row.priority = message.priority;
  row.pdu = std::move(message.pdu);
  row.created_at = created_at;
  row.idempotency_key = std::move(message.idempotency_key);
  row.kind = message.kind;
  row.opcode = message.opcode;
  row.confirmed = message.confirmed;
  return row;
}

Result<std::optional<OutboundQueue::QueuedSnapshot>> OutboundQueue::queuedSnapshot(std::string_view spid,
                                                                               std::size_t max) {
  return snapshotQueued(spid, max, std::nullopt);
}

Result<std::optional<OutboundQueue::QueuedSnapshot>> OutboundQueue::queuedSnapshot(std::string_view spid,
                                                                               std::size_t max,
                                                                               MessageId committed_through) {
  return snapshotQueued(spid, max, committed_through);
}

Result<std::optional<OutboundQueue::QueuedSnapshot>> OutboundQueue::snapshotQueued(
    std::string_view spid, std::size_t max, std::optional<MessageId> committed_through) {
  // nextQueued() reads at most `max` + 1 of them, above the provider's settled mark.
  QueuedSnapshot snapshot;
  if (committed_through) {
    snapshot.committed_through = *committed_through;
  } else {
    Result<Statement> highest = db_.prepare("SELECT COALESCE(MAX(id), 0) FROM outbound_queue");
    if (!highest) return highest.status();
    Result<bool> row = highest->step();
    if (!row) return row.status();
    snapshot.committed_through = highest->columnInt64(0);
  }
  Result<std::vector<QueuedMessage>> messages = nextQueued(spid, ~std::uint32_t{0}, max + 1);
  if (!messages) return messages.status();
  if (messages->size() > max) return std::optional<QueuedSnapshot>();  // grew meanwhile
  snapshot.messages = std::move(messages).value();
  return std::optional<QueuedSnapshot>(std::move(snapshot));
}

}  // namespace npac::db
