#include "db/audit_store.h"

#include <catch2/catch.hpp>

#include "db/database.h"
#include "fixtures.h"

using namespace npac::db;
using npac::db::testing::TempDir;
using npac::db::testing::databaseLocation;

TEST_CASE("Audit entries read back exactly, including absent old and new values") {
  TempDir dir;
  auto db = Database::open(databaseLocation(dir));
  REQUIRE(db.isOk());
  AuditStore audit(**db);
  AuditEntry created{0, 100, "alice", "provider.add", "provider 0001", std::nullopt, "Acme"};
  AuditEntry changed{0, 200, "bob", "tunable.set", "srr@0001", "off", "on"};
  auto first = audit.append(created);
  auto second = audit.append(changed);
  REQUIRE(first.isOk());
  REQUIRE(second.isOk());
  CHECK(*second > *first);
  created.id = *first;
  changed.id = *second;
  auto all = audit.between(0, 1000);
  REQUIRE(all.isOk());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0] == created);
  CHECK((*all)[1] == changed);
}

TEST_CASE("Audit time range is half-open and recent lists newest first") {
  TempDir dir;
  auto db = Database::open(databaseLocation(dir));
  REQUIRE(db.isOk());
  AuditStore audit(**db);
  for (int at : {100, 200, 300}) {
    REQUIRE(audit.append({0, at, "op", "tunable.set", "x", "a", "b"}).isOk());
  }
  auto range = audit.between(100, 300);
  REQUIRE(range.isOk());
  REQUIRE(range->size() == 2);
  CHECK((*range)[0].at == 100);
  CHECK((*range)[1].at == 200);
  auto recent = audit.recent(2);
  REQUIRE(recent.isOk());
  REQUIRE(recent->size() == 2);
  CHECK((*recent)[0].at == 300);
  CHECK((*recent)[1].at == 200);
}

TEST_CASE("An audit entry without actor or action is refused") {
  TempDir dir;
  auto db = Database::open(databaseLocation(dir));
  REQUIRE(db.isOk());
  AuditStore audit(**db);
  CHECK(audit.append({0, 1, "", "tunable.set", "x", {}, {}}).status().code() ==
        Status::Code::kInvalidArgument);
  CHECK(audit.recent(10)->empty());
}
