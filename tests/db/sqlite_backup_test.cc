// The copy of a live SQLite database and the check of a copy (db/sqlite_backup.h), on real
// files: a copy made while another connection commits is one commit's state, owner-only,
// never over an existing file; an interrupted copy leaves nothing; every kind of file that
// is not a sound npacd database is told apart.
#include "db/sqlite_backup.h"

#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "db/database.h"
#include "db/migrations.h"
#include "db/outbound_queue.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

std::unique_ptr<Database> openSqlite(const std::string& path) {
  Result<std::unique_ptr<Database>> db = Database::open(path);
  INFO(db.status().toString());
  REQUIRE(db.isOk());
  return std::move(db).value();
}

std::int64_t count(Database& db, const std::string& table) {
  Result<Statement> query = db.prepare("SELECT count(*) FROM " + table);
  REQUIRE(query.isOk());
  REQUIRE(query->step().value());
  return query->columnInt64(0);
}

}  // namespace

TEST_CASE("A copy taken while another connection commits holds exactly the commits before it", "[sqlite]") {
  TempDir dir;
  const std::string source = dir.file("npacd.db");
  auto db = openSqlite(source);
  // Each commit adds one row to each of two tables: a copy that is one commit's state
  // has as many rows in both.
  REQUIRE(db->executeScript("CREATE TABLE left_rows(x INTEGER); CREATE TABLE right_rows(x INTEGER);").isOk());
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> begun{0};    // counted before BEGIN
  std::atomic<std::int64_t> commits{0};  // counted after COMMIT
  std::atomic<bool> failed{false};
  std::string failure;  // the writer's first failure, read after it is joined
  // Catch2's assertions are for the test's thread: the writer only reports a failure.
  auto own = openSqlite(source);
  std::thread writer([&] {
    for (std::int64_t i = 0; !stop && !failed; ++i) {
      const std::string n = std::to_string(i);
      ++begun;
      for (const std::string& sql : {std::string("BEGIN"), "INSERT INTO left_rows VALUES(" + n + ")",
                                      "INSERT INTO right_rows VALUES(" + n + ")", std::string("COMMIT")}) {
        if (Status status = own->execute(sql); !status.isOk() && !failed) {
          failure = sql + ": " + status.toString();
          failed = true;
        }
      }
      ++commits;
    }
  });
  while (commits < 200 && !failed) std::this_thread::yield();
  const std::int64_t before = commits;
  SqliteCopier copier;
  const std::string target = dir.file("copy.db");
  Status copied = copier.copy(source, target);
  const std::int64_t after = begun;
  stop = true;
  writer.join();
  INFO(failure);
  REQUIRE_FALSE(failed);
  INFO(copied.toString());
  REQUIRE(copied.isOk());
  auto copy = openSqlite(target);
  const std::int64_t rows = count(*copy, "left_rows");
  CHECK(rows == count(*copy, "right_rows"));
  CHECK(rows >= before);
  CHECK(rows <= after);
}

TEST_CASE("A copy is created owner-only and never over an existing file", "[sqlite]") {
  TempDir dir;
  const std::string source = dir.file("npacd.db");
  auto db = openSqlite(source);
  addProvider(*db, "0001");
  SqliteCopier copier;
  REQUIRE(copier.copy(source, dir.file("copy.db")).isOk());
  struct stat st{};
  REQUIRE(::stat(dir.file("copy.db").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  std::ofstream(dir.file("taken.db")) << "keep me";
  Status refused = SqliteCopier().copy(source, dir.file("taken.db"));
  CHECK(refused.code() == Status::Code::kCantOpen);
  CHECK_THAT(refused.message(), Catch::Contains("File exists"));
  std::ifstream kept(dir.file("taken.db"));
  std::string text;
  std::getline(kept, text);
  CHECK(text == "keep me");

  Status nowhere = SqliteCopier().copy(source, dir.file("no-such-dir/copy.db"));
  CHECK(nowhere.code() == Status::Code::kCantOpen);
}

TEST_CASE("An interrupted copy fails as shutting down and leaves no file", "[sqlite]") {
  TempDir dir;
  const std::string source = dir.file("npacd.db");
  auto db = openSqlite(source);
  SqliteCopier copier;
  copier.interrupt();  // npacd stopping before the worker got to it
  Status copied = copier.copy(source, dir.file("copy.db"));
  CHECK(copied.code() == Status::Code::kShutdown);
  CHECK_FALSE(std::filesystem::exists(dir.file("copy.db")));
}

TEST_CASE("A copy of a database that does not exist fails and leaves no file", "[sqlite]") {
  TempDir dir;
  Status copied = SqliteCopier().copy(dir.file("absent.db"), dir.file("copy.db"));
  CHECK(copied.code() == Status::Code::kCantOpen);
  CHECK_FALSE(std::filesystem::exists(dir.file("copy.db")));
}

TEST_CASE("Inspecting a copy counts what it holds at its schema version", "[sqlite]") {
  TempDir dir;
  const std::string source = dir.file("npacd.db");
  auto db = openSqlite(source);
  addProvider(*db, "0001");
  addProvider(*db, "0002");
  REQUIRE(db->executeScript("INSERT INTO message_bodies(id, pdu, addressees) VALUES(1, x'00', 2); "
                      "INSERT INTO outbound_queue(spid, function_mask, priority, body_id, created_at, state) "
                      "VALUES('0001', 16, 0, 1, 1, 'queued'), ('0001', 16, 0, 1, 1, 'acknowledged')")
              .isOk());
  REQUIRE(SqliteCopier().copy(source, dir.file("copy.db")).isOk());
  Result<BackupSummary> summary = inspectSqliteBackup(dir.file("copy.db"));
  INFO(summary.status().toString());
  REQUIRE(summary.isOk());
  CHECK(summary->sound());
  CHECK(summary->schema_version == kCurrentSchemaVersion);
  CHECK(summary->last_compatible_version == kCompatibleSchemaVersion);
  CHECK(summary->providers == 2);
  CHECK(summary->messages == 2);
  CHECK(summary->unacknowledged == 1);
  // Inspecting changed nothing: no journal files appeared beside the copy.
  CHECK_FALSE(std::filesystem::exists(dir.file("copy.db-wal")));
  CHECK_FALSE(std::filesystem::exists(dir.file("copy.db-shm")));
}

TEST_CASE("Inspecting a file that is not a sound npacd database says which it is", "[sqlite]") {
  TempDir dir;
  SECTION("a missing file") {
    CHECK(inspectSqliteBackup(dir.file("absent.db")).status().code() == Status::Code::kCantOpen);
  }
  SECTION("text") {
    std::ofstream(dir.file("notes.txt")) << std::string(8192, 'x');
    CHECK(inspectSqliteBackup(dir.file("notes.txt")).status().code() == Status::Code::kCorrupt);
  }
  SECTION("an empty file") {
    std::ofstream(dir.file("empty.db")).flush();
    Result<BackupSummary> empty = inspectSqliteBackup(dir.file("empty.db"));
    CHECK(empty.status().code() == Status::Code::kInvalidArgument);
  }
  SECTION("another application's SQLite database") {
    {
      auto other = openSqlite(dir.file("other.db"));  // npacd's schema, then its meta table dropped
      REQUIRE(other->execute("DROP TABLE meta").isOk());
    }
    Result<BackupSummary> other = inspectSqliteBackup(dir.file("other.db"));
    CHECK(other.status().code() == Status::Code::kInvalidArgument);
    CHECK_THAT(other.status().message(), Catch::Contains("not npacd's"));
  }
  SECTION("a damaged page") {
    const std::string source = dir.file("npacd.db");
    {
      auto db = openSqlite(source);
      for (int i = 0; i < 50; ++i) addProvider(*db, std::string("p").append(std::to_string(100 + i)));  // not "p" + …: g++ 12 -Wrestrict
    }
    REQUIRE(SqliteCopier().copy(source, dir.file("copy.db")).isOk());
    // Overwrite the second page (a table's b-tree page) with garbage; the file's header
    // (page 1) stays, so SQLite opens it and finds the damage only by reading the pages.
    {
      std::fstream file(dir.file("copy.db"), std::ios::in | std::ios::out | std::ios::binary);
      file.seekp(4096);
      const std::string garbage(4096, '\x5a');
      file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    }
    Result<BackupSummary> damaged = inspectSqliteBackup(dir.file("copy.db"));
    INFO(damaged.status().toString());
    REQUIRE(damaged.isOk());
    CHECK_FALSE(damaged->sound());
  }
}
