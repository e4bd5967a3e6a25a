// ReadyQueue and the DeliveryStore's ready messages: delivery answered from memory
// without reading back what the queue writer committed, and exactly what the database
// would have answered.
#include "npac/npacd/core/ready_queue.h"

#include <catch2/catch.hpp>

#include <random>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "npac/npacd/core/delivery_store.h"
#include "tests/db/temp_dir.h"
#include "tests/support/postgres_test_database.h"

using namespace npac;
using namespace npac::npacd;

namespace {

struct QueueFixture {
  db::testing::TempDir dir;
  std::unique_ptr<db::Database> db;
  int scheduled = 0;
  std::unique_ptr<DeliveryStore> store;

  QueueFixture() {
    db = db::Database::open(dir.file("npacd.db")).value();
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
    REQUIRE(db::ProviderStore(*db).add({"0002", "Provider 0002", db::SystemType::kSoa, true}).isOk());
    store = std::make_unique<DeliveryStore>(*db, [this] { ++scheduled; });
  }
  // Appends as the queue writer does, and returns the committed rows as it hands them over.
  std::vector<db::QueuedMessage> commit(std::vector<db::NewMessage> messages) {
    auto ids = db::OutboundQueue(*db).appendBatch(messages, 1000).value();
    std::vector<db::QueuedMessage> rows;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      db::QueuedMessage row;
      row.id = ids[i];
      row.spid = messages[i].spid;
      row.function_mask = messages[i].function_mask;
      row.priority = messages[i].priority;
      row.pdu = messages[i].pdu;
      row.created_at = 1000;
      rows.push_back(std::move(row));
    }
    return rows;
  }
  static db::NewMessage message(std::uint32_t mask, int priority, std::uint8_t tag, const char* spid = "0001") {
    return db::NewMessage{spid, mask, priority, {0x30, 0x01, tag}};
  }
};

std::vector<db::MessageId> queuedIds(const std::vector<db::QueuedMessage>& rows) {
  std::vector<db::MessageId> ids;
  for (const db::QueuedMessage& row : rows) ids.push_back(row.id);
  return ids;
}

}  // namespace

TEST_CASE("A ReadyQueue answers what the database answers through a random mix of submissions, sends, failures "
          "and acknowledgements") {
  QueueFixture f;
  db::OutboundQueue queue(*f.db);
  ReadyQueue ready(512);
  auto snapshot = queue.queuedSnapshot("0001", 512).value();
  REQUIRE(snapshot.has_value());
  ready.load(std::move(snapshot->messages), snapshot->committed_through);
  std::mt19937 random(20261204);  // fixed: the same sequence every run
  const std::uint32_t masks[] = {1, 2, 3, 4, 6};
  const std::uint32_t asking[] = {1, 2, 3, 5, 7, 0xffffffffu};
  std::size_t compared = 0;
  for (int step = 0; step < 400; ++step) {
    const unsigned op = random() % 4;
    if (op <= 1) {
      std::vector<db::NewMessage> batch;
      for (unsigned n = random() % 5; n > 0; --n) {
        batch.push_back(QueueFixture::message(masks[random() % 5], static_cast<int>(random() % 3),
                                              static_cast<std::uint8_t>(step)));
      }
      if (batch.empty()) continue;
      for (db::QueuedMessage& row : f.commit(batch)) REQUIRE(ready.add(std::move(row)));
    } else {
      auto head = queue.nextQueued("0001", asking[random() % 6], 3).value();
      if (head.empty()) continue;
      const db::MessageId id = head[random() % head.size()].id;
      if (op == 2) {
        REQUIRE(queue.markSent(id, 1, 2000).isOk());
        if (random() % 2 == 0) REQUIRE(queue.markAcknowledged(id, 2100).isOk());
      } else {
        REQUIRE(queue.markFailed(id, "refused", 2000).isOk());
      }
      ready.remove(id);
    }
    for (std::uint32_t functions : asking) {
      const std::size_t limit = 1 + random() % 8;
      CHECK(queuedIds(ready.next(functions, limit)) == queuedIds(queue.nextQueued("0001", functions, limit).value()));
      ++compared;
    }
  }
  CHECK(compared > 1000);  // most steps compared all six masks
  CHECK(ready.size() == queue.nextQueued("0001", 0xffffffffu, 10000).value().size());
}

TEST_CASE("A message the load already read is not added again when its announcement arrives after the load") {
  QueueFixture f;
  auto rows = f.commit({QueueFixture::message(1, 0, 1), QueueFixture::message(1, 0, 2)});
  auto snapshot = db::OutboundQueue(*f.db).queuedSnapshot("0001", 16).value();
  REQUIRE(snapshot.has_value());
  const db::MessageId committed_through = snapshot->committed_through;
  ReadyQueue ready(16);
  ready.load(std::move(snapshot->messages), committed_through);
  ready.remove(rows[0].id);  // sent meanwhile
  REQUIRE(ready.add(rows[0]));  // its announcement, late
  REQUIRE(ready.add(rows[1]));
  CHECK(queuedIds(ready.next(1, 10)) == std::vector<db::MessageId>{rows[1].id});
}

TEST_CASE("A ReadyQueue given more messages than it may hold drops them all and answers nothing") {
  QueueFixture f;
  ReadyQueue ready(2);
  ready.load({}, 0);
  auto rows = f.commit({QueueFixture::message(1, 0, 1), QueueFixture::message(1, 0, 2), QueueFixture::message(1, 0, 3)});
  CHECK(ready.add(rows[0]));
  CHECK(ready.add(rows[1]));
  CHECK_FALSE(ready.add(rows[2]));
  CHECK_FALSE(ready.complete());
  CHECK(ready.size() == 0);
  CHECK(ready.next(1, 10).empty());
}

TEST_CASE("A queued snapshot is refused when more messages are queued than asked for") {
  QueueFixture f;
  f.commit({QueueFixture::message(1, 0, 1), QueueFixture::message(1, 0, 2), QueueFixture::message(1, 0, 3)});
  CHECK_FALSE(db::OutboundQueue(*f.db).queuedSnapshot("0001", 2).value().has_value());
  auto whole = db::OutboundQueue(*f.db).queuedSnapshot("0001", 3).value();
  REQUIRE(whole.has_value());
  CHECK(whole->messages.size() == 3);
  CHECK(whole->committed_through == whole->messages.back().id);
}

TEST_CASE("Delivery rounds after the first read committed messages from memory, not from the database") {
  QueueFixture f;
  f.commit({QueueFixture::message(1, 0, 1)});
  auto first = f.store->nextQueued("0001", 1, 10).value();  // loads what is queued
  REQUIRE(first.size() == 1);
  f.store->markSent("0001", {first[0].id}, 1, 2000);
  auto rows = f.commit({QueueFixture::message(1, 0, 2), QueueFixture::message(1, 5, 3)});
  const auto ids = queuedIds(rows);
  f.store->committed("0001", rows);
  f.store->noteSubmitted("0001", ids);
  const std::uint64_t database_rounds = f.store->figures().database_rounds;
  auto next = f.store->nextQueued("0001", 1, 10).value();
  CHECK(f.store->figures().database_rounds == database_rounds);
  CHECK(f.store->figures().ready_rounds == 2);
  // Priority first, then id; the message sent in the first round is not among them.
  CHECK(queuedIds(next) == std::vector<db::MessageId>{ids[1], ids[0]});
  CHECK(next[1].pdu == std::vector<std::uint8_t>{0x30, 0x01, 2});
}

TEST_CASE("A burst of more messages than the old bound of 4,096 committed after the load is delivered from memory") {
  QueueFixture f;
  REQUIRE(f.store->nextQueued("0001", 1, 10).value().empty());  // loaded: nothing queued
  std::vector<db::NewMessage> burst(5000, QueueFixture::message(1, 0, 1));
  auto rows = f.commit(burst);
  const auto ids = queuedIds(rows);
  f.store->committed("0001", rows);
  f.store->noteSubmitted("0001", ids);
  CHECK(f.store->figures().ready_messages == 5000);
  CHECK(f.store->figures().ready_bytes == 5000 * 3);
  std::vector<db::MessageId> delivered;
  for (int round = 0; round < 50; ++round) {
    auto next = f.store->nextQueued("0001", 1, 100).value();
    REQUIRE(next.size() == 100);
    for (const auto& row : next) delivered.push_back(row.id);
    f.store->markSent("0001", queuedIds(next), 1, 2000);
  }
  f.store->flush();
  CHECK(delivered == ids);
  CHECK(f.store->figures().database_rounds == 0);
  CHECK(f.store->figures().ready_rounds == 51);
  CHECK(f.store->figures().ready_messages == 0);
  CHECK(f.store->figures().ready_bytes == 0);
}

TEST_CASE("Committed messages beyond the ready bytes bound drop the provider's ready queue and its rounds read "
          "the database") {
  QueueFixture f;
  f.store->setReadyLimits({.per_provider = 1000, .total = 1000, .total_bytes = 10});
  REQUIRE(f.store->nextQueued("0001", 1, 10).value().empty());  // loaded: nothing queued
  auto rows = f.commit({QueueFixture::message(1, 0, 1), QueueFixture::message(1, 0, 2),
                        QueueFixture::message(1, 0, 3), QueueFixture::message(1, 0, 4)});
  f.store->committed("0001", rows);  // 3 + 3 + 3 bytes fit, the fourth does not
  f.store->noteSubmitted("0001", queuedIds(rows));
  CHECK(f.store->figures().ready_messages == 0);
  CHECK(f.store->figures().ready_bytes == 0);
  const std::uint64_t database_rounds = f.store->figures().database_rounds;
  CHECK(queuedIds(f.store->nextQueued("0001", 1, 10).value()) == queuedIds(rows));
  CHECK(f.store->figures().database_rounds == database_rounds + 1);
}

TEST_CASE("A message appended without being handed to the store is still delivered") {
  QueueFixture f;
  REQUIRE(f.store->nextQueued("0001", 1, 10).value().empty());  // loaded: nothing queued
  auto rows = f.commit({QueueFixture::message(1, 0, 1)});
  f.store->noteSubmitted("0001", queuedIds(rows));  // no committed(): a test's direct append
  CHECK(queuedIds(f.store->nextQueued("0001", 1, 10).value()) == queuedIds(rows));
}

TEST_CASE("Messages put back to queued after a lost association are read again by the next round") {
  QueueFixture f;
  auto rows = f.commit({QueueFixture::message(1, 0, 1), QueueFixture::message(1, 0, 2)});
  auto sent = f.store->nextQueued("0001", 1, 10).value();
  REQUIRE(sent.size() == 2);
  f.store->markSent("0001", queuedIds(sent), 7, 2000);
  CHECK(f.store->nextQueued("0001", 1, 10).value().empty());
  f.store->requeueAssociation("0001", 7);
  auto again = f.store->nextQueued("0001", 1, 10).value();
  CHECK(queuedIds(again) == queuedIds(rows));
  CHECK(again[0].retransmission);
}

TEST_CASE("A provider with more queued than one delivery round takes is read from the database, not loaded") {
  QueueFixture f;
  std::vector<db::NewMessage> many(kReadyLoadAtMost + 1, QueueFixture::message(1, 0, 1));
  f.commit(many);
  auto head = f.store->nextQueued("0001", 1, 4).value();
  CHECK(head.size() == 4);
  CHECK(f.store->figures().database_rounds == 1);
  CHECK(f.store->figures().ready_rounds == 0);
}

TEST_CASE("Another provider's committed messages never reach a provider's ReadyQueue") {
  QueueFixture f;
  REQUIRE(f.store->nextQueued("0001", 1, 10).value().empty());
  REQUIRE(f.store->nextQueued("0002", 1, 10).value().empty());
  auto theirs = f.commit({QueueFixture::message(1, 0, 1, "0002")});
  f.store->committed("0002", theirs);
  CHECK(f.store->nextQueued("0001", 1, 10).value().empty());
  CHECK(queuedIds(f.store->nextQueued("0002", 1, 10).value()) == queuedIds(theirs));
}

TEST_CASE("A message this writer commits after the load is added although another node's loaded message has a "
          "higher id") {
  // One PostgreSQL sequence, two writers: this node's writer drew 2 and had committed
  // through 1 when the load began; the other node's 3 committed first and was loaded.
  QueueFixture f;
  auto rows = f.commit({QueueFixture::message(1, 0, 1), QueueFixture::message(1, 0, 2), QueueFixture::message(1, 0, 3)});
  ReadyQueue ready(16);
  ready.load({rows[2]}, rows[0].id);
  CHECK(ready.covers(rows[2].id));
  CHECK_FALSE(ready.covers(rows[1].id));
  REQUIRE(ready.add(rows[1]));  // this writer's, announced after the load
  CHECK(queuedIds(ready.next(1, 10)) == std::vector<db::MessageId>{rows[1].id, rows[2].id});
}

TEST_CASE("A message committed before the load and sent before its announcement arrives is not added again") {
  QueueFixture f;
  auto rows = f.commit({QueueFixture::message(1, 0, 1)});
  ReadyQueue ready(16);
  ready.load({}, rows[0].id);  // the writer's mark covers it; the snapshot no longer has it
  REQUIRE(ready.add(rows[0]));  // its late announcement
  CHECK(ready.next(1, 10).empty());
}

TEST_CASE("A load takes the writer's committed mark given to the store, not the table's highest id") {
  QueueFixture f;
  auto ours = f.commit({QueueFixture::message(1, 0, 1)});
  auto theirs = f.commit({QueueFixture::message(1, 0, 2)});  // another node's, higher id
  auto late = f.commit({QueueFixture::message(1, 0, 3)});
  // Our writer has committed through ours[0]; theirs and late are in the table, late is
  // announced only after the load.
  f.store->setCommittedThrough([&] { return ours[0].id; });
  auto first = f.store->nextQueued("0001", 1, 1).value();  // loads ours, theirs, late
  REQUIRE(queuedIds(first) == queuedIds(ours));
  f.store->committed("0001", late);
  CHECK(queuedIds(f.store->nextQueued("0001", 1, 10).value()) ==
        std::vector<db::MessageId>{ours[0].id, theirs[0].id, late[0].id});
  CHECK(f.store->figures().database_rounds == 0);
}

TEST_CASE("Forgetting a provider's ready messages reads rows another node committed with the next round") {
  QueueFixture f;
  REQUIRE(f.store->nextQueued("0001", 1, 10).value().empty());  // loaded: nothing queued
  auto theirs = f.commit({QueueFixture::message(1, 0, 1)});  // no committed(): another node's
  CHECK(f.store->nextQueued("0001", 1, 10).value().empty());  // memory does not know them
  f.store->forgetReady("0001");  // their NOTIFY
  CHECK(queuedIds(f.store->nextQueued("0001", 1, 10).value()) == queuedIds(theirs));
  f.commit({QueueFixture::message(1, 0, 2, "0002")});
  f.store->forgetAllReady();  // the listener reconnected
  CHECK(f.store->nextQueued("0002", 1, 10).value().size() == 1);
}

TEST_CASE("On PostgreSQL delivery rounds after the first are answered from memory", "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  auto db = db::Database::open(database.url()).value();
  REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
  DeliveryStore store(*db, [] {});
  store.setCommittedThrough([] { return db::MessageId{0}; });
  REQUIRE(store.nextQueued("0001", 1, 10).value().empty());  // loads: nothing queued
  std::vector<db::NewMessage> one{QueueFixture::message(1, 0, 1)};
  auto ids = db::OutboundQueue(*db).appendBatch(one, 1000).value();
  db::QueuedMessage row;
  row.id = ids[0];
  row.spid = "0001";
  row.function_mask = 1;
  row.pdu = {0x30, 0x01, 1};
  store.committed("0001", {row});
  CHECK(queuedIds(store.nextQueued("0001", 1, 10).value()) == ids);
  CHECK(store.figures().ready_rounds == 2);
  CHECK(store.figures().database_rounds == 0);
}
