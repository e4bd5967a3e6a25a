// ProviderEgress: one provider's outbound decisions end to end, with a simulated provider.
#include "associations/provider_egress.h"
#include "tests/associations/test_values.h"

#include <catch2/catch.hpp>

#include <deque>
#include <map>
#include <set>

using namespace npac::associations;
using namespace npac::associations::testing;
using namespace std::chrono_literals;
using F = AssociationFunction;

namespace {


AssociationSpec spec(AssociationId id, FunctionMask functions = kSoa) {
  AssociationSpec s;
  s.id = id;
  s.nsap = Nsap::fromIpv4({127, 0, 0, static_cast<std::uint8_t>(id + 1)});
  s.functions = functions;
  s.bound_order = id;
  return s;
}

std::unique_ptr<ProviderEgress> makeEgress(OutstandingLimits limits = {100, 15min, 1}) {
  auto made = ProviderEgress::create("1234", npac::dispatch::PolicyConfig{}, limits);
  REQUIRE(made.isOk());
  return std::move(made).value();
}

OutboundMessage notification(MessageId id) { return OutboundMessage{id, F::kNotifications, true, 0}; }

}  // namespace

TEST_CASE("Losing one of three associations in the middle of 10,000 PDUs loses nothing") {
  auto egress = makeEgress({100, 15min, 1});
  for (AssociationId id : {1u, 2u, 3u}) egress->onBound(spec(id), false);
  std::vector<AssociationId> live = {1, 2, 3};

  // The provider: what reached it and is not answered yet, oldest first.
  std::deque<Transmission> at_provider;
  std::map<MessageId, int> delivered;  // how often the provider received each message
  std::map<MessageId, int> acknowledged;
  std::set<MessageId> retransmitted;
  std::uint64_t answers = 0;
  auto answerOldest = [&] {
    REQUIRE_FALSE(at_provider.empty());
    const Transmission t = at_provider.front();
    at_provider.pop_front();
    // Responses come back on any live association (NANC 353 7.b.iv).
    const AssociationId arrived_on = live[answers++ % live.size()];
    if (auto message = egress->onResponse(*t.invoke_id, arrived_on, t0)) ++acknowledged[*message];
  };
  auto deliver = [&](const Transmission& t) {
    ++delivered[t.message];
    if (t.retransmission) retransmitted.insert(t.message);
    at_provider.push_back(t);
  };

  std::set<MessageId> in_flight_on_lost;
  for (MessageId id = 0; id < 10'000; ++id) {
    if (id == 5'000) {
      // Association 2 dies. What it carried and the provider had not answered: half of
      // it reached the provider (answers will come back on survivors), half was lost.
      std::deque<Transmission> kept;
      bool keep = true;
      for (const Transmission& t : at_provider) {
        if (t.association == 2) {
          in_flight_on_lost.insert(t.message);
          if (!keep) --delivered[t.message];  // never reached the provider
          if (keep) kept.push_back(t);
          keep = !keep;
        } else {
          kept.push_back(t);
        }
      }
      at_provider = kept;
      live = {1, 3};
      const LossOutcome loss = egress->onAssociationLost(2, t0);
      CHECK(loss.requeue.empty());
      CHECK(loss.retransmissions.size() == in_flight_on_lost.size());
      for (const Transmission& t : loss.retransmissions) {
        CHECK(t.retransmission);
        CHECK(t.association != 2u);
        deliver(t);
      }
    }
    SendOutcome outcome = egress->send(notification(id), t0);
    while (!outcome.ok()) {
      REQUIRE(outcome.wait == WaitReason::kAllCongested);
      answerOldest();
      outcome = egress->send(notification(id), t0);
    }
    CHECK_FALSE(outcome.transmission->retransmission);
    deliver(*outcome.transmission);
    if (at_provider.size() > 150) answerOldest();  // the provider lags 150 behind
  }
  while (!at_provider.empty()) answerOldest();

  CHECK(acknowledged.size() == 10'000);
  for (const auto& [message, count] : acknowledged) REQUIRE(count == 1);
  CHECK_FALSE(in_flight_on_lost.empty());
  CHECK(retransmitted == in_flight_on_lost);  // retransmissions only for what was in flight
  for (const auto& [message, count] : delivered) {
    if (count > 1) REQUIRE(retransmitted.count(message) == 1);  // duplicates are marked
    REQUIRE(count >= 1);
  }
  CHECK(egress->outstanding().size() == 0);
}

TEST_CASE("With no association, messages wait in the queue") {
  auto egress = makeEgress();
  const SendOutcome outcome = egress->send(notification(1), t0);
  REQUIRE_FALSE(outcome.ok());
  CHECK(outcome.wait == WaitReason::kNoAssociationForFunction);
}

TEST_CASE("In recovery mode nothing is pushed until recovery completes") {
  auto egress = makeEgress();
  egress->onBound(spec(1), /*recovery_mode=*/true);
  const SendOutcome held = egress->send(notification(1), t0);
  REQUIRE_FALSE(held.ok());
  CHECK(held.wait == WaitReason::kRecovering);
  REQUIRE(egress->recovery().complete().isOk());
  CHECK(egress->send(notification(1), t0).ok());
}

TEST_CASE("An association at its window makes messages wait until a response arrives") {
  auto egress = makeEgress({2, 15min, 1});
  egress->onBound(spec(1), false);
  auto first = egress->send(notification(1), t0);
  REQUIRE(first.ok());
  REQUIRE(egress->send(notification(2), t0).ok());
  const SendOutcome third = egress->send(notification(3), t0);
  REQUIRE_FALSE(third.ok());
  CHECK(third.wait == WaitReason::kAllCongested);
  CHECK(egress->onResponse(*first.transmission->invoke_id, 1, t0) == 1u);
  CHECK(egress->send(notification(3), t0).ok());
}

TEST_CASE("Unconfirmed messages take a turn in the rotation but no invoke id") {
  auto egress = makeEgress();
  egress->onBound(spec(1), false);
  egress->onBound(spec(2), false);
  const auto a = egress->send(OutboundMessage{1, F::kNotifications, false, 0}, t0);
  const auto b = egress->send(OutboundMessage{2, F::kNotifications, false, 0}, t0);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK_FALSE(a.transmission->invoke_id.has_value());
  CHECK(a.transmission->association != b.transmission->association);
  CHECK(egress->outstanding().size() == 0);
}

TEST_CASE("Losing the only association sends the in-flight messages back to the queue") {
  auto egress = makeEgress();
  egress->onBound(spec(1), false);
  REQUIRE(egress->send(notification(10), t0).ok());
  REQUIRE(egress->send(notification(11), t0 + 1s).ok());
  const LossOutcome loss = egress->onAssociationLost(1, t0 + 2s);
  CHECK(loss.retransmissions.empty());
  CHECK(loss.requeue == std::vector<MessageId>{10, 11});
  CHECK(egress->outstanding().size() == 0);
  CHECK_FALSE(egress->logical().available());
}

TEST_CASE("A replacing bind takes over the outstanding messages of the one it replaces") {
  auto egress = makeEgress();
  egress->onBound(spec(1), false);
  const auto sent = egress->send(notification(7), t0);
  REQUIRE(sent.ok());
  egress->onBound(spec(2), false);  // same mask, replaces 1 (NANC 386)
  const LossOutcome loss = egress->onAssociationLost(1, t0 + 1s);
  REQUIRE(loss.retransmissions.size() == 1);
  CHECK(loss.retransmissions[0].association == 2u);
  CHECK(loss.retransmissions[0].invoke_id == sent.transmission->invoke_id);
  CHECK(egress->onResponse(*sent.transmission->invoke_id, 2, t0 + 2s) == 7u);
}

TEST_CASE("A timed-out request is retried on another association, then aborts it") {
  auto egress = makeEgress({100, 5min, 2});
  egress->onBound(spec(1), false);
  egress->onBound(spec(2), false);
  const auto sent = egress->send(notification(1), t0);
  REQUIRE(sent.ok());
  REQUIRE(sent.transmission->association == 1u);
  CHECK(egress->onTimer(t0 + 4min).retries.empty());
  const TimerOutcome first = egress->onTimer(t0 + 5min);
  REQUIRE(first.retries.size() == 1);
  CHECK(first.retries[0].association == 2u);  // avoids the one that did not answer
  CHECK(first.retries[0].retransmission);
  CHECK(first.abort.empty());
  const TimerOutcome second = egress->onTimer(t0 + 10min);
  CHECK(second.retries.empty());
  // 2 timed out its last attempt; 1 stayed silent a whole response_timeout after its
  // first timeout, which is its second: both are aborted.
  CHECK(second.abort == std::vector<AssociationId>{1, 2});
}

TEST_CASE("A response to an unknown invoke id acknowledges nothing") {
  auto egress = makeEgress();
  egress->onBound(spec(1), false);
  CHECK_FALSE(egress->onResponse(12345, 1, t0).has_value());
}

TEST_CASE("SRR turned off: the earliest-bound stays and the others' requests move to it") {
  auto egress = makeEgress();
  for (AssociationId id : {1u, 2u, 3u}) egress->onBound(spec(id), false);
  std::map<AssociationId, std::vector<InvokeId>> sent_on;
  for (MessageId m = 0; m < 9; ++m) {
    const auto sent = egress->send(notification(m), t0);
    REQUIRE(sent.ok());
    sent_on[sent.transmission->association].push_back(*sent.transmission->invoke_id);
  }
  const SrrOffOutcome outcome = egress->onSrrTurnedOff(t0 + 1s);
  REQUIRE(outcome.plan.size() == 2);
  CHECK(outcome.requeue.empty());
  CHECK(outcome.retransmissions.size() == 6);  // three each from associations 2 and 3
  for (const Transmission& t : outcome.retransmissions) {
    CHECK(t.association == 1u);
    CHECK(t.retransmission);
  }
  CHECK(egress->outstanding().outstanding(1) == 9);
  CHECK(egress->readyToRelease() == std::vector<AssociationId>{2, 3});
  // New traffic goes to the association that stays.
  for (MessageId m = 100; m < 105; ++m) CHECK(egress->send(notification(m), t0).transmission->association == 1u);
  CHECK(egress->outstanding().outstanding(1) == 14);
  // A late response on a releasing association still completes the moved request.
  CHECK(egress->onResponse(sent_on[2].front(), 2, t0 + 2s).has_value());
  CHECK(egress->outstanding().outstanding(1) == 13);
}

TEST_CASE("A graceful release waits until nothing is outstanding on the association") {
  auto egress = makeEgress();
  egress->onBound(spec(1), false);
  egress->onBound(spec(2), false);
  const auto first = egress->send(notification(1), t0);
  REQUIRE(first.ok());
  REQUIRE(first.transmission->association == 1u);
  egress->startRelease(1);
  CHECK(egress->readyToRelease().empty());
  CHECK(egress->send(notification(2), t0).transmission->association == 2u);
  REQUIRE(egress->onResponse(*first.transmission->invoke_id, 2, t0).has_value());
  CHECK(egress->readyToRelease() == std::vector<AssociationId>{1});
}

TEST_CASE("In recovery, responses and the recovery answer leave while pushes are held") {
  auto egress = makeEgress();
  egress->onBound(spec(1), /*recovery_mode=*/true);
  OutboundMessage push = notification(1);
  REQUIRE(egress->send(push, t0).wait == WaitReason::kRecovering);

  OutboundMessage response{2, F::kSoaManagement, false, 0, OutboundMessage::Purpose::kResponse};
  const auto answered = egress->send(response, t0);
  REQUIRE(answered.ok());
  CHECK_FALSE(answered.transmission->invoke_id.has_value());

  OutboundMessage recovered = notification(3);
  recovered.purpose = OutboundMessage::Purpose::kRecoveryAnswer;
  const auto resent = egress->send(recovered, t0);
  REQUIRE(resent.ok());
  CHECK(resent.transmission->invoke_id.has_value());  // still a request: it is acknowledged
  CHECK(egress->outstanding().size() == 1);
}

TEST_CASE("A response never becomes an outstanding request, even if marked confirmed") {
  auto egress = makeEgress();
  egress->onBound(spec(1), false);
  OutboundMessage response{2, F::kQueries, true, 0, OutboundMessage::Purpose::kResponse};
  const auto sent = egress->send(response, t0);
  REQUIRE(sent.ok());
  CHECK_FALSE(sent.transmission->invoke_id.has_value());
  CHECK(egress->outstanding().size() == 0);
}

TEST_CASE("A silent association takes no new PDU once a request on it passed response_timeout") {
  auto egress = makeEgress({100, 1min, 2});
  egress->onBound(spec(1), false);
  egress->onBound(spec(2), false);
  const auto first = egress->send(notification(1), t0);
  REQUIRE(first.transmission->association == 1u);
  const TimerOutcome due = egress->onTimer(t0 + 1min);
  CHECK(due.silenced == std::vector<AssociationId>{1});
  CHECK(egress->silent(1));
  for (MessageId id = 2; id < 12; ++id) {
    const auto next = egress->send(notification(id), t0 + 1min);
    REQUIRE(next.ok());
    CHECK(next.transmission->association == 2u);
  }
}

TEST_CASE("A silent association is aborted at its retry_attempts-th timeout although its retries were answered elsewhere") {
  auto egress = makeEgress({100, 1min, 2});
  egress->onBound(spec(1), false);
  egress->onBound(spec(2), false);
  // Three requests on association 1 at different times (the others go to 2 and are answered).
  std::vector<Transmission> on_one;
  TimePoint at = t0;
  for (MessageId id = 1; on_one.size() < 3; ++id) {
    auto t = *egress->send(notification(id), at).transmission;
    if (t.association == 1u) {
      on_one.push_back(t);
      at += 40s;
    } else {
      egress->onResponse(*t.invoke_id, 2, at);
    }
  }
  // t0+60s: the first is due → silent, timeout 1 (retried on 2 and answered there).
  TimerOutcome one = egress->onTimer(t0 + 60s);
  CHECK(one.abort.empty());
  for (const auto& r : one.retries) egress->onResponse(*r.invoke_id, 2, t0 + 60s);
  // t0+100s: the second is due → timeout 2 → abort, wherever its retry would have gone.
  TimerOutcome two = egress->onTimer(t0 + 100s);
  CHECK(two.abort == std::vector<AssociationId>{1});
  CHECK(egress->timeouts(1) == 2);
}

TEST_CASE("An answer on a silent association puts it back in the rotation") {
  auto egress = makeEgress({100, 1min, 3});
  egress->onBound(spec(1), false);
  egress->onBound(spec(2), false);
  const auto first = *egress->send(notification(1), t0).transmission;
  REQUIRE(first.association == 1u);
  const TimerOutcome due = egress->onTimer(t0 + 1min);
  REQUIRE(due.retries.size() == 1);
  REQUIRE(egress->silent(1));
  // The late answer to the original arrives on association 1 itself.
  CHECK(egress->onResponse(*first.invoke_id, 1, t0 + 70s) == 1u);
  CHECK_FALSE(egress->silent(1));
  CHECK(egress->timeouts(1) == 0);
  std::set<AssociationId> used;
  for (MessageId id = 2; id < 6; ++id) used.insert(egress->send(notification(id), t0 + 71s).transmission->association);
  CHECK(used == std::set<AssociationId>{1, 2});
}
