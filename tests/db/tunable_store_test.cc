#include "db/tunable_store.h"

#include <catch2/catch.hpp>

#include "db/audit_store.h"
#include "db/database.h"
#include "db/transaction.h"
#include "fixtures.h"

using namespace npac::db;
using npac::db::testing::TempDir;
using npac::db::testing::openFresh;

TEST_CASE("A tunable without an override reads as absent") {
  TempDir dir;
  auto db = openFresh(dir);
  TunableStore store(*db);
  auto got = store.get("srr", "0001");
  REQUIRE(got.isOk());
  CHECK_FALSE(got->has_value());
}

TEST_CASE("Global and per-provider overrides of one tunable are kept apart") {
  TempDir dir;
  auto db = openFresh(dir);
  TunableStore store(*db);
  REQUIRE(store.set({"response_timeout", "", "900s", 1000, "alice"}).isOk());
  REQUIRE(store.set({"response_timeout", "0001", "600s", 2000, "bob"}).isOk());
  auto global = store.get("response_timeout");
  auto provider = store.get("response_timeout", "0001");
  REQUIRE(global.isOk());
  REQUIRE(provider.isOk());
  CHECK(**global == TunableOverride{"response_timeout", "", "900s", 1000, "alice"});
  CHECK(**provider == TunableOverride{"response_timeout", "0001", "600s", 2000, "bob"});
  CHECK_FALSE(store.get("response_timeout", "0002")->has_value());
}

TEST_CASE("Setting an override again replaces value, time and actor") {
  TempDir dir;
  auto db = openFresh(dir);
  TunableStore store(*db);
  REQUIRE(store.set({"srr", "0001", "off", 1000, "alice"}).isOk());
  REQUIRE(store.set({"srr", "0001", "on", 5000, "bob"}).isOk());
  auto all = store.list();
  REQUIRE(all.isOk());
  REQUIRE(all->size() == 1);
  CHECK(all->front() == TunableOverride{"srr", "0001", "on", 5000, "bob"});
}

TEST_CASE("Clearing an override reports whether one existed") {
  TempDir dir;
  auto db = openFresh(dir);
  TunableStore store(*db);
  REQUIRE(store.set({"srr", "0001", "on", 1, "alice"}).isOk());
  CHECK(store.clear("srr", "0001").value());
  CHECK_FALSE(store.clear("srr", "0001").value());
  CHECK_FALSE(store.get("srr", "0001")->has_value());
}

TEST_CASE("Listing overrides orders by name with the global scope first") {
  TempDir dir;
  auto db = openFresh(dir);
  TunableStore store(*db);
  REQUIRE(store.set({"srr", "0002", "on", 1, "a"}).isOk());
  REQUIRE(store.set({"bind_timeout", "", "30s", 1, "a"}).isOk());
  REQUIRE(store.set({"srr", "", "off", 1, "a"}).isOk());
  auto all = store.list();
  REQUIRE(all.isOk());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].name == "bind_timeout");
  CHECK((*all)[1].name == "srr");
  CHECK((*all)[1].isGlobal());
  CHECK((*all)[2].spid == "0002");
  auto srr = store.listByName("srr");
  REQUIRE(srr.isOk());
  CHECK(srr->size() == 2);
}

TEST_CASE("An override scope that is neither global nor a SPID is refused") {
  TempDir dir;
  auto db = openFresh(dir);
  TunableStore store(*db);
  Status status = store.set({"srr", "TOOLONG", "on", 1, "a"});
  CHECK(status.code() == Status::Code::kInvalidArgument);
  CHECK(store.list()->empty());
}

TEST_CASE("An override and its audit entry roll back together") {
  TempDir dir;
  auto db = openFresh(dir);
  TunableStore tunables(*db);
  AuditStore audit(*db);
  {
    Transaction txn(*db);
    REQUIRE(txn.begin().isOk());
    REQUIRE(tunables.set({"srr", "0001", "on", 10, "alice"}).isOk());
    REQUIRE(audit.append({0, 10, "alice", "tunable.set", "srr@0001", "off", "on"}).isOk());
  }  // not committed
  CHECK(tunables.list()->empty());
  CHECK(audit.recent(10)->empty());
}
