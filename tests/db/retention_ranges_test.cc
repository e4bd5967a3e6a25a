// Retention ranges (schema 12, db/progress_log.h "Retention ranges"): settle() notes per
// minute when what its mark passed was acknowledged, and the retention purge deletes each
// provider's rows at or below the newest mark noted before its cutoff — never a message
// acknowledged after the cutoff, whichever way it was acknowledged.
#include <catch2/catch.hpp>

#include "db/outbound_queue.h"
#include "db/outbound_queue_sql.h"
#include "db/progress_log.h"
#include "fixtures.h"
#include "settle_fixture.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

constexpr TimeMs kMinute = ProgressLog::kNoteMs;

std::int64_t countRows(Database& db, const std::string& sql) {
  auto query = db.prepare(sql);
  REQUIRE(query.isOk());
  REQUIRE(query->step().value());
  return query->columnInt64(0);
}

bool kept(SettleFixture& f, MessageId id) { return f.queue.get(id).isOk(); }

// Two messages created at 1000: `stuck` handed out and left unanswered while `answered`,
// above it, is acknowledged at 2001 — the mark passes both, listing `stuck` open — then
// `stuck` acknowledged at `late_at`, which the next settle lists late.
struct LateAcknowledgement {
  MessageId stuck = 0;
  MessageId answered = 0;
};
LateAcknowledgement acknowledgeLate(SettleFixture& f, TimeMs late_at) {
  LateAcknowledgement ids{f.append(1000, 1), f.append(1000, 1)};
  f.record(ProgressEvent::kHanded, {ids.stuck}, 2000);
  f.deliver({ids.answered}, 2000);
  // In flight since long enough, with an acknowledged message above it: passed, listed open.
  REQUIRE(f.settle(1000 + OutboundQueue::kStuckAfterMs) == ids.answered);
  f.record(ProgressEvent::kAcknowledged, {ids.stuck}, late_at);
  f.settle(late_at + 2);  // takes it off the open list: acknowledged late
  return ids;
}

}  // namespace

TEST_CASE("Notes of a moved mark say, per minute of acknowledgement, up to where every message was acknowledged",
          "[db][retention]") {
  // Id 10 acknowledged in minute 0, id 4 in minute 1, id 20 in minute 2; the mark moved to 25.
  const std::vector<ProgressLog::MarkNote> notes =
      ProgressLog::notesFor({{5'000, 10}, {kMinute + 10'000, 4}, {2 * kMinute + 10'000, 20}}, 25, 0);
  REQUIRE(notes.size() == 3);
  CHECK(notes[0].minute == 0);
  CHECK(notes[0].at == 5'000);
  CHECK(notes[0].through == 3);  // id 4 was acknowledged only a minute later
  CHECK(notes[1].at == kMinute + 10'000);
  CHECK(notes[1].through == 19);  // id 20 only in minute 2
  CHECK(notes[2].through == 25);
}

TEST_CASE("A note is never older than the provider's newest one, by which the messages below the old mark were "
          "acknowledged", "[db][retention]") {
  const std::vector<ProgressLog::MarkNote> notes = ProgressLog::notesFor({{5'000, 10}}, 12, 3 * kMinute);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].at == 3 * kMinute);
  CHECK(notes[0].minute == 3);
  CHECK(notes[0].through == 12);
}

TEST_CASE("The purge deletes by range the messages acknowledged before the cutoff and keeps those acknowledged "
          "after it, though the mark passed both", "[db][retention]") {
  SettleFixture f;
  const MessageId a = f.append(1000, 1);
  const MessageId b = f.append(1000, 9);
  const MessageId c = f.append(1000, 1);
  const MessageId d = f.append(1000, 1);
  f.deliver({a, b}, 2000);
  REQUIRE(f.settle(2002) == b);
  f.deliver({c, d}, 3 * kMinute);
  REQUIRE(f.settle(3 * kMinute + 2) == d);

  CHECK(f.queue.purgeAcknowledgedBefore(2 * kMinute).value() == 2);
  CHECK_FALSE(kept(f, a));
  CHECK_FALSE(kept(f, b));
  CHECK(kept(f, c));
  CHECK(kept(f, d));
  CHECK(f.counts() == f.recount());
  CHECK(f.queue.purgeAcknowledgedBefore(4 * kMinute).value() == 2);
  CHECK(f.counts().empty());
}

TEST_CASE("A message the mark passed waiting and acknowledged later is purged by its own acknowledgement time",
          "[db][retention]") {
  SettleFixture f;
  const auto [stuck, a] = acknowledgeLate(f, 5 * kMinute);
  CHECK(countRows(*f.db, "SELECT count(*) FROM delivery_late") == 1);

  // The note of minute 0 covers both ids; the late one waits for its own time.
  CHECK(f.queue.purgeAcknowledgedBefore(2 * kMinute).value() == 1);
  CHECK_FALSE(kept(f, a));
  CHECK(kept(f, stuck));
  CHECK(f.queue.purgeAcknowledgedBefore(6 * kMinute).value() == 1);
  CHECK_FALSE(kept(f, stuck));
  CHECK(countRows(*f.db, "SELECT count(*) FROM delivery_late") == 0);
  CHECK(f.counts().empty());
}

TEST_CASE("A failed message at or below the mark is never purged by its range", "[db][retention]") {
  SettleFixture f;
  const MessageId failed = f.append(1000, 1);
  const MessageId a = f.append(1000, 1);
  f.record(ProgressEvent::kHanded, {failed}, 2000);
  f.record(ProgressEvent::kFailed, {failed}, 2001);
  f.deliver({a}, 2002);
  REQUIRE(f.settle(2004) == a);
  CHECK(f.queue.purgeAcknowledgedBefore(10 * kMinute).value() == 1);
  CHECK(kept(f, failed));
  CHECK(f.queue.get(failed)->state == MessageState::kFailed);
}

TEST_CASE("Settles within one minute keep one note per provider, and the purge drops the notes its range passed",
          "[db][retention]") {
  SettleFixture f;
  for (int minute = 0; minute < 3; ++minute) {
    for (int turn = 0; turn < 4; ++turn) {
      const TimeMs at = minute * kMinute + turn * 1000;
      f.deliver({f.append(at, 1)}, at);
      f.settle(at + 2);
    }
  }
  CHECK(countRows(*f.db, "SELECT count(*) FROM delivery_marks") == 3);
  CHECK(f.queue.purgeAcknowledgedBefore(10 * kMinute).value() == 12);
  CHECK(countRows(*f.db, "SELECT count(*) FROM delivery_marks") == 1);  // the one in use
}

TEST_CASE("A provider without a note before the cutoff keeps its acknowledged messages", "[db][retention]") {
  SettleFixture f;
  const MessageId a = f.append(1000, 1);
  const MessageId other = f.append(1000, 1, "0002");
  f.deliver({a}, 2000);
  f.deliver({other}, 5 * kMinute, "0002");
  f.settle(2002);
  f.settle(5 * kMinute + 2, "0002");
  CHECK(f.queue.purgeAcknowledgedBefore(kMinute).value() == 1);
  CHECK_FALSE(kept(f, a));
  CHECK(kept(f, other));
}

TEST_CASE("A purge step that meets a database refusing writes deletes nothing and keeps its notes and late "
          "listings, then purges once writes are taken again", "[sqlite]") {
  SettleFixture f;
  const auto [stuck, a] = acknowledgeLate(f, 3 * kMinute);
  const std::int64_t notes = countRows(*f.db, "SELECT count(*) FROM delivery_marks");
  REQUIRE(countRows(*f.db, "SELECT count(*) FROM delivery_late") == 1);

  // SQLITE_READONLY: a storage failure as a full disk is (the store's own tests use it too).
  REQUIRE(f.db->execute("PRAGMA query_only = ON").isOk());
  auto refused = f.queue.purgeAcknowledgedBefore(10 * kMinute);
  REQUIRE_FALSE(refused.isOk());
  CHECK_FALSE(f.db->inTransaction());
  REQUIRE(f.db->execute("PRAGMA query_only = OFF").isOk());
  CHECK(kept(f, a));
  CHECK(kept(f, stuck));
  CHECK(countRows(*f.db, "SELECT count(*) FROM delivery_marks") == notes);
  CHECK(countRows(*f.db, "SELECT count(*) FROM delivery_late") == 1);
  CHECK(f.counts() == f.recount());

  CHECK(f.queue.purgeAcknowledgedBefore(10 * kMinute).value() == 2);
  CHECK(countRows(*f.db, "SELECT count(*) FROM delivery_late") == 0);
  CHECK(f.counts().empty());
}

TEST_CASE("The purge finds each provider's newest note before the cutoff through the notes' key, not by reading "
          "every note", "[sqlite]") {
  // Grouped over the whole table, each purge step read every provider's notes of the whole
  // retention: one per minute — millions with a week's retention and hundreds of providers.
  SettleFixture f;
  const std::string details = f.queryPlan(queue_sql::kRetentionMarks);
  INFO(details);
  CHECK_THAT(details, Catch::Contains("SEARCH m USING INDEX sqlite_autoindex_delivery_marks_1 (spid=? AND minute<?)"));
  CHECK_THAT(details, !Catch::Contains("SCAN m"));
}
