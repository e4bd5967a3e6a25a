// ReadyMessages: the DeliveryStore's per-provider ReadyQueues on their own — when a round
// is answered from memory, when it must read the database, and the counts of what is held.
#include "npac/npacd/core/ready_messages.h"

#include <catch2/catch.hpp>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "tests/db/temp_dir.h"

using namespace npac;
using namespace npac::npacd;

namespace {

struct ReadyFixture {
  db::testing::TempDir dir;
  std::unique_ptr<db::Database> db;
  std::unique_ptr<db::OutboundQueue> queue;
  std::unique_ptr<ReadyMessages> ready;
  int loads = 0;  // before_load calls: rounds that could not be answered from a complete queue

  ReadyFixture() {
    db = db::Database::open(dir.file("npacd.db")).value();
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
    REQUIRE(db::ProviderStore(*db).add({"0002", "Provider 0002", db::SystemType::kSoa, true}).isOk());
    queue = std::make_unique<db::OutboundQueue>(*db);
    ready = std::make_unique<ReadyMessages>(*queue);
  }
  // Appends as the queue writer does, and returns the committed rows as it hands them over.
  std::vector<db::QueuedMessage> commit(std::size_t count, const std::string& spid = "0001") {
    std::vector<db::NewMessage> messages(count, db::NewMessage{spid, 1, 0, {0x30, 0x01, 0x07}});
    auto ids = queue->appendBatch(messages, 1000).value();
    std::vector<db::QueuedMessage> rows;
    for (std::size_t i = 0; i < ids.size(); ++i) rows.push_back(db::committedMessage(messages[i], ids[i], 1000));
    return rows;
  }
  std::optional<std::vector<db::QueuedMessage>> next(const std::string& spid = "0001", std::size_t limit = 10) {
    return ready->next(spid, 1, limit, [this] { ++loads; });
  }
};

std::vector<db::MessageId> idsOf(const std::vector<db::QueuedMessage>& rows) {
  std::vector<db::MessageId> ids;
  for (const db::QueuedMessage& row : rows) ids.push_back(row.id);
  return ids;
}

}  // namespace

TEST_CASE("A provider's first round loads its queued messages and the rounds after it are answered from memory") {
  ReadyFixture f;
  auto rows = f.commit(3);
  auto first = f.next();
  REQUIRE(first.has_value());
  CHECK(idsOf(*first) == idsOf(rows));
  CHECK(f.loads == 1);
  CHECK(f.ready->messages() == 3);
  CHECK(f.ready->bytes() == 9);
  auto again = f.next();
  REQUIRE(again.has_value());
  CHECK(idsOf(*again) == idsOf(rows));  // next() copies: nothing left `queued` yet
  CHECK(f.loads == 1);
  CHECK(f.ready->rounds() == 2);
  CHECK(f.ready->databaseRounds() == 0);
}

TEST_CASE("Messages committed and removed after the load keep the held counts exact") {
  ReadyFixture f;
  REQUIRE(f.next().value().empty());  // loaded: nothing queued
  auto rows = f.commit(2);
  f.ready->committed("0001", rows);
  f.ready->noteSubmitted("0001", idsOf(rows));
  CHECK(f.ready->messages() == 2);
  CHECK(f.ready->bytes() == 6);
  f.ready->remove("0001", rows[0].id);
  CHECK(f.ready->messages() == 1);
  CHECK(f.ready->bytes() == 3);
  CHECK(idsOf(f.next().value()) == std::vector<db::MessageId>{rows[1].id});
  CHECK(f.loads == 1);
}

TEST_CASE("A provider with more queued than a load takes is read from the database round by round") {
  ReadyFixture f;
  f.commit(kReadyLoadAtMost + 1);
  CHECK_FALSE(f.next().has_value());
  CHECK_FALSE(f.next().has_value());
  CHECK(f.ready->databaseRounds() == 2);
  CHECK(f.ready->rounds() == 0);
  CHECK(f.ready->messages() == 0);
}

TEST_CASE("Committed messages beyond the total bound drop the provider's queue until the next load") {
  ReadyFixture f;
  f.ready->setLimits({.per_provider = 1000, .total = 2, .total_bytes = 1000});
  REQUIRE(f.next().value().empty());
  auto rows = f.commit(3);
  f.ready->committed("0001", rows);
  CHECK(f.ready->messages() == 0);
  CHECK(f.ready->bytes() == 0);
  CHECK_FALSE(f.next().has_value());  // 3 queued do not fit in 2: the database answers
  CHECK(f.loads == 2);
}

TEST_CASE("A submitted id the queue does not account for drops that provider only") {
  ReadyFixture f;
  REQUIRE(f.next("0001").value().empty());
  REQUIRE(f.next("0002").value().empty());
  auto theirs = f.commit(1, "0002");
  f.ready->committed("0002", theirs);
  auto unseen = f.commit(1, "0001");  // appended without committed(), as a test may
  f.ready->noteSubmitted("0001", idsOf(unseen));
  CHECK(f.ready->messages() == 1);
  CHECK(idsOf(f.next("0001").value()) == idsOf(unseen));  // reloaded
  CHECK(f.loads == 3);
  f.ready->dropAll();
  CHECK(f.ready->messages() == 0);
  CHECK(f.ready->bytes() == 0);
}
