// RecoveryState: normal / recovering, held messages, recovery requests answered from the
// queue rows, recovery complete.
#include "associations/recovery.h"

#include <catch2/catch.hpp>

using namespace npac::associations;
using npac::StatusCode;
using namespace std::chrono_literals;

namespace {

const WallTime t0 = WallTime(std::chrono::seconds(1'800'000'000));

// Queue rows as a store would return them (not necessarily sorted).
std::vector<RecoveryMessage> queueRows() {
  return {
      {3, t0 + 30s, false}, {1, t0 + 10s, true}, {2, t0 + 20s, false},
      {4, t0 + 40s, true},  {5, t0 + 40s, false},
  };
}

RecoveryRequest range(WallTime from, WallTime to) {
  return RecoveryRequest{RecoveryRequest::Kind::kTimeRange, from, to};
}
const RecoveryRequest kUnacked{RecoveryRequest::Kind::kUnacknowledged, {}, {}};

}  // namespace

TEST_CASE("A provider starts in normal mode and its messages are pushed") {
  RecoveryState state;
  CHECK(state.mode() == ProviderMode::kNormal);
  CHECK(state.mayPush());
  CHECK(state.onNewMessage(1) == Disposition::kPush);
  CHECK(state.held().empty());
}

TEST_CASE("A normal bind leaves the provider in normal mode") {
  RecoveryState state;
  state.onBind(false);
  CHECK(state.mode() == ProviderMode::kNormal);
}

TEST_CASE("A recovery-mode bind puts the provider in recovery and nothing is pushed") {
  RecoveryState state;
  state.onBind(true);
  CHECK(state.mode() == ProviderMode::kRecovering);
  CHECK_FALSE(state.mayPush());
  CHECK(state.onNewMessage(10) == Disposition::kHold);
  CHECK(state.onNewMessage(11) == Disposition::kHold);
  CHECK(state.held() == std::vector<MessageId>{10, 11});
}

TEST_CASE("A time-range request gets the messages created in the range, in queue order") {
  RecoveryState state;
  state.onBind(true);
  const auto rows = queueRows();
  auto answer = state.answer(range(t0 + 20s, t0 + 40s), rows);
  REQUIRE(answer.isOk());
  CHECK(answer.value() == std::vector<MessageId>{2, 3, 4, 5});  // acknowledged ones too
  auto narrow = state.answer(range(t0 + 11s, t0 + 29s), rows);
  REQUIRE(narrow.isOk());
  CHECK(narrow.value() == std::vector<MessageId>{2});
}

TEST_CASE("An everything-unacknowledged request gets every unacknowledged message in order") {
  RecoveryState state;
  state.onBind(true);
  const auto rows = queueRows();
  auto answer = state.answer(kUnacked, rows);
  REQUIRE(answer.isOk());
  CHECK(answer.value() == std::vector<MessageId>{2, 3, 5});
}

TEST_CASE("Messages held during recovery are not part of the recovery answer") {
  RecoveryState state;
  state.onBind(true);
  auto rows = queueRows();
  rows.push_back({6, t0 + 50s, false});
  REQUIRE(state.onNewMessage(6) == Disposition::kHold);
  auto answer = state.answer(kUnacked, rows);
  REQUIRE(answer.isOk());
  CHECK(answer.value() == std::vector<MessageId>{2, 3, 5});
}

TEST_CASE("Recovery complete returns to normal and releases the held messages in order") {
  RecoveryState state;
  state.onBind(true);
  state.onNewMessage(7);
  state.onNewMessage(9);
  state.onNewMessage(8);
  auto released = state.complete();
  REQUIRE(released.isOk());
  CHECK(released.value() == std::vector<MessageId>{7, 9, 8});
  CHECK(state.mode() == ProviderMode::kNormal);
  CHECK(state.held().empty());
  CHECK(state.onNewMessage(10) == Disposition::kPush);
}

TEST_CASE("The full recovery sequence gives exact counts") {
  RecoveryState state;
  std::vector<RecoveryMessage> rows;
  for (MessageId id = 1; id <= 100; ++id) {
    rows.push_back({id, t0 + std::chrono::seconds(id), id <= 40});  // 1..40 acknowledged
  }
  state.onBind(true);
  for (MessageId id = 101; id <= 125; ++id) {
    REQUIRE(state.onNewMessage(id) == Disposition::kHold);
    rows.push_back({id, t0 + std::chrono::seconds(id), false});
  }
  auto missed = state.answer(kUnacked, rows);
  REQUIRE(missed.isOk());
  CHECK(missed.value().size() == 60);
  CHECK(missed.value().front() == 41u);
  CHECK(missed.value().back() == 100u);
  auto released = state.complete();
  REQUIRE(released.isOk());
  CHECK(released.value().size() == 25);
  CHECK(released.value().front() == 101u);
  CHECK(released.value().back() == 125u);
}

TEST_CASE("A recovery request outside recovery mode is refused") {
  RecoveryState state;
  const auto rows = queueRows();
  auto answer = state.answer(kUnacked, rows);
  REQUIRE_FALSE(answer.isOk());
  CHECK(answer.status().code() == StatusCode::kNotRecovering);
}

TEST_CASE("Recovery complete outside recovery mode is refused") {
  RecoveryState state;
  auto released = state.complete();
  REQUIRE_FALSE(released.isOk());
  CHECK(released.status().code() == StatusCode::kNotRecovering);
}

TEST_CASE("A time range that ends before it starts is refused") {
  RecoveryState state;
  state.onBind(true);
  const auto rows = queueRows();
  auto answer = state.answer(range(t0 + 40s, t0 + 10s), rows);
  REQUIRE_FALSE(answer.isOk());
  CHECK(answer.status().code() == StatusCode::kBadRecoveryRange);
}

TEST_CASE("Losing every association during recovery returns to normal with the held messages") {
  RecoveryState state;
  state.onBind(true);
  state.onNewMessage(3);
  state.onNewMessage(4);
  CHECK(state.onAllAssociationsLost() == std::vector<MessageId>{3, 4});
  CHECK(state.mode() == ProviderMode::kNormal);
  CHECK(state.held().empty());
}

TEST_CASE("Answering a recovery request does not change the mode") {
  RecoveryState state;
  state.onBind(true);
  const auto rows = queueRows();
  REQUIRE(state.answer(kUnacked, rows).isOk());
  REQUIRE(state.answer(range(t0, t0 + 1h), rows).isOk());
  CHECK(state.mode() == ProviderMode::kRecovering);
}
