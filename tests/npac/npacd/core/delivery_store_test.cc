// DeliveryStore: one transaction per event-loop turn for delivery progress — what is
// collected, when it reaches the file, and what a refused write does to the rest.
#include "npac/npacd/core/delivery_store.h"

#include <catch2/catch.hpp>

#include <sqlite3.h>

#include "db/database.h"
#include "db/lease_store.h"
#include "db/outbound_queue.h"
#include "db/progress_log.h"
#include "db/provider_store.h"
#include "tests/db/temp_dir.h"

using namespace npac;
using namespace npac::npacd;

namespace {

struct StoreFixture {
  db::testing::TempDir dir;
  std::unique_ptr<db::Database> db;
  std::unique_ptr<db::Database> reader;  // a second connection: what another thread sees
  int scheduled = 0;
  std::unique_ptr<DeliveryStore> store;

  StoreFixture() {
    db = db::Database::open(dir.file("npacd.db")).value();
    reader = db::Database::open(dir.file("npacd.db")).value();
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
    store = std::make_unique<DeliveryStore>(*db, [this] { ++scheduled; });
  }
  std::vector<db::MessageId> queue(int count, const std::string& spid = "0001") {
    std::vector<db::NewMessage> rows;
    for (int i = 0; i < count; ++i) rows.push_back(db::NewMessage{spid, 1, 0, {0x30, 0x00}});
    return db::OutboundQueue(*db).appendBatch(rows, 1000).value();
  }
  db::MessageState stateSeenByReader(db::MessageId id) {
    return db::OutboundQueue(*reader).get(id).value().state;
  }
  // Commits on the store's connection, counted by SQLite's commit hook.
  int commits = 0;
  void countCommits() {
    sqlite3_commit_hook(
        db->handle(), [](void* count) { return ++*static_cast<int*>(count), 0; }, &commits);
  }
};

}  // namespace

TEST_CASE("Sent and acknowledged messages of a turn reach the file only when the store is flushed") {
  StoreFixture f;
  auto ids = f.queue(3);
  f.store->markSent("0001", {ids[0], ids[1]}, 1, 2000);
  f.store->markSent("0001", {ids[2]}, 2, 2000);
  CHECK(f.scheduled == 1);
  CHECK(f.stateSeenByReader(ids[0]) == db::MessageState::kQueued);
  f.store->flush();
  CHECK(f.stateSeenByReader(ids[0]) == db::MessageState::kSent);
  CHECK(f.stateSeenByReader(ids[2]) == db::MessageState::kSent);
  CHECK(db::OutboundQueue(*f.reader).get(ids[2])->association_id == 2);
}

TEST_CASE("Everything collected in one turn on several associations commits once") {
  StoreFixture f;
  auto ids = f.queue(6);
  f.store->markSent("0001", {ids[0], ids[1]}, 1, 2000);
  f.store->flush();
  f.countCommits();
  f.store->acknowledge("0001", ids[0], 2100);
  f.store->acknowledge("0001", ids[1], 2100);
  f.store->markSent("0001", {ids[2], ids[3]}, 1, 2100);
  f.store->markSent("0001", {ids[4]}, 2, 2100);
  f.store->markSent("0001", {ids[5]}, 3, 2100);
  f.store->flush();
  CHECK(f.commits == 1);
  CHECK(f.stateSeenByReader(ids[0]) == db::MessageState::kAcknowledged);
  CHECK(f.stateSeenByReader(ids[5]) == db::MessageState::kSent);
}

TEST_CASE("Delivery rounds of several providers served from memory share one transaction") {
  StoreFixture f;
  REQUIRE(db::ProviderStore(*f.db).add({"0002", "Provider 0002", db::SystemType::kSoa, true}).isOk());
  auto a = f.queue(2, "0001");
  auto b = f.queue(2, "0002");
  // The first reads load each provider's ready messages (SQLite, core/ready_queue.h).
  REQUIRE(f.store->nextQueued("0001", 1, 10)->size() == 2);
  REQUIRE(f.store->nextQueued("0002", 1, 10)->size() == 2);
  f.countCommits();
  f.store->markSent("0001", {a[0], a[1]}, 1, 2000);
  // The next provider's round reads from memory: what 0001's round collected waits.
  auto next = f.store->nextQueued("0002", 1, 10);
  REQUIRE(next.isOk());
  CHECK(next->size() == 2);
  CHECK(f.commits == 0);
  CHECK(f.stateSeenByReader(a[0]) == db::MessageState::kQueued);
  f.store->markSent("0002", {b[0], b[1]}, 2, 2000);
  f.store->flush();
  CHECK(f.commits == 1);
  CHECK(f.stateSeenByReader(a[1]) == db::MessageState::kSent);
  CHECK(f.stateSeenByReader(b[1]) == db::MessageState::kSent);
}

TEST_CASE("A read of the queue sees the sends collected before it") {
  StoreFixture f;
  auto ids = f.queue(2);
  f.store->markSent("0001", {ids[0]}, 1, 2000);
  auto next = f.store->nextQueued("0001", 1, 10);
  REQUIRE(next.isOk());
  REQUIRE(next->size() == 1);
  CHECK(next->front().id == ids[1]);
}

TEST_CASE("A message sent and answered within one turn ends acknowledged") {
  StoreFixture f;
  auto ids = f.queue(1);
  f.store->markSent("0001", {ids[0]}, 1, 2000);
  f.store->acknowledge("0001", ids[0], 2001);
  f.store->flush();
  auto row = db::OutboundQueue(*f.reader).get(ids[0]);
  CHECK(row->state == db::MessageState::kAcknowledged);
  CHECK(row->attempts == 1);
}

TEST_CASE("A refused write in a turn is dropped alone and the rest of the turn commits") {
  StoreFixture f;
  auto ids = f.queue(3);
  f.store->markSent("0001", {ids[0]}, 1, 2000);
  f.store->flush();
  f.store->markSent("0001", {ids[0], ids[1]}, 2, 2100);  // ids[0] is already sent: refused
  f.store->markSent("0001", {ids[2]}, 3, 2100);
  f.store->acknowledge("0001", ids[0], 2200);
  f.store->flush();
  CHECK(f.store->healthy());
  CHECK(f.stateSeenByReader(ids[0]) == db::MessageState::kAcknowledged);
  CHECK(f.stateSeenByReader(ids[1]) == db::MessageState::kQueued);
  CHECK(f.stateSeenByReader(ids[2]) == db::MessageState::kSent);
}

TEST_CASE("Moving a message to another association first records that it was sent") {
  StoreFixture f;
  auto ids = f.queue(1);
  f.store->markSent("0001", {ids[0]}, 1, 2000);
  f.store->moveSent("0001", ids[0], 2);
  auto row = db::OutboundQueue(*f.reader).get(ids[0]);
  CHECK(row->state == db::MessageState::kSent);
  CHECK(row->association_id == 2);
  CHECK(row->retransmission);
}

namespace {

// A node's fence on the fixture's store: this node is "a", holding 0001's lease at
// `epoch` (none when nullopt); fenced providers are recorded.
struct FencedStore : StoreFixture {
  std::optional<std::int64_t> epoch;
  std::vector<std::string> fenced;
  FencedStore() {
    REQUIRE(db::ProviderStore(*db).add({"0002", "Provider 0002", db::SystemType::kSoa, true}).isOk());
    auto taken = db::LeaseStore(*db).acquire("0001", "a", 1000, 5000);
    REQUIRE(taken.isOk());
    epoch = taken->lease.epoch;
    REQUIRE(db::LeaseStore(*db).acquire("0002", "a", 1000, 5000).isOk());
    DeliveryStore::Fence fence;
    fence.owner = "a";
    fence.epoch_of = [this](const std::string& spid) { return spid == "0001" ? epoch : std::optional<std::int64_t>(1); };
    fence.on_fenced = [this](const std::string& spid, const db::Status& why) {
      CHECK(why.code() == db::Status::Code::kFenced);
      fenced.push_back(spid);
    };
    store->setFence(std::move(fence));
  }
  db::MessageId queueFor(const std::string& spid) {
    return db::OutboundQueue(*db).appendBatch(std::vector<db::NewMessage>{db::NewMessage{spid, 1, 0, {0x30, 0x00}}}, 1000)
        .value()
        .front();
  }
};

}  // namespace

TEST_CASE("Progress writes under the lease this node holds are recorded") {
  FencedStore f;
  const db::MessageId id = f.queueFor("0001");
  f.store->markSent("0001", {id}, 1, 2000);
  f.store->acknowledge("0001", id, 2100);
  f.store->flush();
  CHECK(f.stateSeenByReader(id) == db::MessageState::kAcknowledged);
  CHECK(f.fenced.empty());
  CHECK(f.store->figures().fenced_writes == 0);
}

TEST_CASE("Progress writes for a provider another node took over are refused and reported, the rest commit") {
  FencedStore f;
  const db::MessageId mine = f.queueFor("0002");
  const db::MessageId lost = f.queueFor("0001");
  // Node b takes 0001 after a's lease ran out (a was paused).
  REQUIRE(db::LeaseStore(*f.reader).acquire("0001", "b", 7000, 5000).isOk());
  f.store->markSent("0001", {lost}, 1, 7100);
  f.store->markSent("0002", {mine}, 2, 7100);
  f.store->flush();
  CHECK(f.stateSeenByReader(lost) == db::MessageState::kQueued);  // b delivers it, not a
  CHECK(f.stateSeenByReader(mine) == db::MessageState::kSent);
  CHECK(f.fenced == std::vector<std::string>{"0001"});
  CHECK(f.store->figures().fenced_writes == 1);
  CHECK(f.store->healthy());  // a lost lease is not a storage failure
}

TEST_CASE("A provider whose writes the fence refused reads fenced until one of its writes commits again") {
  FencedStore f;
  const db::MessageId first = f.queueFor("0001");
  const db::MessageId other = f.queueFor("0002");
  REQUIRE(db::LeaseStore(*f.reader).acquire("0001", "b", 7000, 5000).isOk());
  f.store->markSent("0001", {first}, 1, 7100);
  f.store->markSent("0002", {other}, 2, 7100);
  f.store->flush();
  CHECK(f.store->fenced("0001"));
  CHECK_FALSE(f.store->fenced("0002"));
  // b's lease ran out and a took it again, at a new epoch.
  auto again = db::LeaseStore(*f.reader).acquire("0001", "a", 20'000, 5000);
  REQUIRE(again.isOk());
  f.epoch = again->lease.epoch;
  f.store->markSent("0001", {first}, 1, 20'100);
  f.store->flush();
  CHECK_FALSE(f.store->fenced("0001"));
  CHECK(f.stateSeenByReader(first) == db::MessageState::kSent);
}

TEST_CASE("A write outside a turn for a provider whose lease this node does not hold is refused") {
  FencedStore f;
  const db::MessageId id = f.queueFor("0001");
  f.store->markSent("0001", {id}, 1, 2000);
  f.store->flush();
  f.epoch.reset();  // the lease was forgotten (lost)
  f.store->markFailed("0001", id, "test", 2100);
  CHECK(f.stateSeenByReader(id) == db::MessageState::kSent);
  CHECK(f.fenced == std::vector<std::string>{"0001"});
}

namespace {

// Statements the store's connection runs that read queue rows back (sqlite3_trace_v2).
struct RowReads {
  int count = 0;
  explicit RowReads(sqlite3* handle) {
    sqlite3_trace_v2(
        handle, SQLITE_TRACE_STMT,
        [](unsigned, void* self, void* statement, void*) {
          const char* sql = sqlite3_sql(static_cast<sqlite3_stmt*>(statement));
          if (sql != nullptr && std::string_view(sql).find("FROM outbound_queue AS q") != std::string_view::npos) {
            ++static_cast<RowReads*>(self)->count;
          }
          return 0;
        },
        this);
  }
};

}  // namespace

TEST_CASE("A turn's sent and acknowledged writes of messages the store handed out read no queue row back") {
  StoreFixture f;
  auto ids = f.queue(3);
  auto handed = f.store->nextQueued("0001", 1, 10);
  REQUIRE(handed->size() == 3);
  CHECK(f.store->figures().known_states == 3);
  RowReads reads(f.db->handle());
  // Times below kSettleEveryMs: no settle runs (it reads; see the settled-mark cases).
  f.store->markSent("0001", {ids[0], ids[1], ids[2]}, 1, 100);
  f.store->flush();
  f.store->acknowledge("0001", ids[0], 200);
  f.store->acknowledge("0001", ids[1], 200);
  f.store->flush();
  CHECK(f.store->figures().settles == 0);
  CHECK(reads.count == 0);
  CHECK(f.store->figures().known_states == 1);  // ids[2], in flight
  CHECK(f.stateSeenByReader(ids[0]) == db::MessageState::kAcknowledged);
  CHECK(f.stateSeenByReader(ids[2]) == db::MessageState::kSent);
}

TEST_CASE("A write naming a message the store did not hand out reads that message's state") {
  StoreFixture f;
  auto ids = f.queue(2);
  RowReads reads(f.db->handle());
  f.store->markSent("0001", {ids[0], ids[1]}, 1, 2000);
  f.store->flush();
  CHECK(reads.count == 1);
  CHECK(f.stateSeenByReader(ids[1]) == db::MessageState::kSent);
  CHECK(f.store->figures().known_states == 2);  // what it wrote, it knows
}

TEST_CASE("A sent write refused from what the store knows leaves every message it names queued") {
  StoreFixture f;
  auto ids = f.queue(2);
  REQUIRE(f.store->nextQueued("0001", 1, 10)->size() == 2);
  f.store->markSent("0001", {ids[0]}, 1, 2000);
  f.store->flush();
  RowReads reads(f.db->handle());
  f.store->markSent("0001", {ids[0], ids[1]}, 2, 2100);  // ids[0] is already sent: refused whole
  f.store->flush();
  CHECK(reads.count == 0);
  CHECK(f.stateSeenByReader(ids[0]) == db::MessageState::kSent);
  CHECK(f.stateSeenByReader(ids[1]) == db::MessageState::kQueued);
  CHECK(f.store->figures().known_states == 0);  // a refusal forgets the provider's states
  CHECK(db::OutboundQueue(*f.reader).get(ids[0])->association_id == 1);
}

TEST_CASE("Messages put back to queued are read again before the store marks them sent") {
  StoreFixture f;
  auto ids = f.queue(1);
  REQUIRE(f.store->nextQueued("0001", 1, 10)->size() == 1);
  f.store->markSent("0001", {ids[0]}, 1, 2000);
  f.store->flush();
  f.store->requeueAssociation("0001", 1);
  CHECK(f.store->figures().known_states == 0);
  RowReads reads(f.db->handle());
  f.store->markSent("0001", {ids[0]}, 2, 2100);
  f.store->flush();
  CHECK(reads.count == 1);
  auto row = db::OutboundQueue(*f.reader).get(ids[0]);
  CHECK(row->state == db::MessageState::kSent);
  CHECK(row->attempts == 2);
  CHECK(row->retransmission);
}

TEST_CASE("A provider's settled mark moves once enough of its messages are acknowledged in committed turns") {
  StoreFixture f;
  auto ids = f.queue(static_cast<int>(kSettleEveryAcks) + 1);
  f.store->markSent("0001", ids, 1, 2000);
  f.store->acknowledge("0001", ids[0], 2100);
  f.store->flush();
  CHECK(f.store->figures().settles == 1);  // the provider's first acknowledgement: no settle ran before
  for (std::size_t i = 1; i + 1 < ids.size(); ++i) f.store->acknowledge("0001", ids[i], 2200);
  f.store->flush();
  CHECK(f.store->figures().settles == 1);  // one short of kSettleEveryAcks, within kSettleEveryMs
  CHECK(db::ProgressLog(*f.reader).settledThrough("0001").value() == ids[0]);
  f.store->acknowledge("0001", ids.back(), 2300);
  f.store->flush();
  CHECK(f.store->figures().settles == 2);
  CHECK(db::ProgressLog(*f.reader).settledThrough("0001").value() == ids.back());
  CHECK(f.store->nextQueued("0001", 1, 10)->empty());
}

TEST_CASE("A provider's settled mark moves a second after its last move once any acknowledgement came") {
  StoreFixture f;
  auto ids = f.queue(2);
  f.store->markSent("0001", ids, 1, 2000);
  f.store->acknowledge("0001", ids[0], 2100);
  f.store->flush();
  CHECK(f.store->figures().settles == 1);  // the first settle of the provider: none ran before
  f.store->acknowledge("0001", ids[1], 2100 + kSettleEveryMs - 1);
  f.store->flush();
  CHECK(f.store->figures().settles == 1);
  CHECK(db::ProgressLog(*f.reader).settledThrough("0001").value() == ids[0]);
  f.store->acknowledge("0001", ids[1], 2100 + kSettleEveryMs);
  f.store->flush();
  CHECK(f.store->figures().settles == 2);
  CHECK(db::ProgressLog(*f.reader).settledThrough("0001").value() == ids[1]);
}

TEST_CASE("A turn whose settle meets an unwritable database commits nothing, sends nothing more, and settles "
          "once the database takes writes again") {
  StoreFixture f;
  auto ids = f.queue(static_cast<int>(kSettleEveryAcks) + 2);
  auto first = f.store->nextQueued("0001", 1, ids.size()).value();
  REQUIRE(first.size() == ids.size());
  f.store->markSent("0001", ids, 1, 2000);
  f.store->acknowledge("0001", ids[0], 2100);
  f.store->flush();  // the first settle: mark at ids[0]
  REQUIRE(db::ProgressLog(*f.reader).settledThrough("0001").value() == ids[0]);
  // The database refuses writes (SQLITE_READONLY, a storage failure as a full disk is).
  REQUIRE(f.db->execute("PRAGMA query_only = ON").isOk());
  for (std::size_t i = 1; i < ids.size(); ++i) f.store->acknowledge("0001", ids[i], 2200);
  f.store->flush();  // 257 acknowledgements: this turn would settle
  CHECK_FALSE(f.store->healthy());
  CHECK(f.store->figures().backlog > 0);
  CHECK(db::ProgressLog(*f.reader).settledThrough("0001").value() == ids[0]);
  CHECK(f.stateSeenByReader(ids[1]) == db::MessageState::kSent);
  // Writable again: the backlog is applied and the next turn settles past all of them.
  REQUIRE(f.db->execute("PRAGMA query_only = OFF").isOk());
  CHECK(f.store->retry());
  CHECK(f.store->healthy());
  CHECK(f.stateSeenByReader(ids.back()) == db::MessageState::kAcknowledged);
  auto more = f.queue(1);
  f.store->markSent("0001", more, 1, 3000);
  f.store->acknowledge("0001", more[0], 3000 + kSettleEveryMs);
  f.store->flush();
  CHECK(db::ProgressLog(*f.reader).settledThrough("0001").value() == more[0]);
  CHECK(f.store->nextQueued("0001", 1, 10)->empty());
}
