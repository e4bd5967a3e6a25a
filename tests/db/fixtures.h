// Shared helpers for tests/db: a fresh npacd database with providers, on the backend the
// test run is for.
//
// db_tests runs twice under CTest (tests/CMakeLists.txt): as `db/…` on SQLite files, and
// as `db-postgres/…` with NPAC_TEST_PG naming the test PostgreSQL cluster the suite
// started (tests/pg/cluster.sh). One test body, two backends: a test names its database
// through databaseLocation(dir) — the SQLite file in its TempDir, or a fresh PostgreSQL
// database made for that TempDir (dropped when the test process ends). Test cases about
// SQLite's own files (modes, locks, WAL, disk full) are tagged [sqlite] and run only on
// SQLite; those about PostgreSQL only are tagged [postgres].
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "temp_dir.h"
#include "tests/support/eventually.h"
#include "tests/support/postgres_test_database.h"

namespace npac::db::testing {

// The SOA management function mask bit (association function mask), as a message's
// recipient mask in the queue tests.
inline constexpr std::uint32_t kSoaMgmt = 0x1;

// The test cluster's base URL when this run is the PostgreSQL one.
inline std::optional<std::string> postgresServerUrl() { return npac::testing::postgresTestServerUrl(); }

inline bool onPostgres() { return postgresServerUrl().has_value(); }

// Where the test's npacd database lives: dir's npacd.db, or on a PostgreSQL run the URL
// of a database made for `dir` (the same one each time it is asked, so a test may reopen it).
inline std::string databaseLocation(const TempDir& dir) {
  const std::optional<std::string> server = postgresServerUrl();
  if (!server) return dir.file("npacd.db");
  static std::map<std::string, std::unique_ptr<npac::testing::PostgresTestDatabase>> made;
  auto& slot = made[dir.path()];
  if (!slot) slot = std::make_unique<npac::testing::PostgresTestDatabase>();
  return slot->url();
}

inline std::unique_ptr<Database> openFresh(const TempDir& dir, OpenOptions options = {}) {
  Result<std::unique_ptr<Database>> db = Database::open(databaseLocation(dir), options);
  INFO(db.status().toString());
  REQUIRE(db.isOk());
  return std::move(db).value();
}

inline void addProvider(Database& db, const std::string& spid,
                        SystemType type = SystemType::kSoa) {
  ProviderStore providers(db);
  Status status = providers.add({spid, "Provider " + spid, type, true});
  INFO(status.toString());
  REQUIRE(status.isOk());
}

// Moves `spid`'s settled mark as far as it goes at `now` (one settle() walks a bounded
// number of rows per priority). The retention purge deletes acknowledged rows only at or
// below the mark (schema 11): a test that purges settles first, as npacd's turns do.
inline MessageId settleAll(OutboundQueue& queue, const std::string& spid, TimeMs now) {
  MessageId mark = 0;
  for (;;) {
    Result<MessageId> next = queue.settle(spid, now);
    INFO(next.status().toString());
    REQUIRE(next.isOk());
    if (*next == mark) return mark;
    mark = *next;
  }
}

// Schema 13 on an upgraded database: a group with a member and a report can be written,
// and deleting the group deletes its member and report (ON DELETE CASCADE), both engines.
inline void checkThrottleTablesCascade(Database& db) {
  REQUIRE(db.executeScript(
                "INSERT INTO throttle_groups VALUES('bureau-a', 50, 200, 100, 80, 0, 0, 0, 0, 2000, 50, 1, 'a');"
                "INSERT INTO throttle_group_members(spid, name) VALUES('0001', 'bureau-a');"
                "INSERT INTO throttle_reports VALUES('bureau-a', 'node-1', 2.5, 1, 0, 1);"
                "DELETE FROM throttle_groups;")
              .isOk());
  auto left = db.prepare("SELECT (SELECT count(*) FROM throttle_group_members) + (SELECT count(*) FROM throttle_reports)");
  REQUIRE(left->step().value());
  CHECK(left->columnInt(0) == 0);
}

// PostgreSQL: whether a session of this test's database shows up waiting for a lock
// within 5 s (looked at every 10 ms) — another connection's statement blocked on a row
// lock the test holds.
inline bool someoneWaitsForALock(const TempDir& dir) {
  auto watcher = openFresh(dir);
  return ::npac::testing::eventually(
      [&] {
        auto query = watcher->prepare(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        REQUIRE(query.isOk());
        REQUIRE(*query->step());
        return query->columnInt64(0) > 0;
      },
      std::chrono::seconds(5), std::chrono::milliseconds(10));
}

}  // namespace npac::db::testing
