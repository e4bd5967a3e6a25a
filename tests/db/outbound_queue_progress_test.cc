// OutboundQueue's reads over delivery progress records (db/outbound_queue_progress.cc).
#include <catch2/catch.hpp>

#include "db/outbound_queue.h"
#include "db/progress_log.h"
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
