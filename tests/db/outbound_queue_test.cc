#include "db/outbound_queue.h"

#include <catch2/catch.hpp>

#include "db/progress_log.h"
#include "db/transaction.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

constexpr std::uint32_t kNetworkData = 0x2;

NewMessage message(const std::string& spid, std::uint8_t tag, int priority = 0,
                   std::uint32_t functions = kSoaMgmt) {
  return NewMessage{spid, functions, priority, Bytes{0x30, 0x03, 0x02, 0x01, tag}};
}

std::vector<MessageId> idsOf(const std::vector<QueuedMessage>& messages) {
  std::vector<MessageId> ids;
  for (const auto& m : messages) ids.push_back(m.id);
  return ids;
}

struct QueueFixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  OutboundQueue queue{*db};
  QueueFixture() {
    addProvider(*db, "0001");
    addProvider(*db, "0002");
  }
  std::vector<MessageId> append(std::vector<NewMessage> messages, TimeMs now = 1000) {
    auto ids = queue.appendBatch(messages, now);
    INFO(ids.status().toString());
    REQUIRE(ids.isOk());
    return *ids;
  }
};

}  // namespace

TEST_CASE("An appended message reads back with its PDU bytes and queued state") {
  QueueFixture f;
  NewMessage m{"0001", kSoaMgmt | kNetworkData, 3, Bytes{0x00, 0xff, 0x10, 0x00}};
  auto ids = f.append({m}, 1234);
  auto got = f.queue.get(ids[0]);
  REQUIRE(got.isOk());
  CHECK(got->spid == "0001");
  CHECK(got->function_mask == (kSoaMgmt | kNetworkData));
  CHECK(got->priority == 3);
  CHECK(got->pdu == m.pdu);
  CHECK(got->state == MessageState::kQueued);
  CHECK(got->attempts == 0);
  CHECK(got->created_at == 1234);
  CHECK_FALSE(got->sent_at.has_value());
  CHECK_FALSE(got->retransmission);
}

TEST_CASE("A batch append returns increasing ids in input order") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0002", 2), message("0001", 3)});
  REQUIRE(ids.size() == 3);
  CHECK(ids[0] < ids[1]);
  CHECK(ids[1] < ids[2]);
  CHECK(f.queue.get(ids[1])->pdu.back() == 2);
}

TEST_CASE("A batch with a message for an unknown provider writes nothing") {
  QueueFixture f;
  auto ids = f.queue.appendBatch(std::vector{message("0001", 1), message("9999", 2)}, 1);
  REQUIRE_FALSE(ids.isOk());
  CHECK(ids.status().code() == Status::Code::kConstraint);
  CHECK(ids.status().message().find("9999") != std::string::npos);
  CHECK(f.queue.count(MessageState::kQueued).value() == 0);
}

TEST_CASE("A message with a malformed SPID is refused before touching the database") {
  QueueFixture f;
  auto ids = f.queue.appendBatch(std::vector{message("01", 1)}, 1);
  CHECK(ids.status().code() == Status::Code::kInvalidArgument);
}

TEST_CASE("Queued messages come out first-in first-out per provider") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0002", 2), message("0001", 3),
                       message("0001", 4)});
  auto next = f.queue.nextQueued("0001", kSoaMgmt, 10);
  REQUIRE(next.isOk());
  CHECK(idsOf(*next) == std::vector<MessageId>{ids[0], ids[2], ids[3]});
  auto limited = f.queue.nextQueued("0001", kSoaMgmt, 2);
  CHECK(idsOf(*limited) == std::vector<MessageId>{ids[0], ids[2]});
}

TEST_CASE("Higher priority is sent first and FIFO holds within a priority") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1, 0), message("0001", 2, 5), message("0001", 3, 0),
                       message("0001", 4, 5)});
  auto next = f.queue.nextQueued("0001", kSoaMgmt, 10);
  CHECK(idsOf(*next) == std::vector<MessageId>{ids[1], ids[3], ids[0], ids[2]});
}

TEST_CASE("Only messages whose functions the association carries are offered (NANC 111)") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1, 0, kSoaMgmt), message("0001", 2, 0, kNetworkData),
                       message("0001", 3, 0, kSoaMgmt | kNetworkData)});
  CHECK(idsOf(*f.queue.nextQueued("0001", kSoaMgmt, 10)) == std::vector<MessageId>{ids[0]});
  CHECK(idsOf(*f.queue.nextQueued("0001", kNetworkData, 10)) == std::vector<MessageId>{ids[1]});
  CHECK(idsOf(*f.queue.nextQueued("0001", kSoaMgmt | kNetworkData, 10)) == ids);
}

TEST_CASE("Marking sent records the association, time and attempt") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1)});
  REQUIRE(f.queue.markSent(ids[0], 77, 2000).isOk());
  auto got = f.queue.get(ids[0]);
  CHECK(got->state == MessageState::kSent);
  CHECK(got->association_id == 77);
  CHECK(got->sent_at == 2000);
  CHECK(got->attempts == 1);
  CHECK(f.queue.nextQueued("0001", kSoaMgmt, 10)->empty());
}

TEST_CASE("Marking a message sent twice is refused with its current state") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1)});
  REQUIRE(f.queue.markSent(ids[0], 1, 2000).isOk());
  Status again = f.queue.markSent(ids[0], 1, 2001);
  CHECK(again.code() == Status::Code::kInvalidArgument);
  CHECK(again.message().find("is sent") != std::string::npos);
}

TEST_CASE("Acknowledging is idempotent and an unknown id is not found") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1)});
  REQUIRE(f.queue.markSent(ids[0], 1, 2000).isOk());
  REQUIRE(f.queue.markAcknowledged(ids[0], 3000).isOk());
  REQUIRE(f.queue.markAcknowledged(ids[0], 4000).isOk());
  CHECK(f.queue.get(ids[0])->acknowledged_at == 3000);
  CHECK(f.queue.markAcknowledged(ids[0] + 100, 1).code() == Status::Code::kNotFound);
}

TEST_CASE("A batch acknowledgement with an unknown id acknowledges nothing") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2)});
  REQUIRE(f.queue.markSent(ids, 1, 2000).isOk());
  std::vector<MessageId> acks{ids[0], ids[1] + 50};
  CHECK(f.queue.markAcknowledged(acks, 3000).code() == Status::Code::kNotFound);
  CHECK(f.queue.count(MessageState::kAcknowledged).value() == 0);
  REQUIRE(f.queue.markAcknowledged(ids, 3000).isOk());
  CHECK(f.queue.count(MessageState::kAcknowledged).value() == 2);
}

TEST_CASE("A batch marked sent records every message on the association") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2), message("0001", 3)});
  REQUIRE(f.queue.markSent(ids, 9, 2000).isOk());
  for (MessageId id : ids) {
    auto got = f.queue.get(id);
    CHECK(got->state == MessageState::kSent);
    CHECK(got->association_id == 9);
    CHECK(got->sent_at == 2000);
    CHECK(got->attempts == 1);
  }
}

TEST_CASE("A batch marked sent with one message not queued changes none and names it") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2), message("0001", 3)});
  REQUIRE(f.queue.markSent(ids[1], 1, 1500).isOk());
  Status refused = f.queue.markSent(ids, 2, 2000);
  CHECK(refused.code() == Status::Code::kInvalidArgument);
  CHECK(refused.message().find("message " + std::to_string(ids[1]) + " is sent") != std::string::npos);
  CHECK(f.queue.get(ids[0])->state == MessageState::kQueued);
  CHECK(f.queue.get(ids[2])->state == MessageState::kQueued);
  CHECK(f.queue.get(ids[1])->association_id == 1);
}

TEST_CASE("A batch marked sent naming one message twice is refused") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2)});
  std::vector<MessageId> twice{ids[0], ids[1], ids[0]};
  CHECK(f.queue.markSent(twice, 1, 2000).code() == Status::Code::kInvalidArgument);
  CHECK(f.queue.count(MessageState::kSent).value() == 0);
}

TEST_CASE("A batch acknowledgement repeating an acknowledged message acknowledges the rest") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2), message("0001", 3)});
  REQUIRE(f.queue.markSent(ids, 1, 2000).isOk());
  REQUIRE(f.queue.markAcknowledged(ids[0], 2500).isOk());
  std::vector<MessageId> acks{ids[0], ids[1], ids[2], ids[2]};
  REQUIRE(f.queue.markAcknowledged(acks, 3000).isOk());
  CHECK(f.queue.count(MessageState::kAcknowledged).value() == 3);
  CHECK(f.queue.get(ids[0])->acknowledged_at == 2500);
  CHECK(f.queue.get(ids[2])->acknowledged_at == 3000);
}

TEST_CASE("Marking failed keeps the reason and time") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1)});
  REQUIRE(f.queue.markFailed(ids[0], "retry attempts exhausted", 5000).isOk());
  auto got = f.queue.get(ids[0]);
  CHECK(got->state == MessageState::kFailed);
  CHECK(got->failure_reason == "retry attempts exhausted");
  CHECK(got->failed_at == 5000);
  CHECK(f.queue.markFailed(ids[0], "again", 5001).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("Losing an association re-queues only what it had in flight, as retransmissions") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2), message("0001", 3),
                       message("0001", 4)});
  REQUIRE(f.queue.markSent(std::vector{ids[0], ids[1]}, 10, 2000).isOk());
  REQUIRE(f.queue.markSent(ids[2], 11, 2000).isOk());
  REQUIRE(f.queue.markAcknowledged(ids[1], 2500).isOk());
  auto requeued = f.queue.requeueAssociation(10);
  REQUIRE(requeued.isOk());
  CHECK(*requeued == 1);  // ids[0]; ids[1] was acknowledged, ids[2] is on association 11
  auto first = f.queue.get(ids[0]);
  CHECK(first->state == MessageState::kQueued);
  CHECK(first->retransmission);
  CHECK(first->association_id == 10);  // last used
  CHECK(f.queue.get(ids[2])->state == MessageState::kSent);
  // The re-queued message goes out before the one that was never sent (FIFO by id).
  CHECK(idsOf(*f.queue.nextQueued("0001", kSoaMgmt, 10)) == std::vector<MessageId>{ids[0], ids[3]});
  REQUIRE(f.queue.markSent(ids[0], 12, 3000).isOk());
  CHECK(f.queue.get(ids[0])->attempts == 2);
}

TEST_CASE("A sent message moved to another association is not re-queued when the first one is lost") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2)});
  REQUIRE(f.queue.markSent(std::vector{ids[0], ids[1]}, 10, 2000).isOk());
  REQUIRE(f.queue.moveSent(ids[0], 11).isOk());
  CHECK(f.queue.get(ids[0])->association_id == 11);
  CHECK(f.queue.get(ids[0])->retransmission);
  CHECK(*f.queue.requeueAssociation(10) == 1);  // ids[1] only
  CHECK(f.queue.get(ids[0])->state == MessageState::kSent);
  CHECK(*f.queue.requeueAssociation(11) == 1);  // now ids[0]
  CHECK(f.queue.get(ids[0])->state == MessageState::kQueued);
}

TEST_CASE("Moving a message that is not sent is refused with the state it is in") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1)});
  Status moved = f.queue.moveSent(ids[0], 11);
  CHECK(moved.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(moved.toString(), Catch::Contains("is queued"));
  CHECK(f.queue.moveSent(999, 11).code() == Status::Code::kNotFound);
}

TEST_CASE("Re-queueing named messages moves only the sent ones back, as retransmissions") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2), message("0001", 3)});
  REQUIRE(f.queue.markSent(std::vector{ids[0], ids[1]}, 10, 2000).isOk());
  REQUIRE(f.queue.markAcknowledged(ids[1], 2100).isOk());
  auto moved = f.queue.requeue(std::vector{ids[0], ids[1], ids[2]});
  REQUIRE(moved.isOk());
  CHECK(*moved == 1);
  CHECK(f.queue.get(ids[0])->state == MessageState::kQueued);
  CHECK(f.queue.get(ids[0])->retransmission);
  CHECK(f.queue.get(ids[1])->state == MessageState::kAcknowledged);
  CHECK(f.queue.get(ids[2])->state == MessageState::kQueued);
  CHECK_FALSE(f.queue.get(ids[2])->retransmission);
}

TEST_CASE("Recovery by time range returns a provider's messages created from T1 up to T2 excluded") {
  QueueFixture f;
  auto early = f.append({message("0001", 1)}, 1000);
  auto middle = f.append({message("0001", 2), message("0002", 3)}, 2000);
  auto late = f.append({message("0001", 4)}, 3000);
  REQUIRE(f.queue.markSent(middle[0], 1, 2100).isOk());
  REQUIRE(f.queue.markAcknowledged(middle[0], 2200).isOk());
  auto range = f.queue.createdBetween("0001", 2000, 3000, 100);
  REQUIRE(range.isOk());
  CHECK(idsOf(*range) == std::vector<MessageId>{middle[0]});
  CHECK(idsOf(*f.queue.createdBetween("0001", 0, 3001, 100)) ==
        std::vector<MessageId>{early[0], middle[0], late[0]});
}

TEST_CASE("Recovery by time range returns messages of every priority in id order, up to the limit") {
  QueueFixture f;
  auto first = f.append({message("0001", 1, 0), message("0002", 2, 0), message("0001", 3, 5)}, 1000);
  auto second = f.append({message("0001", 4, 10), message("0001", 5, 0), message("0002", 6, 5)}, 2000);
  auto third = f.append({message("0001", 7, 5)}, 3000);
  CHECK(idsOf(*f.queue.createdBetween("0001", 1000, 3001, 100)) ==
        std::vector<MessageId>{first[0], first[2], second[0], second[1], third[0]});
  // The limit keeps the lowest ids, whatever their priority.
  CHECK(idsOf(*f.queue.createdBetween("0001", 1000, 3001, 3)) ==
        std::vector<MessageId>{first[0], first[2], second[0]});
  CHECK(idsOf(*f.queue.createdBetween("0002", 1500, 2500, 100)) == std::vector<MessageId>{second[2]});
  CHECK(f.queue.createdBetween("0001", 3001, 9000, 100)->empty());  // after the last message
  CHECK(f.queue.createdBetween("0001", 0, 1000, 100)->empty());     // before the first
  CHECK(f.queue.createdBetween("0001", 2000, 2000, 100)->empty());  // an empty range
}

TEST_CASE("A message appended after the clock stepped back is stamped with the newest message's time") {
  QueueFixture f;
  auto before = f.append({message("0001", 1)}, 5000);
  auto after = f.append({message("0001", 2), message("0002", 3)}, 4000);  // the clock stepped back 1 s
  CHECK(f.queue.get(before[0])->created_at == 5000);
  CHECK(f.queue.get(after[0])->created_at == 5000);
  CHECK(f.queue.get(after[1])->created_at == 5000);
  auto later = f.append({message("0001", 4)}, 6000);
  CHECK(f.queue.get(later[0])->created_at == 6000);
  // So created_at never decreases in id order, and a time range is an id range: the
  // message accepted while the clock was behind belongs to the second its stamp says.
  CHECK(idsOf(*f.queue.createdBetween("0001", 4000, 5000, 100)).empty());
  CHECK(idsOf(*f.queue.createdBetween("0001", 5000, 5001, 100)) == std::vector<MessageId>{before[0], after[0]});
  Transaction txn(*f.db);
  REQUIRE(txn.begin().isOk());
  CHECK(f.queue.appendStamp(1).value() == 6000);
  CHECK(f.queue.appendStamp(7000).value() == 7000);
}

TEST_CASE("An empty queue stamps an append with the clock's time") {
  QueueFixture f;
  Transaction txn(*f.db);
  REQUIRE(txn.begin().isOk());
  CHECK(f.queue.appendStamp(1234).value() == 1234);
}

TEST_CASE("Everything not acknowledged is listed for send-what-I-missed") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2), message("0001", 3),
                       message("0001", 4), message("0002", 5)});
  REQUIRE(f.queue.markSent(std::vector{ids[0], ids[1]}, 1, 2000).isOk());
  REQUIRE(f.queue.markAcknowledged(ids[0], 2100).isOk());
  REQUIRE(f.queue.markFailed(ids[2], "rejected", 2200).isOk());
  auto missed = f.queue.unacknowledged("0001", 100);
  REQUIRE(missed.isOk());
  CHECK(idsOf(*missed) == std::vector<MessageId>{ids[1], ids[2], ids[3]});
}

TEST_CASE("The retention purge removes only acknowledged messages older than the cutoff") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1), message("0001", 2), message("0001", 3)});
  REQUIRE(f.queue.markSent(ids, 1, 2000).isOk());
  REQUIRE(f.queue.markAcknowledged(ids[0], 3000).isOk());
  // A minute later: the purge's ranges know acknowledgement times to the minute (schema 12).
  REQUIRE(f.queue.markAcknowledged(ids[1], 3000 + ProgressLog::kNoteMs).isOk());
  REQUIRE(settleAll(f.queue, "0001", 3000 + ProgressLog::kNoteMs) == ids[1]);
  auto purged = f.queue.purgeAcknowledgedBefore(4000);
  REQUIRE(purged.isOk());
  CHECK(*purged == 1);
  CHECK(f.queue.get(ids[0]).status().isNotFound());
  CHECK(f.queue.get(ids[1]).isOk());
  CHECK(f.queue.get(ids[2]).isOk());  // sent, not acknowledged: kept whatever its age
}

TEST_CASE("Bounded purge steps over many acknowledgement records delete the lowest ids first until none is due") {
  QueueFixture f;
  std::vector<MessageId> all;
  for (int batch = 0; batch < 300; ++batch) {  // more records than one page of them
    auto ids = f.append({message("0001", 1), message("0001", 2)});
    REQUIRE(f.queue.markSent(ids, 1, 2000).isOk());
    REQUIRE(f.queue.markAcknowledged(ids, 3000 + batch).isOk());
    all.insert(all.end(), ids.begin(), ids.end());
  }
  auto late = f.append({message("0001", 3)});
  REQUIRE(f.queue.markSent(late, 1, 2000).isOk());
  REQUIRE(f.queue.markAcknowledged(late, 3000 + ProgressLog::kNoteMs).isOk());  // the next minute
  REQUIRE(settleAll(f.queue, "0001", 3000 + ProgressLog::kNoteMs) == late[0]);
  CHECK(f.queue.purgeAcknowledgedBefore(5000, 7).value() == 7);
  CHECK(f.queue.get(all[6]).status().isNotFound());
  CHECK(f.queue.get(all[7]).isOk());
  std::size_t steps = 1;
  for (;;) {
    const std::size_t purged = f.queue.purgeAcknowledgedBefore(5000, 250).value();
    if (purged == 0) break;
    ++steps;
    REQUIRE(steps < 10);
  }
  CHECK(steps == 4);  // 7, then 250, 250 and 93 of the 600
  for (MessageId id : all) CHECK(f.queue.get(id).status().isNotFound());
  CHECK(f.queue.get(late[0]).isOk());
}

TEST_CASE("Ids are never reused after the newest messages are purged") {
  QueueFixture f;
  auto ids = f.append({message("0001", 1)});
  REQUIRE(f.queue.markAcknowledged(ids[0], 1000).isOk());
  settleAll(f.queue, "0001", 1000);
  REQUIRE(f.queue.purgeAcknowledgedBefore(2000).value() == 1);
  auto next = f.append({message("0001", 2)});
  CHECK(next[0] > ids[0]);
}

TEST_CASE("An append inside a caller's transaction disappears when it rolls back") {
  QueueFixture f;
  {
    Transaction txn(*f.db);
    REQUIRE(txn.begin().isOk());
    f.append({message("0001", 1)});
  }
  CHECK(f.queue.count(MessageState::kQueued).value() == 0);
}

TEST_CASE("A provider with queued messages cannot be removed") {
  QueueFixture f;
  f.append({message("0001", 1)});
  ProviderStore providers(*f.db);
  Status status = providers.remove("0001");
  CHECK(status.code() == Status::Code::kConstraint);
  CHECK(status.message().find("outbound queue") != std::string::npos);
  CHECK(providers.get("0001").isOk());
}

namespace {

NewMessage keyed(const std::string& spid, std::uint8_t tag, const std::string& key) {
  NewMessage m = message(spid, tag);
  m.idempotency_key = key;
  return m;
}

std::size_t rowCount(Database& db) {
  auto query = db.prepare("SELECT count(*) FROM outbound_queue");
  REQUIRE(query.isOk());
  REQUIRE(query->step().isOk());
  return static_cast<std::size_t>(query->columnInt64(0));
}

}  // namespace

TEST_CASE("A keyed message appended again with the same content answers its original id and adds no row") {
  QueueFixture f;
  auto first = f.queue.appendBatchOutcomes(std::vector{keyed("0001", 1, "order-1"), keyed("0001", 2, "order-2")}, 1000);
  REQUIRE(first.isOk());
  CHECK_FALSE((*first)[0].duplicate);
  CHECK_FALSE((*first)[1].duplicate);
  // The retry also carries a new keyed message and an unkeyed one.
  auto again = f.queue.appendBatchOutcomes(
      std::vector{keyed("0001", 2, "order-2"), keyed("0001", 3, "order-3"), message("0001", 4)}, 2000);
  REQUIRE(again.isOk());
  CHECK((*again)[0] == AppendOutcome{(*first)[1].id, true});
  CHECK_FALSE((*again)[1].duplicate);
  CHECK_FALSE((*again)[2].duplicate);
  CHECK(rowCount(*f.db) == 4);
  auto original = f.queue.get((*first)[1].id);
  REQUIRE(original.isOk());
  CHECK(original->idempotency_key == "order-2");
  CHECK(original->created_at == 1000);  // the original row, untouched
}

TEST_CASE("A keyed message appended again with different content is refused and nothing of its batch is written") {
  QueueFixture f;
  auto first = f.append({keyed("0001", 1, "order-1")});
  auto changed = f.queue.appendBatch(std::vector{message("0001", 9), keyed("0001", 2, "order-1")}, 2000);
  REQUIRE_FALSE(changed.isOk());
  CHECK(changed.status().code() == Status::Code::kConstraint);
  CHECK_THAT(changed.status().message(), Catch::Contains("order-1") && Catch::Contains("different content") &&
                                             Catch::Contains("message " + std::to_string(first[0])));
  CHECK(rowCount(*f.db) == 1);
  // A different priority or function mask is different content too.
  NewMessage urgent = keyed("0001", 1, "order-1");
  urgent.priority = 5;
  CHECK(f.queue.appendBatch(std::vector{urgent}, 3000).status().code() == Status::Code::kConstraint);
}

TEST_CASE("An idempotency key is unique per provider so another provider may use the same key") {
  QueueFixture f;
  auto ids = f.append({keyed("0001", 1, "k"), keyed("0002", 1, "k")});
  CHECK(ids[0] != ids[1]);
  CHECK(rowCount(*f.db) == 2);
}

TEST_CASE("One idempotency key given twice for one provider in one append is refused") {
  QueueFixture f;
  auto twice = f.queue.appendBatch(std::vector{keyed("0001", 1, "k"), keyed("0001", 1, "k")}, 1000);
  REQUIRE_FALSE(twice.isOk());
  CHECK(twice.status().code() == Status::Code::kInvalidArgument);
  CHECK_THAT(twice.status().message(), Catch::Contains("messages 0 and 1"));
  CHECK(rowCount(*f.db) == 0);
}

TEST_CASE("A malformed idempotency key is refused with the rule it breaks") {
  QueueFixture f;
  for (const std::string& key : {std::string(), std::string(129, 'a'), std::string("has space"),
                                 std::string("tab\there"), std::string("caf\xc3\xa9")}) {
    INFO(key);
    auto refused = f.queue.appendBatch(std::vector{keyed("0001", 1, key)}, 1000);
    REQUIRE_FALSE(refused.isOk());
    CHECK(refused.status().code() == Status::Code::kInvalidArgument);
    CHECK_THAT(refused.status().message(), Catch::Contains("visible ASCII"));
  }
  CHECK(isValidIdempotencyKey(std::string(128, '~')));
  CHECK(rowCount(*f.db) == 0);
}

TEST_CASE("A key is free again once retention purged its acknowledged row") {
  QueueFixture f;
  auto first = f.append({keyed("0001", 1, "k")});
  REQUIRE(f.queue.markSent(first[0], 7, 1100).isOk());
  REQUIRE(f.queue.markAcknowledged(first[0], 1200).isOk());
  settleAll(f.queue, "0001", 1200);
  REQUIRE(f.queue.purgeAcknowledgedBefore(1300).value() == 1);
  auto second = f.queue.appendBatchOutcomes(std::vector{keyed("0001", 1, "k")}, 2000);
  REQUIRE(second.isOk());
  CHECK_FALSE((*second)[0].duplicate);
  CHECK((*second)[0].id > first[0]);
}

TEST_CASE("A message reads back with the kind operation and confirmation it was queued with") {
  QueueFixture f;
  NewMessage push = message("0001", 1);
  push.opcode = 7;  // m-Action-Confirmed, X.711 §7.4
  push.confirmed = true;
  NewMessage response = message("0001", 2, 10);
  response.kind = MessageKind::kResponse;
  response.opcode = 6;
  auto ids = f.append({push, response, message("0001", 3)});
  auto first = f.queue.get(ids[0]);
  REQUIRE(first.isOk());
  CHECK(first->kind == MessageKind::kPush);
  CHECK(first->opcode == 7);
  CHECK(first->confirmed);
  auto second = f.queue.get(ids[1]);
  CHECK(second->kind == MessageKind::kResponse);
  CHECK(second->opcode == 6);
  CHECK_FALSE(second->confirmed);
  // NewMessage{spid, mask, priority, pdu}: an unconfirmed push of unknown operation.
  auto third = f.queue.nextQueued("0001", kSoaMgmt, 10);
  REQUIRE(third.isOk());
  REQUIRE(third->size() == 3);
  CHECK(third->back().kind == MessageKind::kPush);
  CHECK(third->back().opcode == kUnknownOpcode);
  CHECK_FALSE(third->back().confirmed);
}

TEST_CASE("A keyed retry with another kind operation or confirmation is different content") {
  QueueFixture f;
  NewMessage original = keyed("0001", 1, "order-1");
  original.opcode = 7;
  original.confirmed = true;
  f.append({original});
  NewMessage same = original;
  auto retried = f.queue.appendBatchOutcomes(std::vector{same}, 2000);
  REQUIRE(retried.isOk());
  CHECK((*retried)[0].duplicate);
  NewMessage as_response = original;
  as_response.kind = MessageKind::kResponse;
  NewMessage other_opcode = original;
  other_opcode.opcode = 6;
  NewMessage unconfirmed = original;
  unconfirmed.confirmed = false;
  for (const NewMessage& changed : {as_response, other_opcode, unconfirmed}) {
    CHECK(f.queue.appendBatch(std::vector{changed}, 3000).status().code() == Status::Code::kConstraint);
  }
  CHECK(rowCount(*f.db) == 1);
}

TEST_CASE("Message kinds have the column's names and parse back") {
  CHECK(std::string(toString(MessageKind::kPush)) == "push");
  CHECK(std::string(toString(MessageKind::kResponse)) == "response");
  CHECK(parseMessageKind("response") == MessageKind::kResponse);
  CHECK_FALSE(parseMessageKind("Push").has_value());
}
