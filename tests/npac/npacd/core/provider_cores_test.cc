// ProviderCores: the providers of one core thread by SPID, and what their leases mean for
// them — may they deliver, the tick's renewals and releases, a lost lease, a fenced write —
// on a manual clock over a real SQLite file (core_parts_fixture.h).
#include "npac/npacd/core/provider_cores.h"

#include <catch2/catch.hpp>

#include "db/lease_store.h"
#include "tests/npac/npacd/core/core_parts_fixture.h"

using namespace npac;
using namespace npac::npacd;
using namespace std::chrono_literals;
using npac::npacd::testing::CorePartsFixture;
using npac::npacd::testing::PartsLink;

TEST_CASE("A provider's core is made at its first bind, kept after, and counts as the cores were set") {
  CorePartsFixture f;
  CHECK(f.providers->find("0001") == nullptr);
  f.providers->setCounting(false);
  ProviderCore& made = f.providers->coreFor("0001");
  CHECK(&f.providers->coreFor("0001") == &made);
  CHECK(f.providers->find("0001") == &made);
  CHECK(f.providers->all().size() == 1);
  CHECK_FALSE(made.view().metrics().counters.has_value());
  f.providers->setCounting(true);
  CHECK(made.view().metrics().counters.has_value());
  CHECK(f.providers->counting());
}

TEST_CASE("A provider may be delivered to only while this node's lease on it is valid") {
  CorePartsFixture f;
  CHECK_FALSE(f.providers->mayDeliver("0001"));
  f.provision("0001");
  CHECK(f.providers->mayDeliver("0001"));
  f.clock.advance(4s);  // 4/5 of the default 5 s provider_lease_timeout without renewal
  CHECK_FALSE(f.providers->mayDeliver("0001"));
}

TEST_CASE("Tending the leases releases those of providers with nothing bound here and keeps the bound ones") {
  CorePartsFixture f;
  f.provision("0001");
  f.provision("0002");
  f.bind("0002", 2);
  f.providers->tendLeases();
  CHECK_FALSE(f.leases->held("0001"));
  CHECK(f.leases->held("0002"));
  // Released in the database: another node takes 0001 at once.
  CHECK(db::LeaseStore(*f.db).acquire("0001", "b", f.clock.wallMs(), 5000).value().acquired);
}

TEST_CASE("A lost lease aborts every association of its provider and forgets the lease") {
  CorePartsFixture f;
  f.provision("0001");
  PartsLink& one = f.bind("0001", 1);
  PartsLink& two = f.bind("0001", 2);
  f.providers->providerLost("0001", db::Status::error(db::Status::Code::kFenced, "taken by node b"));
  CHECK(one.abort_reason == "provider lease lost to another npacd node");
  CHECK(two.abort_reason == "provider lease lost to another npacd node");
  CHECK(f.providers->find("0001")->associationCount() == 0);
  CHECK_FALSE(f.leases->held("0001"));
}

TEST_CASE("A round whose writes the lease fence refuses sends nothing and aborts the provider's associations") {
  CorePartsFixture f;
  f.provision("0001");
  PartsLink& link = f.bind("0001", 1);
  f.turn();
  // Node b takes the lease after a's ran out, without a knowing yet.
  REQUIRE(db::LeaseStore(*f.db).acquire("0001", "b", f.clock.wallMs() + 10'000, 5000).value().acquired);
  f.submit("0001", 2);
  f.turn();  // the round's `sent` rows are refused; the loss is posted from the flush, and runs after it
  CHECK(link.sent.empty());
  CHECK(link.abort_reason == "provider lease lost to another npacd node");
  CHECK_FALSE(f.leases->held("0001"));
}

TEST_CASE("A lease taken for a bind reads the provider's queue again and delivers it") {
  CorePartsFixture f;
  f.provision("0001");
  PartsLink& link = f.bind("0001", 1);
  f.turn();
  // Rows another writer committed that this core was never told of.
  const auto notifications = 1u << static_cast<unsigned>(associations::AssociationFunction::kNotifications);
  std::vector<db::NewMessage> rows{{"0001", notifications, 0, npac::npacd::testing::queuedEventReport()}};
  rows[0].kind = db::MessageKind::kPush;
  rows[0].opcode = static_cast<int>(cmip::CmipOpcode::kEventReportConfirmed);
  rows[0].confirmed = true;
  REQUIRE(db::OutboundQueue(*f.db).appendBatch(rows, f.clock.wallMs()).isOk());
  f.providers->leaseTaken("0001");
  f.turn();
  CHECK(link.sent.size() == 1);
}
