// ProgressLog: where delivery progress records (db/delivery_progress.h) are kept — table
// delivery_progress, appended and never updated — and each provider's settled mark
// (table delivery_settled), from which its records are replayed.
//
// Storage. A record is stored with its ids sorted ascending (the order of a record's ids
// means nothing: each id's transition stands alone) and split so that no stored record
// spans more than kMaxSpan ids (last_id - first_id). Two indexes answer the questions the
// queue asks, each in one range:
//   - after(spid, mark): the records that may name a message above `mark` — last_id > mark,
//     index (spid, last_id) — in the order they were appended (seq);
//   - covering(spid, id): the records that may name message `id` — first_id in
//     [id - kMaxSpan, id], index (spid, first_id).
// Retention drops whole ranges: purgeThrough(spid, mark) deletes the records whose every
// id is at or below `mark`.
//
// The settled mark (delivery_settled) is a checkpoint, not a state: every message of the
// provider at or below it is acknowledged, except the messages listed open
// (delivery_open: failed ones, and ones left waiting or in flight long enough that the mark
// passed them — OutboundQueue::settle). It only grows (saveSettled keeps the larger), so
// replaying the records after any mark once saved, and the records covering each open
// message, gives the same states.
//
// Retention ranges (schema 12). The retention purge deletes the messages acknowledged
// before its cutoff. A mark says what is acknowledged, not when; delivery_marks says when:
// settle() notes (one row per provider and minute) its new mark with the time of the newest
// acknowledgement record it passed — every message at or below that mark, except those
// listed open, was acknowledged by then. So the messages of a provider at or below the
// newest mark noted before the cutoff (retentionMarks) are due, as one id range, less the
// open ones and the ones listed late (delivery_late: acknowledged after the mark had passed
// them waiting, so after the time noted), which the purge takes one by one by their own
// acknowledgement time. Never early; late by at most the minute a note stands for.
//
// Both engines (SQLite, PostgreSQL) through db::Database; the writes join the caller's
// transaction when there is one. On PostgreSQL append() writes all its records with one
// INSERT over arrays (one round trip per turn, not one per record), in their order.
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "db/delivery_progress.h"
#include "db/status.h"

namespace npac::db {

class Database;
class Statement;

class ProgressLog {
 public:
  // Ids one stored record may span (last_id - first_id), and hold at most.
  static constexpr MessageId kMaxSpan = MessageId{1} << 16;
  static constexpr std::size_t kMaxIds = 65536;

  explicit ProgressLog(Database& db) : db_(db) {}

  // Appends `records` (ids sorted and split as above; a record without ids is skipped).
  // kInvalidArgument for an id below 1, an event or SPID that cannot be stored (empty SPID).
  Status append(std::span<const ProgressRecord> records);

  // The records of `spid` that may name a message above `mark`, in append order. The ids
  // at or below `mark` are left in them (the fold skips settled ids).
  Result<std::vector<ProgressRecord>> after(std::string_view spid, MessageId mark);
  // The records of `spid` that name message `id`, in append order.
  Result<std::vector<ProgressRecord>> covering(std::string_view spid, MessageId id);
  // Deletes the records of `spid` whose ids are all at or below `mark`; how many.
  Result<std::size_t> purgeThrough(std::string_view spid, MessageId mark);

  // The provider's settled mark (0 when none was saved).
  Result<MessageId> settledThrough(std::string_view spid);
  // Saves `mark` unless a larger one is saved already.
  Status saveSettled(std::string_view spid, MessageId mark, TimeMs at);
  // settledThrough() for a caller about to move the mark (OutboundQueue::settle): on
  // PostgreSQL the provider's delivery_settled row is made to exist and locked until the
  // transaction ends, so that two settles of one provider (its lease holder's turn, another
  // node's retention purge) run one after the other and the second counts from the mark the
  // first saved — never a row twice in the settled counts. On SQLite the file's write lock
  // already does this.
  Result<MessageId> settledThroughForUpdate(std::string_view spid);

  // The messages of `spid` at or below its mark that are not settled (see above), ascending;
  // `waiting` is false for those listed as failed.
  struct Open {
    MessageId id = 0;
    bool waiting = true;
  };
  Result<std::vector<Open>> open(std::string_view spid);
  // Lists `messages` open (a message listed again keeps the newer `waiting`), and takes
  // `settled` off the list.
  Status saveOpen(std::string_view spid, std::span<const Open> messages, std::span<const MessageId> settled);

  // ---- settled counts (schema 11, table delivery_settled_counts) ----
  // How many of the provider's rows at or below its settled mark are kept, per function
  // mask: the rows appended since schema 9 and those an earlier schema left sent or failed
  // by their columns (not those it left acknowledged: the queue summary counts those from
  // their own index). settle() adds the rows its mark passes, in its transaction; the
  // retention purge, which deletes such rows only at or below the mark, takes them off.
  // So the queue summary and /metrics count a provider's acknowledged messages in one
  // read of this table instead of one per retained row (db/queue_summary.cc).
  Result<std::map<std::uint32_t, std::int64_t>> settledCounts(std::string_view spid);
  // Adds `delta` (negative: takes off) to each mask's count; a count that reaches 0 goes.
  // The caller holds the provider's mark (settledThroughForUpdate) or deletes only rows at
  // or below a committed mark (the purge).
  Status addSettledCounts(std::string_view spid, const std::map<std::uint32_t, std::int64_t>& delta);

  // ---- retention ranges (schema 12, tables delivery_marks and delivery_late) ----
  // "Every message at or below `through`, except those listed open or late, was
  // acknowledged by `at`" — kept one per provider and minute of `at`.
  struct MarkNote {
    TimeMs minute = 0;  // at / kNoteMs
    TimeMs at = 0;
    MessageId through = 0;
  };
  static constexpr TimeMs kNoteMs = 60'000;
  // The notes a mark moved to `mark` makes, from the acknowledgements it passed — each as
  // (its record's time, the lowest id it acknowledged above the mark before) — when every
  // message at or below the mark before was acknowledged by `not_before`: per minute of
  // acknowledgement, the newest time in it, and the mark up to (not including) the lowest
  // id acknowledged in a later minute. Times before `not_before` count as `not_before`.
  static std::vector<MarkNote> notesFor(std::vector<std::pair<TimeMs, MessageId>> acknowledgements, MessageId mark,
                                        TimeMs not_before);
  // The time of the provider's newest note, if any.
  Result<std::optional<TimeMs>> newestNote(std::string_view spid);
  // Saves `notes`, each replacing a lower mark noted in the same minute.
  Status saveNotes(std::string_view spid, std::span<const MarkNote> notes);
  // Per provider, the highest mark noted as acknowledged before `cutoff` (providers
  // without one are left out), by SPID.
  Result<std::vector<std::pair<std::string, MessageId>>> retentionMarks(TimeMs cutoff);
  // Deletes the notes of `spid` before `cutoff` below `mark` (retentionMarks' answer: the
  // note holding it stays).
  Status pruneNotes(std::string_view spid, TimeMs cutoff, MessageId mark);
  // Lists `ids` late: acknowledged after the mark had passed them (settle()).
  Status saveLate(std::string_view spid, std::span<const MessageId> ids);
  // Up to `max` messages listed late, by id.
  Result<std::vector<MessageId>> late(std::size_t max);
  // Takes `ids` off the late list (their rows are purged, or gone).
  Status dropLate(std::span<const MessageId> ids);

 private:
  // The records a query of `spid`'s (event, association_id, at, ids, reason, seq) rows
  // returns; kCorrupt for a damaged one.
  Result<std::vector<ProgressRecord>> read(Statement& query, std::string_view spid);
  // Records with first_id in [from_first, to_first] and last_id >= min_last, by seq.
  Result<std::vector<ProgressRecord>> select(std::string_view spid, MessageId from_first, MessageId to_first,
                                             MessageId min_last);
  Database& db_;
};

}  // namespace npac::db
