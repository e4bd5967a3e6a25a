// OutstandingRequests and InvokeIdAllocator: ids across the logical association,
// congestion window, timeouts with retries, and loss of an association.
#include "associations/outstanding.h"
#include "tests/associations/test_values.h"

#include <catch2/catch.hpp>

#include <set>

using namespace npac::associations;
using namespace npac::associations::testing;
using npac::StatusCode;
using namespace std::chrono_literals;
using npac::dispatch::MemberState;
using F = AssociationFunction;

namespace {


OutstandingLimits limits(std::uint32_t window, Duration timeout = 15min, std::uint32_t attempts = 1) {
  return OutstandingLimits{window, timeout, attempts};
}

InvokeId sendOk(OutstandingRequests& table, MessageId message, AssociationId association,
                TimePoint now = t0) {
  auto sent = table.send(message, F::kNotifications, association, now);
  REQUIRE(sent.isOk());
  return sent.value().invoke_id;
}

}  // namespace

TEST_CASE("Invoke ids increase and are never handed out twice while in use") {
  InvokeIdAllocator ids;
  CHECK(ids.allocate() == 1);
  CHECK(ids.allocate() == 2);
  CHECK(ids.allocate() == 3);
  ids.release(2);
  CHECK(ids.allocate() == 4);  // increasing, not lowest-free: a late response cannot alias
}

TEST_CASE("Invoke ids wrap around after the maximum and skip ids still in use") {
  InvokeIdAllocator ids(4);
  CHECK(ids.allocate() == 1);
  CHECK(ids.allocate() == 2);
  CHECK(ids.allocate() == 3);
  CHECK(ids.allocate() == 4);
  ids.release(1);
  ids.release(3);
  CHECK(ids.allocate() == 1);
  CHECK(ids.allocate() == 3);
  CHECK_FALSE(ids.allocate().has_value());  // all four in use
}

TEST_CASE("Invoke ids are unique across the associations of the logical association") {
  OutstandingRequests table(limits(100));
  std::set<InvokeId> seen;
  for (MessageId m = 0; m < 90; ++m) {
    CHECK(seen.insert(sendOk(table, m, static_cast<AssociationId>(m % 3 + 1))).second);
  }
  CHECK(table.size() == 90);
}

TEST_CASE("Exhausted invoke ids are reported as an error") {
  OutstandingRequests table(limits(100), /*max_invoke_id=*/2);
  sendOk(table, 1, 1);
  sendOk(table, 2, 1);
  auto third = table.send(3, F::kQueries, 1, t0);
  REQUIRE_FALSE(third.isOk());
  CHECK(third.status().code() == StatusCode::kInvokeIdsExhausted);
}

TEST_CASE("A request sent on A and answered on B completes") {
  OutstandingRequests table(limits(100));
  const InvokeId id = sendOk(table, 42, /*A=*/1);
  // The response arrives on association 2; matching is by invoke id only.
  auto completed = table.complete(id, /*B=*/2, t0 + 3s);
  REQUIRE(completed.has_value());
  CHECK(completed->request.message_id == 42u);
  CHECK(completed->request.association == 1u);
  CHECK(completed->arrived_on == 2u);
  CHECK(completed->latency == 3s);
  CHECK(table.outstanding(1) == 0);
  CHECK_FALSE(table.find(id).has_value());
}

TEST_CASE("A response for an unknown or already completed invoke id matches nothing") {
  OutstandingRequests table(limits(100));
  const InvokeId id = sendOk(table, 1, 1);
  REQUIRE(table.complete(id, 1, t0).has_value());
  CHECK_FALSE(table.complete(id, 1, t0).has_value());
  CHECK_FALSE(table.complete(999, 1, t0).has_value());
}

TEST_CASE("An association becomes Congested at the window and Available below it") {
  OutstandingRequests table(limits(3));
  const InvokeId a = sendOk(table, 1, 1);
  auto second = table.send(2, F::kQueries, 1, t0);
  REQUIRE(second.isOk());
  CHECK_FALSE(second.value().change.has_value());
  auto third = table.send(3, F::kQueries, 1, t0);
  REQUIRE(third.isOk());
  CHECK(third.value().change == MemberStateChange{1, MemberState::kCongested});
  auto completed = table.complete(a, 1, t0);
  REQUIRE(completed.has_value());
  CHECK(completed->change == MemberStateChange{1, MemberState::kAvailable});
  CHECK(table.outstanding(1) == 2);
}

TEST_CASE("A request beyond the window of an association is refused") {
  OutstandingRequests table(limits(2));
  sendOk(table, 1, 1);
  sendOk(table, 2, 1);
  auto refused = table.send(3, F::kQueries, 1, t0);
  REQUIRE_FALSE(refused.isOk());
  CHECK(refused.status().code() == StatusCode::kAssociationCongested);
  CHECK(table.send(3, F::kQueries, 2, t0).isOk());  // another association has room
}

TEST_CASE("Congestion is counted per association") {
  OutstandingRequests table(limits(2));
  sendOk(table, 1, 1);
  auto other = table.send(2, F::kQueries, 2, t0);
  REQUIRE(other.isOk());
  CHECK_FALSE(other.value().change.has_value());
  CHECK(table.outstanding(1) == 1);
  CHECK(table.outstanding(2) == 1);
}

TEST_CASE("Changing congestion_window live reports the associations whose state changes") {
  OutstandingRequests table(limits(10));
  for (MessageId m = 0; m < 4; ++m) sendOk(table, m, 1);
  sendOk(table, 9, 2);
  auto lowered = table.setLimits(limits(4));
  CHECK(lowered == std::vector<MemberStateChange>{{1, MemberState::kCongested}});
  auto raised = table.setLimits(limits(10));
  CHECK(raised == std::vector<MemberStateChange>{{1, MemberState::kAvailable}});
}

TEST_CASE("Nothing is due before response_timeout") {
  OutstandingRequests table(limits(100, 15min, 1));
  sendOk(table, 1, 1);
  auto expiry = table.expired(t0 + 15min - 1ns);
  CHECK(expiry.retry.empty());
  CHECK(expiry.abort.empty());
  CHECK(table.nextDeadline() == t0 + 15min);
}

TEST_CASE("With one attempt, a timed-out request aborts its association") {
  OutstandingRequests table(limits(100, 15min, 1));
  sendOk(table, 1, 1);
  sendOk(table, 2, 1);
  sendOk(table, 3, 2, t0 + 10min);
  auto expiry = table.expired(t0 + 15min);
  CHECK(expiry.retry.empty());
  CHECK(expiry.abort == std::vector<AssociationId>{1});  // once, though two are due
  // Reported once: the next poll does not repeat it.
  CHECK(table.expired(t0 + 16min).abort.empty());
  CHECK(table.nextDeadline() == t0 + 25min);
}

TEST_CASE("A timed-out request is retried up to retry_attempts sends, then aborts") {
  OutstandingRequests table(limits(100, 5min, 3));
  const InvokeId id = sendOk(table, 7, 1);
  auto first = table.expired(t0 + 5min);
  REQUIRE(first.retry.size() == 1);
  CHECK(first.retry[0].invoke_id == id);
  CHECK(table.expired(t0 + 6min).retry.empty());  // waits for the resend
  REQUIRE(table.resend(id, 2, t0 + 6min).isOk());   // retry on another association
  CHECK(table.outstanding(1) == 0);
  CHECK(table.outstanding(2) == 1);
  auto second = table.expired(t0 + 11min);
  REQUIRE(second.retry.size() == 1);
  CHECK(second.retry[0].attempts == 2);
  CHECK(second.retry[0].retransmission);
  REQUIRE(table.resend(id, 2, t0 + 11min).isOk());
  auto third = table.expired(t0 + 16min);
  CHECK(third.retry.empty());
  CHECK(third.abort == std::vector<AssociationId>{2});
  CHECK(table.find(id)->sends == 3);
}

TEST_CASE("A late response to the first attempt completes a retried request") {
  OutstandingRequests table(limits(100, 5min, 2));
  const InvokeId id = sendOk(table, 7, 1);
  REQUIRE(table.expired(t0 + 5min).retry.size() == 1);
  REQUIRE(table.resend(id, 1, t0 + 5min).isOk());
  CHECK(table.outstanding(1) == 1);  // a retry on the same association counts once
  auto completed = table.complete(id, 1, t0 + 6min);
  REQUIRE(completed.has_value());
  CHECK(completed->request.retransmission);
  CHECK(table.size() == 0);
}

TEST_CASE("When an association is lost its in-flight requests come back oldest first") {
  OutstandingRequests table(limits(100));
  const InvokeId b = sendOk(table, 2, 1, t0 + 2s);
  const InvokeId a = sendOk(table, 1, 1, t0 + 1s);
  sendOk(table, 3, 2, t0 + 3s);
  auto orphans = table.detach(1);
  REQUIRE(orphans.size() == 2);
  CHECK(orphans[0].invoke_id == a);
  CHECK(orphans[1].invoke_id == b);
  CHECK_FALSE(orphans[0].association.has_value());
  CHECK(table.outstanding(1) == 0);
  CHECK(table.detached().size() == 2);
  CHECK(table.expired(t0 + 1h).abort == std::vector<AssociationId>{2});  // detached: no timer
}

TEST_CASE("In-flight requests of a lost association are re-sent on a survivor as retransmissions") {
  OutstandingRequests table(limits(100));
  const InvokeId id = sendOk(table, 5, 1);
  table.detach(1);
  REQUIRE(table.reassign(id, 2, t0 + 1s).isOk());
  const auto request = table.find(id);
  REQUIRE(request.has_value());
  CHECK(request->association == 2u);
  CHECK(request->retransmission);
  CHECK(request->invoke_id == id);  // same id: a response on any survivor still matches
  CHECK(table.outstanding(2) == 1);
  CHECK(table.detached().empty());
}

TEST_CASE("A response arriving on a survivor completes a request whose association was lost") {
  OutstandingRequests table(limits(100));
  const InvokeId id = sendOk(table, 5, 1);
  table.detach(1);
  auto completed = table.complete(id, /*survivor=*/2, t0 + 1s);
  REQUIRE(completed.has_value());
  CHECK_FALSE(completed->change.has_value());
}

TEST_CASE("With no survivor the in-flight requests are dropped and their ids freed") {
  OutstandingRequests table(limits(100), /*max_invoke_id=*/2);
  const InvokeId a = sendOk(table, 1, 1);
  const InvokeId b = sendOk(table, 2, 1);
  for (const auto& orphan : table.detach(1)) REQUIRE(table.drop(orphan.invoke_id).has_value());
  CHECK(table.size() == 0);
  CHECK_FALSE(table.find(a).has_value());
  CHECK_FALSE(table.find(b).has_value());
  CHECK(table.send(3, F::kQueries, 3, t0).isOk());  // ids are free again
}

TEST_CASE("Reassigning to a congested survivor is refused") {
  OutstandingRequests table(limits(1));
  const InvokeId id = sendOk(table, 1, 1);
  sendOk(table, 2, 2);
  table.detach(1);
  auto refused = table.reassign(id, 2, t0);
  REQUIRE_FALSE(refused.isOk());
  CHECK(refused.status().code() == StatusCode::kAssociationCongested);
  CHECK(table.reassign(999, 3, t0).status().code() == StatusCode::kUnknownInvokeId);
}

TEST_CASE("Moving a request off a congested association reports both state changes") {
  OutstandingRequests table(limits(1, 5min, 2));
  const InvokeId id = sendOk(table, 1, 1);
  REQUIRE(table.expired(t0 + 5min).retry.size() == 1);
  auto moved = table.resend(id, 2, t0 + 5min);
  REQUIRE(moved.isOk());
  CHECK(moved.value() == std::vector<MemberStateChange>{{1, MemberState::kAvailable},
                                                        {2, MemberState::kCongested}});
}

TEST_CASE("A message's invoke id is derived from its id, wrapping after the maximum") {
  CHECK(preferredInvokeId(1) == 1);
  CHECK(preferredInvokeId(4711) == 4711);
  CHECK(preferredInvokeId(static_cast<MessageId>(kMaxInvokeId)) == kMaxInvokeId);
  CHECK(preferredInvokeId(static_cast<MessageId>(kMaxInvokeId) + 1) == 1);
  CHECK(preferredInvokeId(11, /*max=*/4) == 3);
}

TEST_CASE("A request is sent with its message's invoke id, and again with it after its first copy ended") {
  OutstandingRequests table(limits(100));
  CHECK(sendOk(table, 4711, 1) == 4711);
  REQUIRE(table.complete(4711, 1, t0 + 1s).has_value());
  // The same message sent once more (after a restart, say): the same invoke id.
  CHECK(sendOk(table, 4711, 2) == 4711);
}

TEST_CASE("A message whose invoke id is in use gets the next free one, and ids handed out in order stay above") {
  InvokeIdAllocator ids;
  CHECK(ids.allocate(preferredInvokeId(7)) == 7);
  CHECK(ids.allocate(preferredInvokeId(7)) == 8);  // 7 in use: the next in order
  CHECK(ids.allocate() == 9);                      // a heartbeat: above every id used
  CHECK(ids.allocate(preferredInvokeId(3)) == 3);  // free, even below
  CHECK(ids.allocate() == 10);
}
