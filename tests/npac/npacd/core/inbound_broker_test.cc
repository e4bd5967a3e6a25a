// InboundBroker in-process (npac/npacd/core/inbound_broker.h): requests handed to polls
// once each, oldest first, by SPID; answered once; reopened after a failed store; polls
// answered at stop. The polls' expiries run on ManualTimers (common/timer.h): a test
// moves time itself; nothing sleeps.
#include "npac/npacd/core/inbound_broker.h"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/time_source.h"
#include "common/timer.h"

namespace npac::npacd {
namespace {

InboundRequest requestFrom(const std::string& spid, std::int32_t invoke_id) {
  InboundRequest request;
  request.spid = spid;
  request.invoke_id = invoke_id;
  return request;
}

// What a poll completed with, if it completed.
struct PollOutcome {
  std::optional<db::Result<std::vector<InboundRequest>>> result;
  CoreService::PollDone done() {
    return [this](db::Result<std::vector<InboundRequest>> r) { result.emplace(std::move(r)); };
  }
  std::vector<std::int32_t> invokeIds() const {
    std::vector<std::int32_t> ids;
    for (const InboundRequest& r : result->value()) ids.push_back(r.invoke_id);
    return ids;
  }
};

// `request` added and handed out to a poll: its id, now open.
InboundRequestId handOut(InboundBroker& broker, InboundRequest request) {
  broker.add(std::move(request));
  PollOutcome outcome;
  broker.poll(InboundPoll{"", 100, std::chrono::milliseconds(0)}, outcome.done());
  REQUIRE(outcome.result);
  REQUIRE(outcome.result->value().size() == 1);
  return outcome.result->value().front().id;
}

TEST_CASE("An inbound poll takes the waiting requests oldest first, numbered from 1", "[inbound_broker]") {
  common::ManualTimeSource time;
  common::ManualTimers timers(time);
  InboundBroker broker(timers);
  broker.add(requestFrom("0001", 7));
  broker.add(requestFrom("0002", 8));
  PollOutcome outcome;
  broker.poll(InboundPoll{"", 100, std::chrono::milliseconds(0)}, outcome.done());
  REQUIRE(outcome.result);
  REQUIRE(outcome.result->isOk());
  CHECK(outcome.invokeIds() == std::vector<std::int32_t>{7, 8});
  CHECK(outcome.result->value()[0].id == 1);
  CHECK(outcome.result->value()[1].id == 2);
}

TEST_CASE("An inbound poll for one SPID leaves the other providers' requests waiting", "[inbound_broker]") {
  common::ManualTimeSource time;
  common::ManualTimers timers(time);
  InboundBroker broker(timers);
  broker.add(requestFrom("0001", 1));
  broker.add(requestFrom("0002", 2));
  PollOutcome for_0002, for_anyone;
  broker.poll(InboundPoll{"0002", 100, std::chrono::milliseconds(0)}, for_0002.done());
  broker.poll(InboundPoll{"", 100, std::chrono::milliseconds(0)}, for_anyone.done());
  CHECK(for_0002.invokeIds() == std::vector<std::int32_t>{2});
  CHECK(for_anyone.invokeIds() == std::vector<std::int32_t>{1});
}

TEST_CASE("An inbound poll takes at most its max and the rest waits for the next", "[inbound_broker]") {
  common::ManualTimeSource time;
  common::ManualTimers timers(time);
  InboundBroker broker(timers);
  for (int i = 1; i <= 3; ++i) broker.add(requestFrom("0001", i));
  PollOutcome first, second;
  broker.poll(InboundPoll{"", 2, std::chrono::milliseconds(0)}, first.done());
  broker.poll(InboundPoll{"", 2, std::chrono::milliseconds(0)}, second.done());
  CHECK(first.invokeIds() == std::vector<std::int32_t>{1, 2});
  CHECK(second.invokeIds() == std::vector<std::int32_t>{3});
}

TEST_CASE("A waiting inbound poll is answered by the next request that arrives", "[inbound_broker]") {
  common::ManualTimeSource time;
  common::ManualTimers timers(time);
  InboundBroker broker(timers);
  PollOutcome outcome;
  broker.poll(InboundPoll{"", 100, std::chrono::hours(1)}, outcome.done());
  CHECK_FALSE(outcome.result);
  broker.add(requestFrom("0001", 5));
  REQUIRE(outcome.result);
  CHECK(outcome.invokeIds() == std::vector<std::int32_t>{5});
  CHECK(timers.pending() == 0);  // its expiry is cancelled
  timers.advance(std::chrono::hours(2));
  CHECK(outcome.result->value().size() == 1);
}

TEST_CASE("A waiting inbound poll with nothing to take is answered empty when its wait ends", "[inbound_broker]") {
  common::ManualTimeSource time;
  common::ManualTimers timers(time);
  InboundBroker broker(timers);
  PollOutcome outcome;
  broker.poll(InboundPoll{"", 100, std::chrono::seconds(30)}, outcome.done());
  timers.advance(std::chrono::milliseconds(29'999));
  CHECK_FALSE(outcome.result);
  timers.advance(std::chrono::milliseconds(1));  // the 30 s wait ends
  REQUIRE(outcome.result);
  REQUIRE(outcome.result->isOk());
  CHECK(outcome.result->value().empty());
}

TEST_CASE("An inbound request is answered once: a second take finds nothing", "[inbound_broker]") {
  common::ManualTimeSource time;
  common::ManualTimers timers(time);
  InboundBroker broker(timers);
  const InboundRequestId id = handOut(broker, requestFrom("0001", 9));
  CHECK_FALSE(broker.take(id + 1));  // never handed out
  std::optional<InboundRequest> taken = broker.take(id);
  REQUIRE(taken);
  CHECK(taken->invoke_id == 9);
  CHECK_FALSE(broker.take(id));
}

TEST_CASE("An inbound request whose answer was not stored can be answered again", "[inbound_broker]") {
  common::ManualTimeSource time;
  common::ManualTimers timers(time);
  InboundBroker broker(timers);
  const InboundRequestId id = handOut(broker, requestFrom("0001", 4));
  std::optional<InboundRequest> taken = broker.take(id);
  REQUIRE(taken);
  broker.reopen(*taken);
  std::optional<InboundRequest> again = broker.take(id);
  REQUIRE(again);
  CHECK(again->invoke_id == 4);
}

TEST_CASE("Stopping the inbound broker answers every waiting poll shutdown", "[inbound_broker]") {
  common::ManualTimeSource time;
  common::ManualTimers timers(time);
  InboundBroker broker(timers);
  PollOutcome a, b;
  broker.poll(InboundPoll{"0001", 100, std::chrono::hours(1)}, a.done());
  broker.poll(InboundPoll{"", 100, std::chrono::hours(1)}, b.done());
  broker.stop();
  REQUIRE(a.result);
  REQUIRE(b.result);
  CHECK(a.result->status().code() == db::Status::Code::kShutdown);
  CHECK(b.result->status().code() == db::Status::Code::kShutdown);
  CHECK(timers.pending() == 0);  // their expiries are cancelled: nothing answers again
}

}  // namespace
}  // namespace npac::npacd
