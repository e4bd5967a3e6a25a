#include "db/progress_log.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "db/database.h"
#include "db/delivery_progress.h"
#include "db/outbound_queue_sql.h"
#include "db/postgres_array.h"
#include "db/statement.h"
#include "db/transaction.h"

namespace npac::db {
namespace {

// The stored pieces of one record: runs of its sorted ids no wider than kMaxSpan and no
// longer than kMaxIds.
std::vector<std::span<const MessageId>> pieces(const std::vector<MessageId>& sorted) {
  std::vector<std::span<const MessageId>> out;
  std::size_t start = 0;
  for (std::size_t i = 1; i <= sorted.size(); ++i) {
    if (i == sorted.size() || sorted[i] - sorted[start] > ProgressLog::kMaxSpan ||
        i - start == ProgressLog::kMaxIds) {
      out.emplace_back(sorted.data() + start, i - start);
      start = i;
    }
  }
  return out;
}

// The records of one append() as PostgreSQL arrays, one per column.
struct PostgresRecords {
  PostgresArray spid{PostgresArray::Type::kText}, event{PostgresArray::Type::kInt8},
      association{PostgresArray::Type::kInt8}, at{PostgresArray::Type::kInt8}, first{PostgresArray::Type::kInt8},
      last{PostgresArray::Type::kInt8}, ids{PostgresArray::Type::kBytea}, reason{PostgresArray::Type::kText};
  std::size_t rows = 0;

  bool empty() const { return rows == 0; }
  void add(const ProgressRecord& record, std::span<const MessageId> piece) {
    spid.addText(record.spid);
    event.addInt64(static_cast<std::int64_t>(record.event));
    association.addInt64(record.association);
    at.addInt64(record.at);
    first.addInt64(piece.front());
    last.addInt64(piece.back());
    const Bytes encoded = encodeIdList(piece);
    ids.addBytes(encoded);
    if (record.reason.empty()) {
      reason.addNull();
    } else {
      reason.addText(record.reason);
    }
    ++rows;
  }
  Status insert(Database& db) const {
    Result<Statement> statement = db.prepare(
        "INSERT INTO delivery_progress(spid, event, association_id, at, first_id, last_id, ids, reason) "
        "SELECT u.spid, u.event, u.association_id, u.at, u.first_id, u.last_id, u.ids, u.reason "
        "FROM unnest(CAST(? AS text[]), CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS bigint[]), "
        "CAST(? AS bigint[]), CAST(? AS bigint[]), CAST(? AS bytea[]), CAST(? AS text[])) WITH ORDINALITY "
        "AS u(spid, event, association_id, at, first_id, last_id, ids, reason, n) ORDER BY u.n");
    if (!statement) return statement.status();
    int column = 0;
    for (const PostgresArray* array : {&spid, &event, &association, &at, &first, &last, &ids, &reason}) {
      statement->bindBlob(column++, array->encoded());
    }
    return statement->run();
  }
};

}  // namespace

Status ProgressLog::append(std::span<const ProgressRecord> records) {
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  Result<Statement> insert = db_.prepare(
      "INSERT INTO delivery_progress(spid, event, association_id, at, first_id, last_id, ids, reason) "
      "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.status();
  // PostgreSQL: every record of the call in one INSERT over unnest() of one array per
  // column (one round trip, not one per record; db/postgres_array.h).
  std::optional<PostgresRecords> batch;
  if (db_.backend() == Backend::kPostgres) batch.emplace();
  for (const ProgressRecord& record : records) {
    if (record.ids.empty()) continue;
    if (record.spid.empty()) return Status::invalidArgument("a delivery progress record without a provider");
    std::vector<MessageId> sorted = record.ids;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.front() < 1) {
      return Status::invalidArgument("delivery progress for message " + std::to_string(sorted.front()) +
                                     ": ids start at 1");
    }
    for (std::span<const MessageId> piece : pieces(sorted)) {
      if (batch) {
        batch->add(record, piece);
        continue;
      }
      insert->bindText(0, record.spid)
          .bindInt64(1, static_cast<std::int64_t>(record.event))
          .bindInt64(2, record.association)
          .bindInt64(3, record.at)
          .bindInt64(4, piece.front())
          .bindInt64(5, piece.back())
          .bindBlob(6, encodeIdList(piece));
      if (record.reason.empty()) {
        insert->bindNull(7);
      } else {
        insert->bindText(7, record.reason);
      }
      if (Status status = insert->run(); !status) return status;
      insert->reset();
    }
  }
  if (batch && !batch->empty()) {
    if (Status status = batch->insert(db_); !status) return status;
  }
  return txn.commit();
}

Result<std::vector<ProgressRecord>> ProgressLog::select(std::string_view spid, MessageId from_first,
                                                        MessageId to_first, MessageId min_last) {
  Result<Statement> query = db_.prepare(
      "SELECT event, association_id, at, ids, reason, seq FROM delivery_progress "
      "WHERE spid = ? AND first_id >= ? AND first_id <= ? AND last_id >= ? ORDER BY seq");
  if (!query) return query.status();
  query->bindText(0, spid).bindInt64(1, from_first).bindInt64(2, to_first).bindInt64(3, min_last);
  return read(*query, spid);
}

Result<std::vector<ProgressRecord>> ProgressLog::read(Statement& query, std::string_view spid) {
  std::vector<ProgressRecord> records;
  while (true) {
    Result<bool> row = query.step();
    if (!row) return row.status();
    if (!*row) break;
    const std::int64_t seq = query.columnInt64(5);
    std::optional<ProgressEvent> event = progressEventFromInt(query.columnInt64(0));
    if (!event) {
      return Status::make(Status::Code::kCorrupt,
                          "delivery progress record " + std::to_string(seq) + ": unknown event " +
                              std::to_string(query.columnInt64(0)),
                          db_.path(), "restore from backup");
    }
    const Bytes blob = query.columnBlob(3);
    Result<std::vector<MessageId>> ids = decodeIdList(blob, kMaxIds);
    if (!ids) {
      return Status::make(Status::Code::kCorrupt,
                          "delivery progress record " + std::to_string(seq) + ": " + ids.status().message(),
                          db_.path(), "restore from backup");
    }
    ProgressRecord record;
    record.spid = std::string(spid);
    record.event = *event;
    record.association = query.columnIsNull(1) ? 0 : query.columnInt64(1);
    record.at = query.columnInt64(2);
    record.ids = std::move(*ids);
    record.reason = query.columnIsNull(4) ? std::string() : query.columnText(4);
    records.push_back(std::move(record));
  }
  return records;
}

Result<std::vector<ProgressRecord>> ProgressLog::after(std::string_view spid, MessageId mark) {
  // One range of the (spid, last_id) index: what was written since the mark, not every
  // record within kMaxSpan of it.
  Result<Statement> query = db_.prepare(
      "SELECT event, association_id, at, ids, reason, seq FROM delivery_progress "
      "WHERE spid = ? AND last_id > ? ORDER BY seq");
  if (!query) return query.status();
  query->bindText(0, spid).bindInt64(1, mark);
  return read(*query, spid);
}

Result<std::vector<ProgressRecord>> ProgressLog::covering(std::string_view spid, MessageId id) {
  const MessageId from = id > kMaxSpan ? id - kMaxSpan : 0;
  Result<std::vector<ProgressRecord>> records = select(spid, from, id, id);
  if (!records) return records.status();
  // Within its span a record may still skip `id`.
  std::erase_if(*records, [id](const ProgressRecord& r) {
    return std::find(r.ids.begin(), r.ids.end(), id) == r.ids.end();
  });
  return records;
}

Result<std::size_t> ProgressLog::purgeThrough(std::string_view spid, MessageId mark) {
  Result<Statement> purge =
      db_.prepare("DELETE FROM delivery_progress WHERE spid = ? AND first_id <= ? AND last_id <= ?");
  if (!purge) return purge.status();
  purge->bindText(0, spid).bindInt64(1, mark).bindInt64(2, mark);
  if (Status status = purge->run(); !status) return status;
  return static_cast<std::size_t>(db_.changes());
}

Result<MessageId> ProgressLog::settledThrough(std::string_view spid) {
  Result<Statement> query = db_.prepare("SELECT settled_through FROM delivery_settled WHERE spid = ?");
  if (!query) return query.status();
  query->bindText(0, spid);
  Result<bool> row = query->step();
  if (!row) return row.status();
  return *row ? query->columnInt64(0) : MessageId{0};
}

Result<MessageId> ProgressLog::settledThroughForUpdate(std::string_view spid) {
  if (db_.backend() != Backend::kPostgres) return settledThrough(spid);
  // One round trip: the upsert makes the row exist, locks it (DO UPDATE takes the row lock,
  // waiting for another settle's transaction) and answers the mark as committed then.
  Result<Statement> lock = db_.prepare(
      "INSERT INTO delivery_settled(spid, settled_through, at) VALUES(?, 0, 0) "
      "ON CONFLICT(spid) DO UPDATE SET settled_through = delivery_settled.settled_through "
      "RETURNING settled_through");
  if (!lock) return lock.status();
  lock->bindText(0, spid);
  Result<bool> row = lock->step();
  if (!row) return row.status();
  return *row ? lock->columnInt64(0) : MessageId{0};
}

Status ProgressLog::saveSettled(std::string_view spid, MessageId mark, TimeMs at) {
  Result<Statement> upsert = db_.prepare(
      "INSERT INTO delivery_settled(spid, settled_through, at) VALUES(?, ?, ?) "
      "ON CONFLICT(spid) DO UPDATE SET "
      "settled_through = CASE WHEN excluded.settled_through > delivery_settled.settled_through "
      "THEN excluded.settled_through ELSE delivery_settled.settled_through END, "
      "at = CASE WHEN excluded.settled_through > delivery_settled.settled_through "
      "THEN excluded.at ELSE delivery_settled.at END");
  if (!upsert) return upsert.status();
  upsert->bindText(0, spid).bindInt64(1, mark).bindInt64(2, at);
  return upsert->run();
}

Result<std::vector<ProgressLog::Open>> ProgressLog::open(std::string_view spid) {
  Result<Statement> query = db_.prepare("SELECT id, waiting FROM delivery_open WHERE spid = ? ORDER BY id");
  if (!query) return query.status();
  query->bindText(0, spid);
  std::vector<Open> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) break;
    out.push_back(Open{query->columnInt64(0), query->columnInt64(1) != 0});
  }
  return out;
}

Status ProgressLog::saveOpen(std::string_view spid, std::span<const Open> messages,
                             std::span<const MessageId> settled) {
  if (!messages.empty()) {
    Result<Statement> insert = db_.prepare(
        "INSERT INTO delivery_open(spid, id, waiting) VALUES(?, ?, ?) "
        "ON CONFLICT(spid, id) DO UPDATE SET waiting = excluded.waiting");
    if (!insert) return insert.status();
    for (const Open& message : messages) {
      insert->bindText(0, spid).bindInt64(1, message.id).bindInt64(2, message.waiting ? 1 : 0);
      if (Status status = insert->run(); !status) return status;
      insert->reset();
    }
  }
  if (!settled.empty()) {
    Result<Statement> remove = db_.prepare("DELETE FROM delivery_open WHERE spid = ? AND id = ?");
    if (!remove) return remove.status();
    for (MessageId id : settled) {
      remove->bindText(0, spid).bindInt64(1, id);
      if (Status status = remove->run(); !status) return status;
      remove->reset();
    }
  }
  return Status::ok();
}

Result<std::map<std::uint32_t, std::int64_t>> ProgressLog::settledCounts(std::string_view spid) {
  Result<Statement> query =
      db_.prepare("SELECT function_mask, messages FROM delivery_settled_counts WHERE spid = ?");
  if (!query) return query.status();
  query->bindText(0, spid);
  std::map<std::uint32_t, std::int64_t> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out[static_cast<std::uint32_t>(query->columnInt64(0))] = query->columnInt64(1);
  }
}

Status ProgressLog::addSettledCounts(std::string_view spid, const std::map<std::uint32_t, std::int64_t>& delta) {
  Result<Statement> upsert = db_.prepare(
      "INSERT INTO delivery_settled_counts(spid, function_mask, messages) VALUES(?, ?, ?) "
      "ON CONFLICT(spid, function_mask) DO UPDATE SET "
      "messages = delivery_settled_counts.messages + excluded.messages");
  if (!upsert) return upsert.status();
  bool emptied = false;
  for (const auto& [mask, n] : delta) {
    if (n == 0) continue;
    upsert->bindText(0, spid).bindInt64(1, mask).bindInt64(2, n);
    if (Status status = upsert->run(); !status) return status;
    upsert->reset();
    emptied = emptied || n < 0;
  }
  if (!emptied) return Status::ok();
  Result<Statement> drop = db_.prepare("DELETE FROM delivery_settled_counts WHERE spid = ? AND messages <= 0");
  if (!drop) return drop.status();
  drop->bindText(0, spid);
  return drop->run();
}

// ---- retention ranges ----

std::vector<ProgressLog::MarkNote> ProgressLog::notesFor(std::vector<std::pair<TimeMs, MessageId>> acknowledgements,
                                                         MessageId mark, TimeMs not_before) {
  for (auto& [at, id] : acknowledgements) at = std::max(at, not_before);
  std::sort(acknowledgements.begin(), acknowledgements.end(), std::greater<>());  // newest first
  std::vector<MarkNote> notes;
  MessageId lowest_later = std::numeric_limits<MessageId>::max();  // in the minutes after
  MessageId lowest_here = lowest_later;
  const auto close = [&] {
    if (notes.empty()) return;
    notes.back().through = std::min(mark, lowest_later - 1);
    lowest_later = std::min(lowest_later, lowest_here);
  };
  for (const auto& [at, id] : acknowledgements) {
    if (notes.empty() || at / kNoteMs != notes.back().minute) {
      close();
      notes.push_back(MarkNote{at / kNoteMs, at, 0});
      lowest_here = std::numeric_limits<MessageId>::max();
    }
    lowest_here = std::min(lowest_here, id);
  }
  close();
  std::erase_if(notes, [](const MarkNote& note) { return note.through < 1; });
  std::reverse(notes.begin(), notes.end());
  return notes;
}

Result<std::optional<TimeMs>> ProgressLog::newestNote(std::string_view spid) {
  Result<Statement> query = db_.prepare("SELECT at FROM delivery_marks WHERE spid = ? ORDER BY minute DESC LIMIT 1");
  if (!query) return query.status();
  query->bindText(0, spid);
  Result<bool> row = query->step();
  if (!row) return row.status();
  return *row ? std::optional<TimeMs>(query->columnInt64(0)) : std::nullopt;
}

Status ProgressLog::saveNotes(std::string_view spid, std::span<const MarkNote> notes) {
  if (notes.empty()) return Status::ok();
  // One note per provider and minute, the higher mark replacing the lower: the table holds
  // one row per provider and minute of retention (pruneNotes drops the older ones). Each
  // pair alone is true, so replacing one loses at most the minute it stood for: a range
  // cut within that minute falls back to the note before it — later, never early.
  Result<Statement> insert = db_.prepare(
      "INSERT INTO delivery_marks(spid, minute, at, settled_through) VALUES(?, ?, ?, ?) "
      "ON CONFLICT(spid, minute) DO UPDATE SET at = excluded.at, settled_through = excluded.settled_through "
      "WHERE excluded.settled_through > delivery_marks.settled_through");
  if (!insert) return insert.status();
  for (const MarkNote& note : notes) {
    insert->bindText(0, spid).bindInt64(1, note.minute).bindInt64(2, note.at).bindInt64(3, note.through);
    if (Status status = insert->run(); !status) return status;
    insert->reset();
  }
  return Status::ok();
}

Result<std::vector<std::pair<std::string, MessageId>>> ProgressLog::retentionMarks(TimeMs cutoff) {
  // One search of the key (spid, minute) per provider with a mark: minute <= the cutoff's
  // minute bounds it to the notes before the cutoff (pruneNotes leaves about one) and the
  // minute that straddles it; at < cutoff decides within that minute. The notes after the
  // cutoff — one per minute of retention — are not read. (Grouped over the whole table,
  // a step read every provider's notes of the whole retention: millions with a week's
  // retention and hundreds of providers.)
  Result<Statement> query = db_.prepare(queue_sql::kRetentionMarks);
  if (!query) return query.status();
  query->bindInt64(0, cutoff / kNoteMs).bindInt64(1, cutoff);
  std::vector<std::pair<std::string, MessageId>> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    if (query->columnIsNull(1)) continue;  // no note before the cutoff
    out.emplace_back(query->columnText(0), query->columnInt64(1));
  }
}

Status ProgressLog::pruneNotes(std::string_view spid, TimeMs cutoff, MessageId mark) {
  Result<Statement> prune = db_.prepare(
      "DELETE FROM delivery_marks WHERE spid = ? AND minute <= ? AND at < ? AND settled_through < ?");
  if (!prune) return prune.status();
  prune->bindText(0, spid).bindInt64(1, cutoff / kNoteMs).bindInt64(2, cutoff).bindInt64(3, mark);
  return prune->run();
}

Status ProgressLog::saveLate(std::string_view spid, std::span<const MessageId> ids) {
  if (ids.empty()) return Status::ok();
  Result<Statement> insert =
      db_.prepare("INSERT INTO delivery_late(spid, id) VALUES(?, ?) ON CONFLICT(spid, id) DO NOTHING");
  if (!insert) return insert.status();
  for (MessageId id : ids) {
    insert->bindText(0, spid).bindInt64(1, id);
    if (Status status = insert->run(); !status) return status;
    insert->reset();
  }
  return Status::ok();
}

Result<std::vector<MessageId>> ProgressLog::late(std::size_t max) {
  Result<Statement> query = db_.prepare("SELECT id FROM delivery_late ORDER BY id LIMIT ?");
  if (!query) return query.status();
  query->bindInt64(0, static_cast<std::int64_t>(max));
  std::vector<MessageId> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(query->columnInt64(0));
  }
}

Status ProgressLog::dropLate(std::span<const MessageId> ids) {
  if (ids.empty()) return Status::ok();
  Result<Statement> drop = db_.prepare(db_.backend() == Backend::kPostgres
                                           ? "DELETE FROM delivery_late WHERE id IN " NPAC_POSTGRES_ID_LIST
                                           : "DELETE FROM delivery_late WHERE id IN " NPAC_SQLITE_ID_LIST);
  if (!drop) return drop.status();
  drop->bindText(0, queue_sql::idArray(ids));
  return drop->run();
}

}  // namespace npac::db
