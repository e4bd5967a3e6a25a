// OutboundQueue::settle and the read it bounds (db/outbound_queue_settle.cc): how far a
// provider's settled mark moves, what it lists open, and that delivery reads stay right.
#include <catch2/catch.hpp>

#include "db/outbound_queue.h"
#include "db/progress_log.h"
#include "db/queue_summary.h"
#include "db/transaction.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

struct Fixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  OutboundQueue queue{*db};
  ProgressLog log{*db};
  Fixture() { addProvider(*db, "0001"); }
  std::vector<MessageId> append(std::size_t n, TimeMs now = 1000, std::int32_t priority = 0,
                                std::uint32_t functions = 1) {
    std::vector<NewMessage> messages;
    for (std::size_t i = 0; i < n; ++i) {
      messages.push_back(NewMessage{"0001", functions, priority, Bytes{0x30, 0x01, static_cast<std::uint8_t>(i)}});
    }
    auto ids = queue.appendBatch(messages, now);
    REQUIRE(ids.isOk());
    return *ids;
  }
  void record(ProgressEvent event, std::vector<MessageId> ids, TimeMs at, AssociationId association = 1) {
    const ProgressRecord r{"0001", event, association, at, std::move(ids), "why"};
    REQUIRE(log.append(std::span(&r, 1)).isOk());
  }
  void deliver(const std::vector<MessageId>& ids, TimeMs at) {
    record(ProgressEvent::kHanded, ids, at);
    record(ProgressEvent::kAcknowledged, ids, at + 1);
  }
  MessageId settle(TimeMs now) {
    auto mark = queue.settle("0001", now);
    REQUIRE(mark.isOk());
    CHECK(*log.settledThrough("0001") == *mark);
    return *mark;
  }
  std::vector<ProgressLog::Open> open() { return log.open("0001").value(); }
  std::vector<MessageId> next(std::uint32_t functions = 1, std::size_t limit = 100) {
    auto rows = queue.nextQueued("0001", functions, limit);
    REQUIRE(rows.isOk());
    std::vector<MessageId> ids;
    for (const QueuedMessage& row : *rows) ids.push_back(row.id);
    return ids;
  }
};

}  // namespace

TEST_CASE("The settled mark passes every acknowledged message up to the first one not acknowledged",
          "[db][settle]") {
  Fixture f;
  const auto ids = f.append(5);
  f.record(ProgressEvent::kHanded, ids, 2000);
  f.record(ProgressEvent::kAcknowledged, {ids[0], ids[1], ids[3]}, 2001);
  CHECK(f.settle(2002) == ids[1]);
  CHECK(f.open().empty());
  CHECK(f.queue.get(ids[2])->state == MessageState::kSent);
}

TEST_CASE("A failed message is passed, listed open, and still returned as not acknowledged", "[db][settle]") {
  Fixture f;
  const auto ids = f.append(3);
  f.record(ProgressEvent::kHanded, ids, 2000);
  f.record(ProgressEvent::kFailed, {ids[0]}, 2001);
  f.record(ProgressEvent::kAcknowledged, {ids[1], ids[2]}, 2001);
  CHECK(f.settle(2002) == ids[2]);
  const auto open = f.open();
  REQUIRE(open.size() == 1);
  CHECK(open[0].id == ids[0]);
  CHECK_FALSE(open[0].waiting);
  auto missed = f.queue.unacknowledged("0001", 10);
  REQUIRE(missed->size() == 1);
  CHECK(missed->front().id == ids[0]);
  CHECK(missed->front().state == MessageState::kFailed);
}

TEST_CASE("A message waiting less than the stuck bound holds the mark below it", "[db][settle]") {
  Fixture f;
  const auto ids = f.append(3, 1000);
  f.deliver({ids[1], ids[2]}, 2000);
  CHECK(f.settle(1000 + OutboundQueue::kStuckAfterMs - 1) == 0);
  CHECK(f.open().empty());
  CHECK(f.next() == std::vector<MessageId>{ids[0]});
}

TEST_CASE("A message no association carries is passed once it waited the stuck bound, and is still offered",
          "[db][settle]") {
  Fixture f;
  const auto stuck = f.append(1, 1000, 0, 2).front();  // needs function 2
  const auto ids = f.append(2, 1000);
  f.deliver(ids, 2000);
  CHECK(f.settle(1000 + OutboundQueue::kStuckAfterMs) == ids[1]);
  const auto open = f.open();
  REQUIRE(open.size() == 1);
  CHECK(open[0].id == stuck);
  CHECK(open[0].waiting);
  CHECK(f.next(1).empty());
  CHECK(f.next(3) == std::vector<MessageId>{stuck});
  // Delivered at last: the next settle takes it off the list.
  f.deliver({stuck}, 20000);
  CHECK(f.next(3).empty());
  f.settle(20002);
  CHECK(f.open().empty());
}

TEST_CASE("Delivery reads the queued messages above the mark in priority and id order", "[db][settle]") {
  Fixture f;
  const auto low = f.append(3, 1000, 0);
  const auto high = f.append(3, 1000, 5);
  f.deliver({low[0], high[0]}, 2000);
  CHECK(f.settle(2002) == low[0]);  // low[1] is queued and young
  CHECK(f.next() == std::vector<MessageId>{high[1], high[2], low[1], low[2]});
  CHECK(f.next(1, 3) == std::vector<MessageId>{high[1], high[2], low[1]});
}

TEST_CASE("One settle walks a bounded number of rows per priority, and the next one goes on", "[db][settle]") {
  Fixture f;
  const auto ids = f.append(OutboundQueue::kSettleWalkRows + 100);
  f.deliver(ids, 2000);
  CHECK(f.settle(2002) == ids[OutboundQueue::kSettleWalkRows - 1]);
  CHECK(f.settle(2003) == ids.back());
  CHECK(f.next().empty());
}

TEST_CASE("A message put back to queued below nothing acknowledged keeps the mark below it", "[db][settle]") {
  Fixture f;
  const auto ids = f.append(3);
  f.record(ProgressEvent::kHanded, ids, 2000);
  f.record(ProgressEvent::kRequeued, {ids[0]}, 2001);
  f.record(ProgressEvent::kAcknowledged, {ids[1], ids[2]}, 2002);
  CHECK(f.settle(2003) == 0);
  CHECK(f.next() == std::vector<MessageId>{ids[0]});
}

TEST_CASE("On PostgreSQL an append holds the append lock until it commits, so ids are committed in order",
          "[db][settle][postgres]") {
  Fixture f;
  std::unique_ptr<Database> other = openFresh(f.dir);  // a second connection to the same database
  auto tryLock = [&]() {
    auto query = other->prepare("SELECT pg_try_advisory_xact_lock(?)");
    REQUIRE(query.isOk());
    query->bindInt64(0, OutboundQueue::kAppendLock);
    REQUIRE(query->step().value());
    return query->columnInt64(0) != 0;
  };
  {
    Transaction open(*f.db);
    REQUIRE(open.begin().isOk());
    f.append(1);
    CHECK_FALSE(tryLock());  // the other connection's append would wait here
    REQUIRE(open.commit().isOk());
  }
  CHECK(tryLock());
}

TEST_CASE("A backlog older than the stuck bound with nothing acknowledged after it is not listed open",
          "[db][settle]") {
  Fixture f;
  const auto ids = f.append(3, 1000);
  f.deliver({ids[0]}, 2000);
  CHECK(f.settle(1000 + 10 * OutboundQueue::kStuckAfterMs) == ids[0]);
  CHECK(f.open().empty());
  CHECK(f.next() == std::vector<MessageId>{ids[1], ids[2]});
}

TEST_CASE("The queue's readers see the open messages below the mark and nothing else there", "[db][settle]") {
  Fixture f;
  const auto failed = f.append(1, 1000).front();
  const auto stuck_sent = f.append(1, 1000).front();
  const auto stuck_queued = f.append(1, 1000, 0, 2).front();  // needs function 2
  const auto done = f.append(3, 1000);
  f.record(ProgressEvent::kHanded, {failed, stuck_sent}, 2000, 7);
  f.record(ProgressEvent::kFailed, {failed}, 2001);
  f.deliver(done, 2002);
  REQUIRE(f.settle(1000 + OutboundQueue::kStuckAfterMs) == done.back());
  REQUIRE(f.open().size() == 3);

  // Only the open messages are named: every acknowledged one is settled.
  auto view = f.queue.settledView("0001");
  REQUIRE(view.isOk());
  CHECK(view->mark == done.back());
  CHECK(view->named.size() == 3);
  CHECK(view->find(done[0]) == nullptr);

  auto missed = f.queue.unacknowledged("0001", 10);
  REQUIRE(missed.isOk());
  REQUIRE(missed->size() == 3);
  CHECK((*missed)[0].id == failed);
  CHECK((*missed)[0].state == MessageState::kFailed);
  CHECK((*missed)[1].id == stuck_sent);
  CHECK((*missed)[1].state == MessageState::kSent);
  CHECK((*missed)[2].id == stuck_queued);

  CHECK(f.queue.queuedByMask("0001").value() == std::map<std::uint32_t, std::size_t>{{2, 1}});
  auto summary = summarizeQueue(*f.db, "0001");
  REQUIRE(summary.isOk());
  CHECK(summary->total(MessageState::kAcknowledged) == 3);
  CHECK(summary->total(MessageState::kFailed) == 1);
  CHECK(summary->total(MessageState::kSent) == 1);
  CHECK(summary->total(MessageState::kQueued) == 1);
  CHECK(summary->oldestQueuedAt() == std::optional<TimeMs>(1000));
  CHECK(f.queue.count(MessageState::kAcknowledged).value() == 3);

  // The association of the stuck message is lost: it goes back to queued.
  CHECK(f.queue.requeueAssociation("0001", 7).value() == 1);
  CHECK(f.queue.get(stuck_sent)->state == MessageState::kQueued);
  CHECK(f.next() == std::vector<MessageId>{stuck_sent});
}

TEST_CASE("Messages queued above the mark are counted once by the queue's readers", "[db][settle]") {
  Fixture f;
  const auto done = f.append(2, 1000);
  const auto waiting = f.append(2, 1500, 3);
  f.deliver(done, 2000);
  REQUIRE(f.settle(2002) == done.back());
  CHECK(f.queue.queuedByMask("0001").value() == std::map<std::uint32_t, std::size_t>{{1, 2}});
  auto summary = summarizeQueue(*f.db, "0001");
  REQUIRE(summary.isOk());
  CHECK(summary->total(MessageState::kQueued) == 2);
  CHECK(summary->total(MessageState::kAcknowledged) == 2);
  CHECK(summary->oldestQueuedAt() == std::optional<TimeMs>(1500));
  CHECK(f.queue.unacknowledged("0001", 10)->size() == 2);
}
