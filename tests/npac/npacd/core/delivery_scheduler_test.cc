// DeliveryScheduler: the wakes of one turn coalesced into one posted handler, one commit of
// every due provider's `sent` rows before any PDU leaves, delayed wakes and stop — driven
// turn by turn on an io_context, with ManualTimers (core_parts_fixture.h).
#include "npac/npacd/core/delivery_scheduler.h"

#include <catch2/catch.hpp>

#include "tests/npac/npacd/core/core_parts_fixture.h"

using namespace npac;
using namespace npac::npacd;
using namespace std::chrono_literals;
using npac::npacd::testing::CorePartsFixture;
using npac::npacd::testing::PartsLink;

TEST_CASE("Providers woken in one turn deliver from one handler and every row reads sent before any PDU leaves") {
  CorePartsFixture f;
  f.provision("0001");
  f.provision("0002");
  f.provision("0003");
  PartsLink& a = f.bind("0001", 1);
  PartsLink& b = f.bind("0002", 2);
  PartsLink& c = f.bind("0003", 3);
  f.submit("0001", 2);
  f.submit("0002", 2);
  f.submit("0003", 2);
  std::vector<std::size_t> queued_at_send;
  for (PartsLink* link : {&a, &b, &c}) link->on_send = [&] { queued_at_send.push_back(f.queuedInDatabase()); };
  CHECK(a.sent.empty());
  const std::uint64_t before = f.rounds();
  f.io.restart();
  CHECK(f.io.run_one() == 1);  // one posted handler runs the three providers' rounds
  CHECK(f.rounds() == before + 3);
  CHECK(a.sent.size() == 2);
  CHECK(b.sent.size() == 2);
  CHECK(c.sent.size() == 2);
  CHECK(queued_at_send == std::vector<std::size_t>(6, 0));  // all six committed before the first left
}

TEST_CASE("A provider woken three times in one turn gets one delivery round") {
  CorePartsFixture f;
  f.provision("0001");
  f.bind("0001", 1);
  f.turn();
  const std::uint64_t before = f.rounds();
  f.delivery->wake("0001");
  f.delivery->wake("0001");
  f.delivery->wake("0001");
  CHECK(f.turn() == 1);
  CHECK(f.rounds() == before + 1);
}

TEST_CASE("A wake for a provider with no core here runs no round and is taken again later") {
  CorePartsFixture f;
  const std::uint64_t before = f.rounds();
  f.delivery->wake("0009");
  CHECK(f.turn() == 1);
  CHECK(f.rounds() == before);
  f.delivery->wake("0009");
  CHECK(f.turn() == 1);  // not left marked as scheduled
}

TEST_CASE("A delayed wake runs once its delay passed and a later one armed meanwhile does not replace it") {
  CorePartsFixture f;
  f.provision("0001");
  f.bind("0001", 1);
  f.turn();
  const std::uint64_t before = f.rounds();
  f.delivery->wakeAfter("0001", 300ms);
  f.delivery->wakeAfter("0001", 2s);
  f.timers.advance(299ms);
  f.turn();
  CHECK(f.rounds() == before);
  f.timers.advance(1ms);
  f.turn();
  CHECK(f.rounds() == before + 1);
  f.timers.advance(3s);
  f.turn();
  CHECK(f.rounds() == before + 1);
  CHECK(f.timers.pending() == 0);
}

TEST_CASE("After stop a wake delivers nothing and the delayed wakes are cancelled") {
  CorePartsFixture f;
  f.provision("0001");
  PartsLink& link = f.bind("0001", 1);
  f.turn();
  f.delivery->wakeAfter("0001", 100ms);
  f.delivery->stop();
  CHECK(f.timers.pending() == 0);
  f.submit("0001", 3);  // wakes its provider
  CHECK(f.turn() == 0);
  f.timers.advance(1s);
  CHECK(f.turn() == 0);
  CHECK(link.sent.empty());
}

TEST_CASE("Store flushes asked for in one turn are one flush at its end") {
  CorePartsFixture f;
  f.delivery->flushSoon();
  f.delivery->flushSoon();
  CHECK(f.turn() == 1);
  f.delivery->flushSoon();
  CHECK(f.turn() == 1);
}
