#include "db/lease_store.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "db/outbound_queue.h"
#include "db/transaction.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

constexpr TimeMs kTtl = 5000;

struct LeaseFixture {
  TempDir dir;
  std::unique_ptr<Database> a = openFresh(dir);  // node "a"'s connection
  std::unique_ptr<Database> b = openFresh(dir);  // node "b"'s, to the same database
  LeaseFixture() { addProvider(*a, "0001"); }

  LeaseOutcome acquire(Database& db, const std::string& owner, TimeMs now) {
    auto outcome = LeaseStore(db).acquire("0001", owner, now, kTtl);
    INFO(outcome.status().toString());
    REQUIRE(outcome.isOk());
    return *outcome;
  }
  std::vector<MessageId> queueAndSend(std::size_t n, AssociationId association) {
    std::vector<NewMessage> messages;
    for (std::size_t i = 0; i < n; ++i) {
      messages.push_back(NewMessage{"0001", 1, 0, Bytes{0x30, 0x01, static_cast<std::uint8_t>(i)}});
    }
    OutboundQueue queue(*a);
    auto ids = queue.appendBatch(messages, 100);
    REQUIRE(ids.isOk());
    REQUIRE(queue.markSent(*ids, association, 200).isOk());
    return *ids;
  }
};

}  // namespace

TEST_CASE("The first node to ask for a provider's lease gets it with epoch 1") {
  LeaseFixture f;
  LeaseOutcome outcome = f.acquire(*f.a, "a", 1000);
  CHECK(outcome.acquired);
  CHECK(outcome.lease == Lease{"0001", "a", 1, 1000 + kTtl});
  CHECK_FALSE(outcome.previous_owner.has_value());
  auto stored = LeaseStore(*f.b).get("0001");
  REQUIRE(stored.isOk());
  CHECK(*stored == std::optional<Lease>(outcome.lease));
}

TEST_CASE("A live lease of another node is refused and names its holder") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  LeaseOutcome refused = f.acquire(*f.b, "b", 1000 + kTtl - 1);
  CHECK_FALSE(refused.acquired);
  CHECK(refused.lease.owner == "a");
  CHECK(refused.lease.epoch == 1);
  CHECK(refused.lease.expires_at == 1000 + kTtl);
}

TEST_CASE("An expired lease goes to the next node with the next epoch and its in-flight messages queued again") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  std::vector<MessageId> ids = f.queueAndSend(3, 7);
  LeaseOutcome taken = f.acquire(*f.b, "b", 1000 + kTtl);
  CHECK(taken.acquired);
  CHECK(taken.lease.epoch == 2);
  CHECK(taken.previous_owner == std::optional<std::string>("a"));
  CHECK(taken.requeued == 3);
  auto next = OutboundQueue(*f.b).nextQueued("0001", 1, 10);
  REQUIRE(next.isOk());
  REQUIRE(next->size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK((*next)[i].id == ids[i]);  // in their original order
    CHECK((*next)[i].retransmission);
  }
}

TEST_CASE("A node asking again for its own lease takes the next epoch and gets its earlier in-flight messages back") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  f.queueAndSend(2, 7);
  LeaseOutcome again = f.acquire(*f.a, "a", 1001);  // npacd restarted within the lease
  CHECK(again.acquired);
  CHECK(again.lease.epoch == 2);
  CHECK(again.requeued == 2);
}

TEST_CASE("Renewing a lease that another node took is refused as fenced, naming the new holder") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  REQUIRE(LeaseStore(*f.a).renew("0001", "a", 1, 2000, kTtl).isOk());
  f.acquire(*f.b, "b", 2000 + kTtl);
  Status lost = LeaseStore(*f.a).renew("0001", "a", 1, 2000 + kTtl + 1, kTtl);
  CHECK(lost.code() == Status::Code::kFenced);
  CHECK_THAT(lost.message(), Catch::Contains("now held by node 'b' with epoch 2"));
}

TEST_CASE("Renewing a live lease moves its expiry and keeps its epoch") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  REQUIRE(LeaseStore(*f.a).renew("0001", "a", 1, 4000, kTtl).isOk());
  auto stored = LeaseStore(*f.a).get("0001");
  REQUIRE(stored.isOk());
  CHECK(*stored == std::optional<Lease>(Lease{"0001", "a", 1, 4000 + kTtl}));
  // Still live at the first expiry: another node is refused.
  CHECK_FALSE(f.acquire(*f.b, "b", 1000 + kTtl).acquired);
}

TEST_CASE("The fence passes the current epoch and refuses a stale one") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  CHECK(LeaseStore(*f.a).fence("0001", "a", 1).isOk());
  f.acquire(*f.b, "b", 1000 + kTtl);
  CHECK(LeaseStore(*f.a).fence("0001", "a", 1).code() == Status::Code::kFenced);
  CHECK(LeaseStore(*f.b).fence("0001", "b", 2).isOk());
  CHECK(LeaseStore(*f.a).fence("0001", "b", 1).code() == Status::Code::kFenced);  // epoch matters
}

TEST_CASE("A released lease can be taken by another node at once") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  REQUIRE(LeaseStore(*f.a).release("0001", "a", 1, 1500).isOk());
  LeaseOutcome taken = f.acquire(*f.b, "b", 1500);
  CHECK(taken.acquired);
  CHECK(taken.lease.epoch == 2);
}

TEST_CASE("Releasing a lease another node holds changes nothing") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  f.acquire(*f.b, "b", 1000 + kTtl);
  REQUIRE(LeaseStore(*f.a).release("0001", "a", 1, 1000 + kTtl + 1).isOk());
  auto stored = LeaseStore(*f.b).get("0001");
  REQUIRE(stored.isOk());
  CHECK(*stored == std::optional<Lease>(Lease{"0001", "b", 2, 1000 + 2 * kTtl}));
}

TEST_CASE("A lease for an unprovisioned provider is refused by the database") {
  LeaseFixture f;
  auto outcome = LeaseStore(*f.a).acquire("0999", "a", 1000, kTtl);
  CHECK(outcome.status().code() == Status::Code::kConstraint);
}

TEST_CASE("A lease needs an owner and a positive duration") {
  LeaseFixture f;
  CHECK(LeaseStore(*f.a).acquire("0001", "", 1000, kTtl).status().code() == Status::Code::kInvalidArgument);
  CHECK(LeaseStore(*f.a).acquire("0001", "a", 1000, 0).status().code() == Status::Code::kInvalidArgument);
}

TEST_CASE("On SQLite npacd numbers its associations itself", "[sqlite]") {
  LeaseFixture f;
  CHECK(LeaseStore(*f.a).nextAssociationId().status().code() == Status::Code::kNotFound);
}

TEST_CASE("Two nodes drawing association ids never get the same one", "[postgres]") {
  LeaseFixture f;
  std::set<std::int64_t> seen;
  for (int i = 0; i < 50; ++i) {
    for (Database* db : {f.a.get(), f.b.get()}) {
      auto id = LeaseStore(*db).nextAssociationId();
      REQUIRE(id.isOk());
      CHECK(seen.insert(*id).second);
    }
  }
}

TEST_CASE("A takeover waits for a write that passed the fence, then queues that write's messages again",
          "[postgres]") {
  LeaseFixture f;
  f.acquire(*f.a, "a", 1000);
  OutboundQueue queue(*f.a);
  auto ids = queue.appendBatch(std::vector<NewMessage>{NewMessage{"0001", 1, 0, Bytes{0x30, 0x00}}}, 100);
  REQUIRE(ids.isOk());
  // Node a's progress write: fence, then mark sent, not yet committed.
  Transaction write(*f.a);
  REQUIRE(write.begin().isOk());
  REQUIRE(LeaseStore(*f.a).fence("0001", "a", 1).isOk());
  REQUIRE(queue.markSent(ids->front(), 7, 200).isOk());
  // Node b takes the expired lease meanwhile: it must wait on the row a read FOR SHARE.
  auto takeover = std::async(std::launch::async, [&] {
    return LeaseStore(*f.b).acquire("0001", "b", 1000 + kTtl, kTtl);
  });
  // Bounded: PostgreSQL shows b waiting for a lock within a few seconds at most.
  CHECK(someoneWaitsForALock(f.dir));
  CHECK(takeover.wait_for(std::chrono::seconds(0)) == std::future_status::timeout);
  REQUIRE(write.commit().isOk());
  auto taken = takeover.get();
  REQUIRE(taken.isOk());
  CHECK(taken->acquired);
  CHECK(taken->requeued == 1);  // the message a recorded as sent is delivered again by b
  auto row = OutboundQueue(*f.b).get(ids->front());
  REQUIRE(row.isOk());
  CHECK(row->state == MessageState::kQueued);
  CHECK(row->retransmission);
}
