#include "db/database.h"

#include <catch2/catch.hpp>

#include "db/migrations.h"
#include "db/transaction.h"
#include "temp_dir.h"

using namespace npac::db;
using npac::db::testing::TempDir;

namespace {

std::unique_ptr<Database> openScratch(const std::string& path) {
  OpenOptions options;
  options.apply_schema = false;
  Result<std::unique_ptr<Database>> db = Database::open(path, options);
  REQUIRE(db.isOk());
  REQUIRE(db->get()->execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)").isOk());
  return std::move(db).value();
}

std::int64_t countRows(Database& db) {
  Result<Statement> count = db.prepare("SELECT count(*) FROM t");
  REQUIRE(count.isOk());
  REQUIRE(count->step().value());
  return count->columnInt64(0);
}

std::string pragmaText(Database& db, const std::string& pragma) {
  Result<Statement> query = db.prepare("PRAGMA " + pragma);
  REQUIRE(query.isOk());
  REQUIRE(query->step().value());
  return query->columnText(0);
}

}  // namespace

TEST_CASE("Opening a new file uses WAL, foreign keys and full synchronous by default", "[sqlite]") {
  TempDir dir;
  Result<std::unique_ptr<Database>> db = Database::open(dir.file("npacd.db"));
  REQUIRE(db.isOk());
  Database& database = **db;
  CHECK(pragmaText(database, "journal_mode") == "wal");
  CHECK(pragmaText(database, "foreign_keys") == "1");
  CHECK(pragmaText(database, "synchronous") == "2");  // FULL
  CHECK(database.durability() == Durability::kFull);
}

TEST_CASE("Durability normal sets synchronous NORMAL", "[sqlite]") {
  TempDir dir;
  OpenOptions options;
  options.durability = Durability::kNormal;
  Result<std::unique_ptr<Database>> db = Database::open(dir.file("npacd.db"), options);
  REQUIRE(db.isOk());
  CHECK(pragmaText(**db, "synchronous") == "1");  // NORMAL
}

TEST_CASE("A connection keeps its statement journals and temporary tables in memory", "[sqlite]") {
  TempDir dir;
  Result<std::unique_ptr<Database>> db = Database::open(dir.file("npacd.db"));
  REQUIRE(db.isOk());
  CHECK(pragmaText(**db, "temp_store") == "2");  // MEMORY
}

TEST_CASE("Durability names parse and print", "[sqlite]") {
  CHECK(parseDurability("full") == Durability::kFull);
  CHECK(parseDurability("normal") == Durability::kNormal);
  CHECK_FALSE(parseDurability("off").has_value());
  CHECK(std::string(toString(Durability::kNormal)) == "normal");
}

TEST_CASE("A prepared statement is reused from the cache", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  const std::size_t before = db->preparedStatementCount();
  for (int i = 0; i < 10; ++i) {
    Result<Statement> insert = db->prepare("INSERT INTO t(k, v) VALUES(?, ?)");
    REQUIRE(insert.isOk());
    insert->bindInt64(0, i).bindText(1, "v");
    REQUIRE(insert->run().isOk());
  }
  CHECK(db->preparedStatementCount() == before + 1);
  CHECK(countRows(*db) == 10);
}

TEST_CASE("A statement with the same text used while the cached one is busy gets a private copy", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'a'), (2, 'b')").isOk());
  Result<Statement> outer = db->prepare("SELECT k FROM t ORDER BY k");
  REQUIRE(outer.isOk());
  REQUIRE(outer->step().value());
  CHECK(outer->columnInt64(0) == 1);
  {
    Result<Statement> inner = db->prepare("SELECT k FROM t ORDER BY k");
    REQUIRE(inner.isOk());
    REQUIRE(inner->step().value());
    CHECK(inner->columnInt64(0) == 1);
  }
  REQUIRE(outer->step().value());
  CHECK(outer->columnInt64(0) == 2);  // the outer cursor was not disturbed
}

TEST_CASE("Bound text is stored verbatim, never interpreted as SQL", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  const std::string hostile = "x'); DROP TABLE t; --";
  Result<Statement> insert = db->prepare("INSERT INTO t(k, v) VALUES(?, ?)");
  REQUIRE(insert.isOk());
  insert->bindInt64(0, 1).bindText(1, hostile);
  REQUIRE(insert->run().isOk());
  Result<Statement> read = db->prepare("SELECT v FROM t WHERE k = 1");
  REQUIRE(read->step().value());
  CHECK(read->columnText(0) == hostile);
}

TEST_CASE("A bound double reads back exactly", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  REQUIRE(db->execute("CREATE TABLE d(k INTEGER PRIMARY KEY, x REAL)").isOk());
  Result<Statement> insert = db->prepare("INSERT INTO d(k, x) VALUES(?, ?)");
  REQUIRE(insert.isOk());
  insert->bindInt64(0, 1).bindDouble(1, 0.1);
  REQUIRE(insert->run().isOk());
  Result<Statement> read = db->prepare("SELECT x FROM d WHERE k = 1");
  REQUIRE(read->step().value());
  CHECK(read->columnDouble(0) == 0.1);
}

TEST_CASE("A transaction that is not committed rolls back", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  {
    Transaction txn(*db);
    REQUIRE(txn.begin().isOk());
    REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'a')").isOk());
    CHECK(countRows(*db) == 1);
  }
  CHECK(countRows(*db) == 0);
  CHECK_FALSE(db->inTransaction());
}

TEST_CASE("A committed transaction persists across reopening", "[sqlite]") {
  TempDir dir;
  {
    auto db = openScratch(dir.file("x.db"));
    Transaction txn(*db);
    REQUIRE(txn.begin().isOk());
    REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'a')").isOk());
    REQUIRE(txn.commit().isOk());
  }
  OpenOptions options;
  options.apply_schema = false;
  auto reopened = Database::open(dir.file("x.db"), options);
  REQUIRE(reopened.isOk());
  CHECK(countRows(**reopened) == 1);
}

TEST_CASE("A nested transaction rolls back alone while the outer one commits", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  Transaction outer(*db);
  REQUIRE(outer.begin().isOk());
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'kept')").isOk());
  {
    Transaction inner(*db);
    REQUIRE(inner.begin().isOk());
    REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(2, 'dropped')").isOk());
  }
  {
    Transaction inner(*db);
    REQUIRE(inner.begin().isOk());
    REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(3, 'kept too')").isOk());
    REQUIRE(inner.commit().isOk());
  }
  REQUIRE(outer.commit().isOk());
  CHECK(countRows(*db) == 2);
  Result<Statement> missing = db->prepare("SELECT count(*) FROM t WHERE k = 2");
  REQUIRE(missing->step().value());
  CHECK(missing->columnInt64(0) == 0);
}

TEST_CASE("A failing statement reports SQLite's code, message and the file", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'a')").isOk());
  Status status = db->execute("INSERT INTO t(k, v) VALUES(1, 'again')");
  REQUIRE_FALSE(status.isOk());
  CHECK(status.code() == Status::Code::kConstraint);
  CHECK(status.sqliteCode() == 19);          // SQLITE_CONSTRAINT
  CHECK(status.extendedCode() == 1555);      // SQLITE_CONSTRAINT_PRIMARYKEY
  CHECK(status.file() == dir.file("x.db"));
  CHECK(status.toString().find("UNIQUE constraint failed") != std::string::npos);
}

TEST_CASE("Syntax errors in SQL come back as an internal error value", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  Result<Statement> bad = db->prepare("SELEKT 1");
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.status().code() == Status::Code::kInternal);
  CHECK(bad.status().message().find("syntax error") != std::string::npos);
}

TEST_CASE("Integrity check of a sound file reports no problems", "[sqlite]") {
  TempDir dir;
  auto db = Database::open(dir.file("npacd.db"));
  REQUIRE(db.isOk());
  Result<std::vector<std::string>> problems = db->get()->integrityCheck();
  REQUIRE(problems.isOk());
  CHECK(problems->empty());
}

TEST_CASE("A bind to a parameter that does not exist is reported by the next step", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  Result<Statement> insert = db->prepare("INSERT INTO t(k, v) VALUES(?, ?)");
  REQUIRE(insert.isOk());
  insert->bindInt64(0, 1).bindText(1, "a").bindText(2, "no such parameter");
  Status status = insert->run();
  REQUIRE_FALSE(status.isOk());
  CHECK(status.sqliteCode() == 25);  // SQLITE_RANGE
  CHECK(status.message().find("binding parameter 2") != std::string::npos);
  CHECK(countRows(*db) == 0);
}

TEST_CASE("A statement handed back to the cache starts clean for its next user", "[sqlite]") {
  TempDir dir;
  auto db = openScratch(dir.file("x.db"));
  {
    Result<Statement> insert = db->prepare("INSERT INTO t(k, v) VALUES(?, ?)");
    insert->bindInt64(0, 1).bindText(1, "first");
    REQUIRE(insert->run().isOk());
  }
  Result<Statement> again = db->prepare("INSERT INTO t(k, v) VALUES(?, ?)");
  again->bindInt64(0, 2);  // v left unbound: must be NULL, not "first"
  REQUIRE(again->run().isOk());
  Result<Statement> read = db->prepare("SELECT v IS NULL FROM t WHERE k = 2");
  REQUIRE(read->step().value());
  CHECK(read->columnBool(0));
}
