// ProviderLeases: how long this node may act for a provider after a renewal, set by the
// tunable provider_lease_timeout, on a manual clock (no sleeps), over a real SQLite file.
#include "npac/npacd/core/provider_leases.h"

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include "db/provider_store.h"
#include "tests/db/temp_dir.h"

using namespace npac;
using namespace npac::npacd;
using namespace std::chrono_literals;

namespace {

struct LeasesFixture {
  db::testing::TempDir dir;
  std::unique_ptr<db::Database> db = db::Database::open(dir.file("npacd.db")).value();
  npac::common::ManualTimeSource clock;
  std::unique_ptr<tunables::TunableRegistry> registry;
  std::unique_ptr<ProviderLeases> leases;
  LeasesFixture() {
    REQUIRE(tunables::TunableRegistry::open(*db, [this] { return clock.wallMs(); }, &registry).isOk());
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
    leases = std::make_unique<ProviderLeases>(*db, clock, *registry);
    leases->setNode("a");
  }
  void take() {
    auto taken = leases->take("0001");
    REQUIRE(taken.isOk());
    REQUIRE(taken->acquired);
    leases->hold("0001", taken->lease.epoch, clock.now());
  }
};

}  // namespace

TEST_CASE("A lease lets the node act for 4/5 of provider_lease_timeout after it was taken") {
  LeasesFixture f;  // the default: 5 s
  f.take();
  f.clock.advance(3999ms);
  CHECK(f.leases->valid("0001"));
  f.clock.advance(1ms);
  CHECK_FALSE(f.leases->valid("0001"));
}

TEST_CASE("A longer provider_lease_timeout lets the node act longer without renewal") {
  LeasesFixture f;
  REQUIRE(f.registry->set("provider_lease_timeout", "", "10s", "test").isOk());
  f.take();
  f.clock.advance(7999ms);
  CHECK(f.leases->valid("0001"));
  f.clock.advance(1ms);
  CHECK_FALSE(f.leases->valid("0001"));
}

TEST_CASE("The lease is renewed once a third of provider_lease_timeout has passed, and the row's expiry moves") {
  LeasesFixture f;
  REQUIRE(f.registry->set("provider_lease_timeout", "", "3s", "test").isOk());
  f.take();
  f.clock.advance(999ms);
  CHECK(f.leases->renewDue().empty());
  CHECK(db::LeaseStore(*f.db).get("0001").value()->expires_at == f.clock.wallMs() - 999 + 3000);
  f.clock.advance(1ms);
  CHECK(f.leases->renewDue().empty());
  CHECK(db::LeaseStore(*f.db).get("0001").value()->expires_at == f.clock.wallMs() + 3000);
  f.clock.advance(2399ms);  // 4/5 of 3 s after that renewal, less 1 ms
  CHECK(f.leases->valid("0001"));
}

TEST_CASE("A renewal refused because another node took the provider reports the lease lost") {
  LeasesFixture f;
  f.take();
  f.clock.advance(6s);  // past the 5 s lease: node b takes it
  REQUIRE(db::LeaseStore(*f.db).acquire("0001", "b", f.clock.wallMs(), 5000).value().acquired);
  auto lost = f.leases->renewDue();
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].spid == "0001");
  CHECK(lost[0].why.code() == db::Status::Code::kFenced);
  CHECK_FALSE(f.leases->held("0001"));
}

namespace {

// Counts the transactions committed on `db` (sqlite3_commit_hook) while it lives.
struct CommitCounter {
  sqlite3* handle;
  int commits = 0;
  explicit CommitCounter(db::Database& db) : handle(db.handle()) {
    sqlite3_commit_hook(handle, [](void* self) { ++static_cast<CommitCounter*>(self)->commits; return 0; }, this);
  }
  ~CommitCounter() { sqlite3_commit_hook(handle, nullptr, nullptr); }
};

// Providers 0002 and 0003 beside the fixture's 0001, and this node holding all three leases.
void takeThree(LeasesFixture& f) {
  for (const char* spid : {"0002", "0003"}) {
    REQUIRE(db::ProviderStore(*f.db).add({spid, std::string("Provider ") + spid, db::SystemType::kSoa, true}).isOk());
  }
  for (const char* spid : {"0001", "0002", "0003"}) {
    auto taken = f.leases->take(spid);
    REQUIRE(taken.isOk());
    REQUIRE(taken->acquired);
    f.leases->hold(spid, taken->lease.epoch, f.clock.now());
  }
}

}  // namespace

TEST_CASE("Every lease due is renewed in one transaction") {
  LeasesFixture f;
  takeThree(f);
  f.clock.advance(2s);  // past a third of the default 5 s
  CommitCounter counter(*f.db);
  CHECK(f.leases->renewDue().empty());
  CHECK(counter.commits == 1);
  for (const char* spid : {"0001", "0002", "0003"}) {
    CHECK(db::LeaseStore(*f.db).get(spid).value()->expires_at == f.clock.wallMs() + 5000);
    CHECK(f.leases->valid(spid));
  }
}

TEST_CASE("A lease another node took is lost while the others of the same renewal are renewed") {
  LeasesFixture f;
  REQUIRE(db::ProviderStore(*f.db).add({"0002", "Provider 0002", db::SystemType::kSoa, true}).isOk());
  f.take();
  f.clock.advance(6s);  // past the 5 s lease of 0001: node b takes it
  REQUIRE(db::LeaseStore(*f.db).acquire("0001", "b", f.clock.wallMs(), 5000).value().acquired);
  auto taken = f.leases->take("0002");
  REQUIRE(taken->acquired);
  f.leases->hold("0002", taken->lease.epoch, f.clock.now() - 2s);  // due as well
  auto lost = f.leases->renewDue();
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].spid == "0001");
  CHECK_FALSE(f.leases->held("0001"));
  CHECK(f.leases->valid("0002"));
  CHECK(db::LeaseStore(*f.db).get("0002").value()->expires_at == f.clock.wallMs() + 5000);
  CHECK(db::LeaseStore(*f.db).get("0001").value()->owner == "b");
}

TEST_CASE("Leases that cannot be written are not renewed and the node stops acting for their providers") {
  LeasesFixture f;
  f.take();
  f.clock.advance(2s);
  REQUIRE(f.db->execute("PRAGMA query_only = 1").isOk());  // every write now refused
  CHECK(f.leases->renewDue().empty());
  CHECK(f.leases->held("0001"));
  CHECK(f.leases->valid("0001"));  // 2 s after the take: within 4/5 of 5 s
  f.clock.advance(2s);             // 4 s after the take, never renewed
  CHECK(f.leases->renewDue().empty());
  CHECK_FALSE(f.leases->valid("0001"));
  REQUIRE(f.db->execute("PRAGMA query_only = 0").isOk());
  CHECK(f.leases->renewDue().empty());
  CHECK(f.leases->valid("0001"));  // renewed again: it acts for the provider again
}

TEST_CASE("Leases released together are one transaction and each may be taken by another node at once") {
  LeasesFixture f;
  takeThree(f);
  f.clock.advance(1s);
  {
    CommitCounter counter(*f.db);
    f.leases->release(f.leases->heldSpids());
    CHECK(counter.commits == 1);
  }
  CHECK(f.leases->heldSpids().empty());
  for (const char* spid : {"0001", "0002", "0003"}) {
    CHECK(db::LeaseStore(*f.db).acquire(spid, "b", f.clock.wallMs(), 5000).value().acquired);
  }
}
