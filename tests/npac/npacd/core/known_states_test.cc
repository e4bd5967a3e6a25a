// KnownStates: what the DeliveryStore remembers of the messages it handed out and wrote —
// which writes add to it, which forget, and its bound.
#include "npac/npacd/core/known_states.h"

#include <catch2/catch.hpp>

using namespace npac;
using namespace npac::npacd;

namespace {

std::vector<db::QueuedMessage> queuedRows(db::MessageId first, std::size_t count) {
  std::vector<db::QueuedMessage> rows(count);
  for (std::size_t i = 0; i < count; ++i) rows[i].id = first + static_cast<db::MessageId>(i);
  return rows;
}

std::optional<db::MessageState> stateOf(const KnownStates& known, const std::string& spid, db::MessageId id) {
  db::OutboundQueue::Known of = known.of(spid);
  if (!of.state) return std::nullopt;
  return of.state(id);
}

}  // namespace

TEST_CASE("Rows handed out for delivery are remembered as queued under their provider only") {
  KnownStates known;
  known.rememberQueued("0001", queuedRows(10, 3));
  CHECK(known.total() == 3);
  CHECK(stateOf(known, "0001", 11) == db::MessageState::kQueued);
  CHECK(stateOf(known, "0001", 13) == std::nullopt);
  CHECK(stateOf(known, "0002", 11) == std::nullopt);
  CHECK(known.of("0002").state == nullptr);  // nothing remembered: every write reads
  CHECK(known.of("0001").spid == "0001");
}

TEST_CASE("A sent write marks its messages sent and an acknowledgement or failure forgets them") {
  KnownStates known;
  known.rememberQueued("0001", queuedRows(10, 3));
  known.learn(ProgressWrite{ProgressWrite::Kind::kSent, "0001", {10, 11, 12}, 1, 2000, {}});
  CHECK(stateOf(known, "0001", 10) == db::MessageState::kSent);
  CHECK(known.total() == 3);
  known.learn(ProgressWrite{ProgressWrite::Kind::kAcknowledged, "0001", {10}, 0, 2100, {}});
  known.learn(ProgressWrite{ProgressWrite::Kind::kFailed, "0001", {11}, 0, 2100, "test"});
  CHECK(stateOf(known, "0001", 10) == std::nullopt);
  CHECK(stateOf(known, "0001", 11) == std::nullopt);
  CHECK(stateOf(known, "0001", 12) == db::MessageState::kSent);
  CHECK(known.total() == 1);
  known.learn(ProgressWrite{ProgressWrite::Kind::kMoveSent, "0001", {20}, 2, 0, {}});
  CHECK(stateOf(known, "0001", 20) == db::MessageState::kSent);  // a sent row moved: known from now on
  CHECK(known.total() == 2);
}

TEST_CASE("Messages put back to queued forget what is remembered of their provider and nothing else") {
  KnownStates known;
  known.rememberQueued("0001", queuedRows(10, 2));
  known.rememberQueued("0002", queuedRows(20, 2));
  known.learn(ProgressWrite{ProgressWrite::Kind::kRequeue, "0001", {10}, 0, 0, {}});
  CHECK(stateOf(known, "0001", 11) == std::nullopt);
  CHECK(stateOf(known, "0002", 20) == db::MessageState::kQueued);
  CHECK(known.total() == 2);
  known.learn(ProgressWrite{ProgressWrite::Kind::kRequeueAssociation, "0002", {}, 5, 0, {}});
  CHECK(known.total() == 0);
  known.rememberQueued("0001", queuedRows(30, 1));
  known.forgetAll();
  CHECK(known.total() == 0);
  CHECK(known.of("0001").state == nullptr);
}

TEST_CASE("No more than kKnownTotal messages are remembered in all and an update of a known one still counts") {
  KnownStates known;
  known.rememberQueued("0001", queuedRows(1, kKnownTotal));
  known.rememberQueued("0002", queuedRows(1'000'000, 1));
  CHECK(known.total() == kKnownTotal);
  CHECK(stateOf(known, "0002", 1'000'000) == std::nullopt);  // beyond the bound: its write reads the row
  known.learn(ProgressWrite{ProgressWrite::Kind::kSent, "0001", {1}, 1, 2000, {}});
  CHECK(stateOf(known, "0001", 1) == db::MessageState::kSent);
  known.forget("0001");
  CHECK(known.total() == 0);
}
