// OutboundQueue's reads over delivery progress records (db/outbound_queue_progress.cc).
#include <catch2/catch.hpp>

#include "db/outbound_queue.h"
#include "db/progress_log.h"
#include "db/queue_summary.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

struct Fixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  OutboundQueue queue{*db};
  ProgressLog log{*db};
  Fixture() {
    addProvider(*db, "0001");
    addProvider(*db, "0002");
  }
  std::vector<MessageId> append(const std::string& spid, std::size_t n, TimeMs now = 1000) {
    std::vector<NewMessage> messages;
    for (std::size_t i = 0; i < n; ++i) {
      messages.push_back(NewMessage{spid, 1, 0, Bytes{0x30, 0x03, 0x02, 0x01, static_cast<std::uint8_t>(i)}});
    }
    auto ids = queue.appendBatch(messages, now);
    REQUIRE(ids.isOk());
    return *ids;
  }
  void record(ProgressEvent event, std::vector<MessageId> ids, TimeMs at, AssociationId association = 0,
              std::string spid = "0001") {
    const ProgressRecord r{std::move(spid), event, association, at, std::move(ids), {}};
    REQUIRE(log.append(std::span(&r, 1)).isOk());
  }
};

}  // namespace

TEST_CASE("A message read back is in the state the records appended for it give", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 2);
  f.record(ProgressEvent::kHanded, {ids[0]}, 2000, 41);
  auto sent = f.queue.get(ids[0]);
  REQUIRE(sent.isOk());
  CHECK(sent->state == MessageState::kSent);
  CHECK(sent->attempts == 1);
  CHECK(sent->sent_at == 2000);
  CHECK(sent->association_id == 41);
  f.record(ProgressEvent::kAcknowledged, {ids[0]}, 2100);
  auto acked = f.queue.get(ids[0]);
  REQUIRE(acked.isOk());
  CHECK(acked->state == MessageState::kAcknowledged);
  CHECK(acked->acknowledged_at == 2100);
  CHECK(f.queue.get(ids[1])->state == MessageState::kQueued);
}

TEST_CASE("A row's own state columns are where its records start", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 1);
  REQUIRE(f.queue.markSent(ids[0], 7, 1500).isOk());  // written on the row, as before the log
  f.record(ProgressEvent::kRequeued, {ids[0]}, 1600);
  f.record(ProgressEvent::kHanded, {ids[0]}, 1700, 8);
  auto message = f.queue.get(ids[0]);
  REQUIRE(message.isOk());
  CHECK(message->attempts == 2);
  CHECK(message->retransmission);
  CHECK(message->association_id == 8);
}

TEST_CASE("Recovery by time range shows each message as its records leave it", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 3, 1000);
  f.record(ProgressEvent::kHanded, {ids[0], ids[1], ids[2]}, 2000, 5);
  f.record(ProgressEvent::kAcknowledged, {ids[1]}, 2100);
  ProgressRecord failed{"0001", ProgressEvent::kFailed, 0, 2200, {ids[2]}, "rejected"};
  REQUIRE(f.log.append(std::span(&failed, 1)).isOk());
  auto recovered = f.queue.createdBetween("0001", 0, 5000, 10);
  REQUIRE(recovered.isOk());
  REQUIRE(recovered->size() == 3);
  CHECK((*recovered)[0].state == MessageState::kSent);
  CHECK((*recovered)[1].state == MessageState::kAcknowledged);
  CHECK((*recovered)[2].state == MessageState::kFailed);
  CHECK((*recovered)[2].failure_reason == "rejected");
}

TEST_CASE("A record filed under another provider does not change a message", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 1);
  f.record(ProgressEvent::kHanded, {ids[0]}, 2000, 5, "0002");
  CHECK(f.queue.get(ids[0])->state == MessageState::kQueued);
  auto recovered = f.queue.createdBetween("0001", 0, 5000, 10);
  REQUIRE(recovered.isOk());
  CHECK(recovered->front().state == MessageState::kQueued);
}

TEST_CASE("A record that its rule refuses for a message leaves that message as it was", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 1);
  f.record(ProgressEvent::kAcknowledged, {ids[0]}, 2000);
  f.record(ProgressEvent::kHanded, {ids[0]}, 2100, 5);  // an acknowledged message is not handed
  auto message = f.queue.get(ids[0]);
  REQUIRE(message.isOk());
  CHECK(message->state == MessageState::kAcknowledged);
  CHECK(message->attempts == 0);
}

TEST_CASE("A message handed by a record is no longer offered for delivery, and offered again once requeued",
          "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 3);
  f.record(ProgressEvent::kHanded, {ids[0], ids[1]}, 2000, 5);
  auto next = f.queue.nextQueued("0001", 1, 10);
  REQUIRE(next.isOk());
  REQUIRE(next->size() == 1);
  CHECK(next->front().id == ids[2]);
  f.record(ProgressEvent::kRequeued, {ids[1]}, 2100);
  next = f.queue.nextQueued("0001", 1, 10);
  REQUIRE(next.isOk());
  REQUIRE(next->size() == 2);
  CHECK((*next)[0].id == ids[1]);
  CHECK((*next)[0].retransmission);
  CHECK((*next)[1].id == ids[2]);
}

TEST_CASE("A row sent by its columns that a record put back is offered in send order", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 3);
  REQUIRE(f.queue.markSent(ids[0], 7, 1500).isOk());  // on the row, as before the log
  f.record(ProgressEvent::kRequeued, {ids[0]}, 1600);
  auto next = f.queue.nextQueued("0001", 1, 2);
  REQUIRE(next.isOk());
  REQUIRE(next->size() == 2);
  CHECK((*next)[0].id == ids[0]);
  CHECK((*next)[1].id == ids[1]);
}

TEST_CASE("The limit of queued messages holds past rows the records took away", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 1200);
  std::vector<MessageId> handed(ids.begin(), ids.begin() + 1000);
  f.record(ProgressEvent::kHanded, handed, 2000, 5);
  auto next = f.queue.nextQueued("0001", 1, 150);
  REQUIRE(next.isOk());
  REQUIRE(next->size() == 150);
  CHECK(next->front().id == ids[1000]);
  CHECK(next->back().id == ids[1149]);
}

TEST_CASE("What a provider missed leaves out what records acknowledged and keeps what failed",
          "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 700);
  std::vector<MessageId> acked(ids.begin(), ids.begin() + 600);
  f.record(ProgressEvent::kAcknowledged, acked, 2000);
  f.record(ProgressEvent::kFailed, {ids[650]}, 2100);
  auto missed = f.queue.unacknowledged("0001", 60);
  REQUIRE(missed.isOk());
  REQUIRE(missed->size() == 60);
  CHECK(missed->front().id == ids[600]);
  CHECK((*missed)[50].state == MessageState::kFailed);
}

TEST_CASE("Counts by state count each message in the state its records give", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 4);
  f.append("0002", 1);
  f.record(ProgressEvent::kHanded, {ids[0], ids[1], ids[2]}, 2000, 5);
  f.record(ProgressEvent::kAcknowledged, {ids[0]}, 2100);
  CHECK(*f.queue.count(MessageState::kQueued) == 2);
  CHECK(*f.queue.count(MessageState::kSent) == 2);
  CHECK(*f.queue.count(MessageState::kAcknowledged) == 1);
  CHECK(*f.queue.count(MessageState::kFailed) == 0);
}

TEST_CASE("Queued messages by function mask leave out those a record handed", "[db][progress]") {
  Fixture f;
  const auto ids = f.append("0001", 3);
  f.record(ProgressEvent::kHanded, {ids[0]}, 2000, 5);
  auto by_mask = f.queue.queuedByMask("0001");
  REQUIRE(by_mask.isOk());
  CHECK(*by_mask == std::map<std::uint32_t, std::size_t>{{1, 2}});
  f.record(ProgressEvent::kHanded, {ids[1], ids[2]}, 2100, 5);
  by_mask = f.queue.queuedByMask("0001");
  REQUIRE(by_mask.isOk());
  CHECK(by_mask->empty());
}

TEST_CASE("The queue summary counts each message in its state after the records, with the oldest of each",
          "[db][progress]") {
  Fixture f;
  const auto first = f.append("0001", 1, 1000);
  const auto later = f.append("0001", 2, 3000);
  f.record(ProgressEvent::kHanded, {first[0], later[0]}, 4000, 5);
  auto summary = summarizeQueue(*f.db, "0001");
  REQUIRE(summary.isOk());
  CHECK(summary->counts == std::vector<QueueCount>{{MessageState::kQueued, 1, 1, 3000},
                                                    {MessageState::kSent, 1, 2, 1000}});
  f.record(ProgressEvent::kAcknowledged, {first[0], later[0], later[1]}, 5000);
  summary = summarizeQueue(*f.db, "0001");
  REQUIRE(summary.isOk());
  CHECK(summary->counts == std::vector<QueueCount>{{MessageState::kAcknowledged, 1, 3, 1000}});
}
