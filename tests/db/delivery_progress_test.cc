#include "db/delivery_progress.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace npac::db;

namespace {

ProgressRecord record(ProgressEvent event, std::vector<MessageId> ids, TimeMs at = 100,
                      AssociationId association = 0) {
  return ProgressRecord{"0001", event, association, at, std::move(ids), {}};
}

ProviderProgress admitted(std::vector<MessageId> ids) {
  ProviderProgress progress;
  for (MessageId id : ids) REQUIRE(progress.admit(id).isOk());
  return progress;
}

}  // namespace

TEST_CASE("Consecutive ids cost one byte each in a progress record", "[db][progress]") {
  std::vector<MessageId> ids;
  for (MessageId id = 1'000'001; id <= 1'001'000; ++id) ids.push_back(id);
  const Bytes blob = encodeIdList(ids);
  // The first id is a delta from 0 (three bytes), every later one +1 (one byte).
  CHECK(blob.size() == 3 + 999);
  auto decoded = decodeIdList(blob, ids.size());
  REQUIRE(decoded.isOk());
  CHECK(*decoded == ids);
}

TEST_CASE("Ids in any order, repeated and up to the largest id come back as they were", "[db][progress]") {
  const std::vector<MessageId> ids{7, 3, 3, 900'000'000'000, 1, std::numeric_limits<MessageId>::max(), 2};
  auto decoded = decodeIdList(encodeIdList(ids), ids.size());
  REQUIRE(decoded.isOk());
  CHECK(*decoded == ids);
}

TEST_CASE("An empty ids blob is an empty list", "[db][progress]") {
  auto decoded = decodeIdList({}, 10);
  REQUIRE(decoded.isOk());
  CHECK(decoded->empty());
}

TEST_CASE("A varint cut short is refused as corrupt with its offset", "[db][progress]") {
  const Bytes blob{0x02, 0x80};  // id 1, then a varint whose continuation never comes
  auto decoded = decodeIdList(blob, 10);
  REQUIRE_FALSE(decoded.isOk());
  CHECK(decoded.status().code() == Status::Code::kCorrupt);
  CHECK_THAT(decoded.status().message(), Catch::Contains("varint cut short at byte 1"));
}

TEST_CASE("A varint longer than ten bytes is refused as corrupt", "[db][progress]") {
  const Bytes blob(11, 0x80);
  auto decoded = decodeIdList(blob, 10);
  REQUIRE_FALSE(decoded.isOk());
  CHECK_THAT(decoded.status().message(), Catch::Contains("varint above 64 bits at byte 0"));
}

TEST_CASE("A varint above 64 bits is refused as corrupt", "[db][progress]") {
  Bytes blob(9, 0xff);
  blob.push_back(0x02);  // bit 64
  auto decoded = decodeIdList(blob, 10);
  REQUIRE_FALSE(decoded.isOk());
  CHECK_THAT(decoded.status().message(), Catch::Contains("above 64 bits"));
}

TEST_CASE("An id of zero or below is refused as corrupt", "[db][progress]") {
  const Bytes zero{0x00};          // delta 0 from 0
  const Bytes below{0x02, 0x05};   // 1, then 1 - 3 = -2
  CHECK_THAT(decodeIdList(zero, 10).status().message(), Catch::Contains("id outside 1.."));
  CHECK_THAT(decodeIdList(below, 10).status().message(),
             Catch::Contains("id outside 1..") && Catch::Contains("at byte 1"));
}

TEST_CASE("An id past the largest id is refused as corrupt", "[db][progress]") {
  const std::vector<MessageId> max{std::numeric_limits<MessageId>::max()};
  Bytes blob = encodeIdList(max);
  blob.push_back(0x02);  // + 1
  auto decoded = decodeIdList(blob, 10);
  REQUIRE_FALSE(decoded.isOk());
  CHECK_THAT(decoded.status().message(), Catch::Contains("id outside 1.."));
}

TEST_CASE("More ids than the record may hold are refused as corrupt", "[db][progress]") {
  const std::vector<MessageId> ids{1, 2, 3};
  auto decoded = decodeIdList(encodeIdList(ids), 2);
  REQUIRE_FALSE(decoded.isOk());
  CHECK_THAT(decoded.status().message(), Catch::Contains("more than 2 ids at byte 2"));
}

TEST_CASE("Progress events read back from their stored integers and no others", "[db][progress]") {
  for (ProgressEvent event : {ProgressEvent::kHanded, ProgressEvent::kAcknowledged, ProgressEvent::kFailed,
                              ProgressEvent::kRequeued, ProgressEvent::kMoved}) {
    CHECK(progressEventFromInt(static_cast<std::int64_t>(event)) == event);
  }
  CHECK_FALSE(progressEventFromInt(0).has_value());
  CHECK_FALSE(progressEventFromInt(6).has_value());
  CHECK(std::string(toString(ProgressEvent::kMoved)) == "moved");
}

TEST_CASE("A handed record marks queued messages sent on its association at its instant", "[db][progress]") {
  ProviderProgress progress = admitted({10, 11, 12});
  const ProgressRecord handed = record(ProgressEvent::kHanded, {10, 11}, 500, 7);
  REQUIRE(progress.check(handed).isOk());
  CHECK(progress.apply(handed) == 2);
  const MessageProgress* sent = progress.find(10);
  REQUIRE(sent != nullptr);
  CHECK(sent->state == MessageState::kSent);
  CHECK(sent->attempts == 1);
  CHECK(sent->sent_at == 500);
  CHECK(sent->association == 7);
  CHECK(progress.find(12)->state == MessageState::kQueued);
  CHECK(progress.inFlightOn(7) == std::vector<MessageId>{10, 11});
  CHECK(progress.count(MessageState::kSent) == 2);
}

TEST_CASE("A message already sent cannot be handed again until it is requeued", "[db][progress]") {
  ProviderProgress progress = admitted({10});
  progress.apply(record(ProgressEvent::kHanded, {10}, 500, 7));
  const Status again = progress.check(record(ProgressEvent::kHanded, {10}, 600, 8));
  CHECK(again.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(again.message(), Catch::Contains("message 10 is sent, cannot mark it sent"));
  progress.apply(record(ProgressEvent::kRequeued, {10}));
  CHECK(progress.find(10)->state == MessageState::kQueued);
  CHECK(progress.find(10)->retransmission);
  REQUIRE(progress.check(record(ProgressEvent::kHanded, {10}, 700, 8)).isOk());
  progress.apply(record(ProgressEvent::kHanded, {10}, 700, 8));
  CHECK(progress.find(10)->attempts == 2);
  CHECK(progress.find(10)->association == 8);
}

TEST_CASE("A moved message stays sent on its new association, flagged as a retransmission", "[db][progress]") {
  ProviderProgress progress = admitted({10});
  progress.apply(record(ProgressEvent::kHanded, {10}, 500, 7));
  progress.apply(record(ProgressEvent::kMoved, {10}, 600, 9));
  CHECK(progress.find(10)->state == MessageState::kSent);
  CHECK(progress.find(10)->association == 9);
  CHECK(progress.find(10)->retransmission);
  CHECK(progress.inFlightOn(7).empty());
  CHECK(progress.check(record(ProgressEvent::kMoved, {11})).code() == Status::Code::kNotFound);
}

TEST_CASE("Only a queued or sent message can fail, with its reason and instant", "[db][progress]") {
  ProviderProgress progress = admitted({10, 11});
  ProgressRecord failed = record(ProgressEvent::kFailed, {11}, 800);
  failed.reason = "rejected by the provider";
  progress.apply(failed);
  CHECK(progress.find(11)->state == MessageState::kFailed);
  CHECK(progress.find(11)->failure_reason == "rejected by the provider");
  CHECK(progress.find(11)->failed_at == 800);
  CHECK_THAT(progress.check(failed).message(), Catch::Contains("message 11 is failed, cannot mark it failed"));
}

TEST_CASE("Acknowledging twice, or a settled message, is not an error", "[db][progress]") {
  ProviderProgress progress = admitted({10, 11});
  progress.apply(record(ProgressEvent::kAcknowledged, {11}, 900));
  CHECK(progress.check(record(ProgressEvent::kAcknowledged, {11})).isOk());
  // The second acknowledgement keeps the first instant.
  CHECK(progress.apply(record(ProgressEvent::kAcknowledged, {11}, 950)) == 0);
  CHECK(progress.find(11)->acknowledged_at == 900);
  progress.apply(record(ProgressEvent::kAcknowledged, {10}, 960));
  CHECK(progress.isSettled(10));
  CHECK(progress.check(record(ProgressEvent::kAcknowledged, {10})).isOk());
  CHECK(progress.check(record(ProgressEvent::kAcknowledged, {12})).code() == Status::Code::kNotFound);
}

TEST_CASE("A failed message may still be acknowledged", "[db][progress]") {
  ProviderProgress progress = admitted({10, 11});
  progress.apply(record(ProgressEvent::kFailed, {10}));
  REQUIRE(progress.check(record(ProgressEvent::kAcknowledged, {10})).isOk());
  progress.apply(record(ProgressEvent::kAcknowledged, {10}, 990));
  // 10 settled: acknowledged, and nothing before it is open.
  CHECK(progress.settledThrough() == 10);
}

TEST_CASE("Messages leave the fold once they and every earlier message are settled", "[db][progress]") {
  ProviderProgress progress = admitted({10, 14, 15, 20});
  progress.apply(record(ProgressEvent::kAcknowledged, {14, 15}));
  CHECK(progress.settledThrough() == 0);  // 10 still open
  CHECK(progress.tracked() == 4);
  progress.apply(record(ProgressEvent::kAcknowledged, {10}));
  CHECK(progress.settledThrough() == 15);
  CHECK(progress.tracked() == 1);
  CHECK(progress.find(14) == nullptr);
  progress.apply(record(ProgressEvent::kAcknowledged, {20}));
  CHECK(progress.settledThrough() == 20);
  CHECK(progress.tracked() == 0);
  // A settled message can be neither handed nor failed again.
  CHECK_THAT(progress.check(record(ProgressEvent::kHanded, {14})).message(), Catch::Contains("message 14 is settled"));
}

TEST_CASE("Messages are admitted in id order only", "[db][progress]") {
  ProviderProgress progress(100);
  CHECK(progress.admit(100).code() == Status::Code::kInvalidArgument);
  REQUIRE(progress.admit(101).isOk());
  CHECK_THAT(progress.admit(101).message(), Catch::Contains("admitted after message 101"));
}

TEST_CASE("A record that the rule refuses for some ids changes only the others", "[db][progress]") {
  ProviderProgress progress = admitted({10, 11});
  progress.apply(record(ProgressEvent::kHanded, {10}, 500, 7));
  CHECK(progress.apply(record(ProgressEvent::kHanded, {10, 11}, 600, 8)) == 1);
  CHECK(progress.find(10)->sent_at == 500);
  CHECK(progress.find(11)->sent_at == 600);
}

TEST_CASE("Replaying the same records over the same messages gives the same states", "[db][progress]") {
  const std::vector<ProgressRecord> log{
      record(ProgressEvent::kHanded, {1, 2, 3}, 10, 1), record(ProgressEvent::kAcknowledged, {2}, 11),
      record(ProgressEvent::kRequeued, {1, 3}, 12),     record(ProgressEvent::kHanded, {3, 1}, 13, 2),
      record(ProgressEvent::kMoved, {1}, 14, 3),        record(ProgressEvent::kAcknowledged, {3}, 15)};
  auto replay = [&] {
    ProviderProgress progress = admitted({1, 2, 3, 4});
    for (const ProgressRecord& r : log) progress.apply(r);
    return progress;
  };
  ProviderProgress first = replay();
  ProviderProgress second = replay();
  for (MessageId id : {1, 4}) {
    REQUIRE(first.find(id) != nullptr);
    CHECK(*first.find(id) == *second.find(id));
  }
  CHECK(first.find(1)->attempts == 2);
  CHECK(first.find(1)->association == 3);
  CHECK(first.settledThrough() == 0);
  CHECK(first.count(MessageState::kAcknowledged) == 2);
}
