// The settled counts (schema 11, db/progress_log.h): each provider's rows at or below its
// settled mark counted per function mask — kept by OutboundQueue::settle and the retention
// purge, read by the queue summary instead of every retained row. Each case checks the
// counts against a recount of the rows themselves.
#include <catch2/catch.hpp>

#include "db/outbound_queue.h"
#include "db/outbound_queue_sql.h"
#include "db/progress_log.h"
#include "db/queue_summary.h"
#include "db/transaction.h"
#include "fixtures.h"
#include "settle_fixture.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

using Fixture = SettleFixture;
using Counts = std::map<std::uint32_t, std::int64_t>;

}  // namespace

TEST_CASE("A settled mark that moves adds the rows it passed to its provider's counts, per function mask",
          "[db][settle]") {
  Fixture f;
  const MessageId a = f.append(1000, 1);
  const MessageId b = f.append(1000, 9);
  const MessageId c = f.append(1000, 1);
  const MessageId other = f.append(1000, 1, "0002");  // another provider's, between them
  const MessageId d = f.append(1000, 1);
  CHECK(f.counts().empty());
  f.deliver({a, b}, 2000);
  REQUIRE(f.settle(2002) == b);
  CHECK(f.counts() == Counts{{1, 1}, {9, 1}});
  f.deliver({c, d}, 3000);
  REQUIRE(f.settle(3002) == d);
  CHECK(f.counts() == Counts{{1, 3}, {9, 1}});
  CHECK(f.counts() == f.recount());
  CHECK(f.counts("0002").empty());  // its row was not settled
  (void)other;
}

TEST_CASE("The queue summary counts the settled messages from the counts, each mask's oldest from its first row",
          "[db][settle]") {
  Fixture f;
  const MessageId failed = f.append(1000, 1);
  const MessageId y = f.append(1100, 1);
  const MessageId z = f.append(1200, 9);
  const MessageId waiting = f.append(1300, 1);
  f.record(ProgressEvent::kHanded, {failed}, 2000);
  f.record(ProgressEvent::kFailed, {failed}, 2001);
  f.deliver({y, z}, 2002);
  REQUIRE(f.settle(2004) == z);  // a failed message is passed and listed open
  CHECK(f.counts() == Counts{{1, 2}, {9, 1}});
  const std::vector<QueueCount> expected{
      {MessageState::kQueued, 1, 1, 1300},
      {MessageState::kAcknowledged, 1, 1, 1100},  // the failed one below the mark is not in it
      {MessageState::kAcknowledged, 9, 1, 1200},
      {MessageState::kFailed, 1, 1, 1000},
  };
  CHECK(f.summary().counts == expected);
  (void)waiting;
}

TEST_CASE("The retention purge deletes acknowledged rows only at or below the mark and takes them off the counts",
          "[db][settle]") {
  Fixture f;
  const MessageId a = f.append(1000, 1);
  const MessageId b = f.append(1000, 1);
  const MessageId in_flight = f.append(1000, 1);
  const MessageId d = f.append(1000, 9);
  const MessageId e = f.append(1000, 9);
  f.deliver({a, b}, 2000);
  f.record(ProgressEvent::kHanded, {in_flight}, 2000);
  f.deliver({d, e}, 2000);
  REQUIRE(f.settle(2002) == b);  // the message in flight holds the mark below it
  CHECK(f.summary().total(MessageState::kAcknowledged) == 4);

  // d and e were acknowledged before the cutoff too, but above the mark: they wait for it.
  REQUIRE(f.queue.purgeAcknowledgedBefore(5000).value() == 2);
  CHECK(f.counts().empty());
  CHECK(f.counts() == f.recount());
  CHECK(f.queue.get(d).isOk());
  QueueSummary after = f.summary();
  CHECK(after.total(MessageState::kAcknowledged) == 2);
  CHECK(after.total(MessageState::kSent) == 1);

  f.record(ProgressEvent::kAcknowledged, {in_flight}, 6000);
  REQUIRE(f.settle(6002) == e);
  CHECK(f.counts() == Counts{{1, 1}, {9, 2}});
  CHECK(f.counts() == f.recount());
  REQUIRE(f.queue.purgeAcknowledgedBefore(7000).value() == 3);
  CHECK(f.counts().empty());
  CHECK(f.summary().counts.empty());
}

TEST_CASE("Bounded purge steps keep the counts equal to the rows left at or below the mark", "[db][settle]") {
  Fixture f;
  std::vector<MessageId> ids;
  for (int i = 0; i < 12; ++i) ids.push_back(f.append(1000, i % 3 == 0 ? 9 : 1));
  f.deliver(ids, 2000);
  REQUIRE(f.settle(2002) == ids.back());
  CHECK(f.counts() == Counts{{1, 8}, {9, 4}});
  std::size_t purged = 0;
  for (int step = 0; step < 4; ++step) {
    purged += f.queue.purgeAcknowledgedBefore(5000, 5).value();
    CHECK(f.counts() == f.recount());
    CHECK(static_cast<std::size_t>(f.summary().total(MessageState::kAcknowledged)) == ids.size() - purged);
  }
  CHECK(purged == ids.size());
}

TEST_CASE("The purge finds the rows an earlier schema left acknowledged through their index, not the whole table",
          "[sqlite]") {
  // Ordered by id, SQLite read the whole table by rowid for them: on a file of 10 million
  // rows acknowledged by records, where none matches, a second per purge step.
  Fixture f;
  const std::string details = f.queryPlan(queue_sql::kChooseAcknowledgedByColumnsSqlite);
  INFO(details);
  CHECK_THAT(details, Catch::Contains("USING INDEX outbound_queue_acknowledged"));
  CHECK_THAT(details, !Catch::Contains("SCAN outbound_queue"));
}

TEST_CASE("The purge settles a provider whose acknowledgements older than the cutoff lie above its mark, then "
          "deletes them", "[db][settle]") {
  // The provider went quiet (or npacd stopped) before its next turn settled them.
  Fixture f;
  const MessageId a = f.append(1000, 1);
  const MessageId b = f.append(1000, 9);
  const MessageId young = f.append(1000, 1);
  f.deliver({a, b}, 2000);
  f.deliver({young}, 90'000);  // a minute later: retention ranges are noted per minute
  REQUIRE(f.log.settledThrough("0001").value() == 0);
  REQUIRE(f.queue.settleLagging(3000).value() == 1);
  CHECK(f.log.settledThrough("0001").value() == young);  // settled as of the cutoff: all three acknowledged
  CHECK(f.queue.settleLagging(3000).value() == 0);       // nothing lags any more
  CHECK(f.queue.purgeAcknowledgedBefore(3000).value() == 2);
  CHECK(f.counts() == Counts{{1, 1}});
  CHECK(f.counts() == f.recount());
  CHECK(f.queue.get(young).isOk());
}

TEST_CASE("On PostgreSQL a settle holds its provider's mark until it commits, so two nodes' settles never count a "
          "row twice", "[db][settle][postgres]") {
  Fixture f;
  const MessageId a = f.append(1000, 1);
  f.deliver({a}, 2000);
  OpenOptions quick;
  quick.busy_timeout = std::chrono::milliseconds(200);
  std::unique_ptr<Database> other = openFresh(f.dir, quick);  // another node's connection
  {
    Transaction first(*f.db);
    REQUIRE(first.begin().isOk());
    REQUIRE(f.queue.settle("0001", 3000).value() == a);
    // The other node's settle waits for the mark: past its lock timeout it is refused busy.
    Result<MessageId> blocked = OutboundQueue(*other).settle("0001", 3000);
    REQUIRE_FALSE(blocked.isOk());
    CHECK(blocked.status().code() == Status::Code::kBusy);
    REQUIRE(first.commit().isOk());
  }
  // Afterwards it starts from the mark the first one saved: nothing is counted again.
  CHECK(OutboundQueue(*other).settle("0001", 3000).value() == a);
  CHECK(f.counts() == Counts{{1, 1}});
}

TEST_CASE("A summary asked for the oldest queued row only counts the settled groups without looking for their "
          "oldest", "[db][settle]") {
  // /metrics: the first row of a mask may lie behind millions of another mask's rows.
  Fixture f;
  const MessageId a = f.append(1000, 9);
  const MessageId b = f.append(1100, 1);
  const MessageId waiting = f.append(1200, 1);
  f.deliver({a, b}, 2000);
  REQUIRE(f.settle(2002) == b);
  auto counts = summarizeQueue(*f.db, "0001", SummaryOldest::kQueued);
  REQUIRE(counts.isOk());
  const std::vector<QueueCount> expected{
      {MessageState::kQueued, 1, 1, 1200},
      {MessageState::kAcknowledged, 1, 1, 0},
      {MessageState::kAcknowledged, 9, 1, 0},
  };
  CHECK(counts->counts == expected);
  CHECK(counts->oldestQueuedAt() == std::optional<TimeMs>(1200));
  // The operator's view finds them.
  CHECK(f.summary().counts[1].oldest_created_at == 1100);
  CHECK(f.summary().counts[2].oldest_created_at == 1000);
  (void)waiting;
}
