// The PostgreSQL side of Database (db/postgres_connection.h), on the suite's own
// PostgreSQL cluster. The behaviour both engines share is covered by the store tests,
// which run on both; these cases are about what only PostgreSQL has.
#include <catch2/catch.hpp>

#include <libpq-fe.h>

#include <limits>
#include <map>
#include <set>
#include <thread>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/migrations.h"
#include "db/postgres_array.h"
#include "db/postgres_connection.h"
#include "db/storage_health.h"
#include "db/transaction.h"
#include "fixtures.h"
#include "tests/support/eventually.h"
#include "tests/support/private_cluster.h"

using namespace npac::db;
using namespace npac::db::testing;
using npac::testing::eventually;

namespace {

std::unique_ptr<Database> openScratch(const TempDir& dir) {
  OpenOptions options;
  options.apply_schema = false;
  Result<std::unique_ptr<Database>> db = Database::open(databaseLocation(dir), options);
  INFO(db.status().toString());
  REQUIRE(db.isOk());
  REQUIRE(db->get()->execute("CREATE TABLE t(k BIGINT PRIMARY KEY, v TEXT, b BYTEA)").isOk());
  return std::move(db).value();
}

std::int64_t countRows(Database& db) {
  Result<Statement> count = db.prepare("SELECT count(*) FROM t");
  REQUIRE(count.isOk());
  REQUIRE(count->step().value());
  return count->columnInt64(0);
}

}  // namespace

TEST_CASE("Placeholders outside quotes are numbered for PostgreSQL") {
  int count = 0;
  CHECK(numberPlaceholders("SELECT ? , '?' , \"a?\" , ?", &count) == "SELECT $1 , '?' , \"a?\" , $2");
  CHECK(count == 2);
  CHECK(numberPlaceholders("SELECT 1", &count) == "SELECT 1");
  CHECK(count == 0);
}

TEST_CASE("A PostgreSQL URL's password never appears in the database's name") {
  CHECK(redactPostgresUrl("postgresql://npacd:s3cret@db1:5432/npac") == "postgresql://npacd:***@db1:5432/npac");
  CHECK(redactPostgresUrl("postgresql://npacd@db1/npac") == "postgresql://npacd@db1/npac");
  CHECK(redactPostgresUrl("postgres://db1/npac?user=a") == "postgres://db1/npac?user=a");
  CHECK(redactPostgresUrl("postgresql://db1/npac?user=a&password=hunter2&sslmode=require") ==
        "postgresql://db1/npac?user=a&password=***&sslmode=require");
  CHECK(redactPostgresUrl("postgresql://u:p@db1/npac?password=x") == "postgresql://u:***@db1/npac?password=***");
  // An '@' after the authority (RFC 3986 §3.2) is not a userinfo's end.
  CHECK(redactPostgresUrl("postgresql://db1/npac?application_name=a:b@c") == "postgresql://db1/npac?application_name=a:b@c");
  CHECK(isPostgresUrl("postgres://x/y"));
  CHECK(isPostgresUrl("postgresql://x/y"));
  CHECK_FALSE(isPostgresUrl("var/npacd.db"));
}

TEST_CASE("A PostgreSQL database opens at the current schema version", "[postgres]") {
  TempDir dir;
  auto db = openFresh(dir);
  CHECK(db->backend() == Backend::kPostgres);
  Result<SchemaVersion> version = readSchemaVersion(*db);
  REQUIRE(version.isOk());
  CHECK(version->version == kCurrentSchemaVersion);
  CHECK(version->last_compatible_version == kCompatibleSchemaVersion);
}

namespace {

// What a database of the current schema was at schema 7: the PDU on the queue row, no
// message_bodies, no delivery progress tables (schema 9), no settled counts (schema 11), no
// retention notes (schema 12), no throttle groups (schema 13).
constexpr const char* kBackToSchema7 =
    "DROP TABLE throttle_reports; DROP TABLE throttle_group_members; DROP TABLE throttle_groups; "
    "DROP TABLE delivery_marks; DROP TABLE delivery_late; DROP TABLE delivery_settled_counts; DROP TABLE delivery_progress; DROP TABLE delivery_settled; DROP TABLE delivery_open; DROP INDEX outbound_queue_open_base; DROP TABLE message_bodies; ALTER TABLE outbound_queue DROP COLUMN body_id; "
    "ALTER TABLE outbound_queue ADD COLUMN pdu BYTEA NOT NULL; UPDATE meta SET value = 7 WHERE key = 'version'; ";
// What it was at schema 12: no throttle groups.
constexpr const char* kBackToSchema12 =
    "DROP TABLE throttle_reports; DROP TABLE throttle_group_members; DROP TABLE throttle_groups; "
    "UPDATE meta SET value = 12 WHERE key = 'version'; ";

}  // namespace

TEST_CASE("A PostgreSQL database at schema 12 gains the throttle group tables and stays usable by npacd of schema 12",
          "[postgres]") {
  TempDir dir;
  {
    auto db = openFresh(dir);
    REQUIRE(db->executeScript(kBackToSchema12).isOk());
  }
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  CHECK(readSchemaVersion(*db)->last_compatible_version == 12);
  checkThrottleTablesCascade(*db);  // the members and reports go with their group
}

TEST_CASE("A PostgreSQL database at schema 7 moves each queued PDU to a body of its own, ids kept",
          "[postgres]") {
  TempDir dir;
  {
    auto db = openFresh(dir);
    REQUIRE(db->executeScript(std::string(kBackToSchema7) +
                              "INSERT INTO service_providers(spid, name, system_type) VALUES('0001', 'a', 'soa'); "
                              "INSERT INTO outbound_queue(id, spid, function_mask, created_at, state, pdu) "
                              "VALUES(40, '0001', 1, 1, 'queued', '\\x3003020105'), "
                              "(41, '0001', 1, 1, 'sent', '\\xffff');")
                .isOk());
  }
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  OutboundQueue queue(*db);
  CHECK(queue.get(40)->pdu == Bytes{0x30, 0x03, 0x02, 0x01, 0x05});
  CHECK(queue.get(41)->pdu == Bytes{0xff, 0xff});
  CHECK(queue.get(41)->state == MessageState::kSent);
  // A new body is numbered above the moved ones (the identity's sequence was set past them).
  auto next = queue.appendBatch(std::vector<NewMessage>{{"0001", 1, 0, Bytes{0x01}}}, 2);
  REQUIRE(next.isOk());
  CHECK(queue.get(next->front())->pdu == Bytes{0x01});
  auto body = db->prepare("SELECT max(id) FROM message_bodies");
  REQUIRE(body.isOk());
  REQUIRE(*body->step());
  CHECK(body->columnInt64(0) == 42);
}

TEST_CASE("A PostgreSQL database at schema 6 gains the lease table and draws association ids above every recorded one",
          "[postgres]") {
  TempDir dir;
  {
    auto db = openFresh(dir);
    // Back to what npacd of schema 6 left: no lease table, no sequence, ids up to 41, the
    // PDU on the queue row (schema 8 moved it).
    REQUIRE(db->executeScript(std::string(kBackToSchema7) + "DROP TABLE provider_leases; DROP SEQUENCE association_ids; "
                              "UPDATE meta SET value = 6 WHERE key = 'version'; "
                              "INSERT INTO association_log(at, event, spid, association_id) VALUES(1, 'bind', '0001', 41);")
                .isOk());
  }
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  auto next = db->prepare("SELECT nextval('association_ids')");
  REQUIRE(next.isOk());
  REQUIRE(*next->step());
  CHECK(next->columnInt64(0) == 42);
  CHECK(db->execute("SELECT count(*) FROM provider_leases").isOk());
}

TEST_CASE("Opening a PostgreSQL database twice leaves its schema as it was", "[postgres]") {
  TempDir dir;
  auto first = openFresh(dir);
  auto second = openFresh(dir);
  Result<SchemaVersion> version = readSchemaVersion(*second);
  REQUIRE(version.isOk());
  CHECK(version->version == kCurrentSchemaVersion);
}

TEST_CASE("A PostgreSQL database holding another application's tables is refused", "[postgres]") {
  TempDir dir;
  openScratch(dir);
  Result<std::unique_ptr<Database>> db = Database::open(databaseLocation(dir));
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCorrupt);
  CHECK(db.status().message().find("no npacd meta table") != std::string::npos);
}

TEST_CASE("A PostgreSQL constraint failure reports kConstraint with its SQLSTATE", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'a')").isOk());
  Status status = db->execute("INSERT INTO t(k, v) VALUES(1, 'again')");
  REQUIRE_FALSE(status.isOk());
  CHECK(status.code() == Status::Code::kConstraint);
  CHECK(status.sqlstate() == "23505");  // unique_violation
  CHECK(status.toString().find("SQLSTATE 23505") != std::string::npos);
}

TEST_CASE("Blobs with zero bytes and text with quotes round-trip through PostgreSQL", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  const Bytes blob{0x00, 0xff, 0x00, 0x5c, 0x78};
  Result<Statement> insert = db->prepare("INSERT INTO t(k, v, b) VALUES(?, ?, ?)");
  REQUIRE(insert.isOk());
  insert->bindInt64(0, 7).bindText(1, "it's '; DROP TABLE t; --").bindBlob(2, blob);
  REQUIRE(insert->run().isOk());
  CHECK(db->changes() == 1);
  Result<Statement> read = db->prepare("SELECT v, b, k FROM t WHERE k = ?");
  read->bindInt64(0, 7);
  REQUIRE(read->step().value());
  CHECK(read->columnText(0) == "it's '; DROP TABLE t; --");
  CHECK(read->columnBlob(1) == blob);
  CHECK(read->columnInt64(2) == 7);
  CHECK_FALSE(read->step().value());
}

TEST_CASE("An unbound PostgreSQL parameter is NULL and a cached statement starts clean", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  {
    Result<Statement> insert = db->prepare("INSERT INTO t(k, v) VALUES(?, ?)");
    insert->bindInt64(0, 1).bindText(1, "first");
    REQUIRE(insert->run().isOk());
  }
  Result<Statement> again = db->prepare("INSERT INTO t(k, v) VALUES(?, ?)");
  again->bindInt64(0, 2);
  REQUIRE(again->run().isOk());
  Result<Statement> read = db->prepare("SELECT v IS NULL FROM t WHERE k = 2");
  REQUIRE(read->step().value());
  CHECK(read->columnBool(0));
}

TEST_CASE("A PostgreSQL savepoint rolls back alone after a failed statement in it", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  Transaction outer(*db);
  REQUIRE(outer.begin().isOk());
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'kept')").isOk());
  {
    Transaction inner(*db);
    REQUIRE(inner.begin().isOk());
    REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(2, 'x')").isOk());
    CHECK_FALSE(db->execute("INSERT INTO t(k, v) VALUES(1, 'duplicate')").isOk());
  }  // rolled back to its savepoint: the outer transaction is usable again
  REQUIRE(outer.commit().isOk());
  CHECK(countRows(*db) == 1);
}

TEST_CASE("Committing a PostgreSQL transaction that failed is an error, not a silent rollback", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'a')").isOk());
  Transaction txn(*db);
  REQUIRE(txn.begin().isOk());
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(2, 'b')").isOk());
  CHECK_FALSE(db->execute("INSERT INTO t(k, v) VALUES(1, 'duplicate')").isOk());
  Status commit = txn.commit();
  REQUIRE_FALSE(commit.isOk());
  CHECK(commit.message().find("aborted by PostgreSQL") != std::string::npos);
  CHECK(countRows(*db) == 1);
}

TEST_CASE("A PostgreSQL connection killed by the server is re-established for the next statement", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'a')").isOk());
  Result<Statement> pid = db->prepare("SELECT pg_backend_pid()");
  REQUIRE(pid->step().value());
  const std::int64_t backend = pid->columnInt64(0);
  pid->reset();
  TempDir elsewhere;
  auto other = openFresh(elsewhere);  // another session of the same (superuser) role
  Result<Statement> kill = other->prepare("SELECT pg_terminate_backend(?)");
  kill->bindInt64(0, backend);
  REQUIRE(kill->step().value());
  // The first statement after the kill may fail (the server's goodbye arrives with it);
  // the one after it runs on a new session with the cached statements prepared again.
  if (Result<Statement> first = db->prepare("SELECT count(*) FROM t"); first.isOk()) (void)first->step();
  CHECK(countRows(*db) == 1);
  REQUIRE(pid->step().value());
  CHECK(pid->columnInt64(0) != backend);
}

TEST_CASE("A PostgreSQL transaction whose connection is lost is reported unavailable at commit", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  Result<Statement> pid = db->prepare("SELECT pg_backend_pid()");
  REQUIRE(pid->step().value());
  const std::int64_t backend = pid->columnInt64(0);
  pid->reset();
  Transaction txn(*db);
  REQUIRE(txn.begin().isOk());
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'a')").isOk());
  TempDir elsewhere;
  auto other = openFresh(elsewhere);
  Result<Statement> kill = other->prepare("SELECT pg_terminate_backend(?)");
  kill->bindInt64(0, backend);
  REQUIRE(kill->step().value());
  Status insert = db->execute("INSERT INTO t(k, v) VALUES(2, 'b')");
  CHECK(insert.code() == Status::Code::kUnavailable);
  // What the caller is told (npacd's API: 503 database_unavailable, retry), not an
  // internal error about an "earlier error".
  Status commit = txn.commit();
  INFO(commit.toString());
  CHECK(commit.code() == Status::Code::kUnavailable);
  CHECK(commit.message().find("lost inside the transaction") != std::string::npos);
  // Nothing of it was written, and the next statement runs on a new session.
  CHECK(countRows(*db) == 0);
}

TEST_CASE("An unreachable PostgreSQL server is reported as unavailable, with the URL's password hidden", "[postgres]") {
  // Port 1 on loopback: nothing listens there.
  Result<std::unique_ptr<Database>> db = Database::open("postgresql://npacd:hunter2@127.0.0.1:1/npac");
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kUnavailable);
  CHECK(db.status().file() == "postgresql://npacd:***@127.0.0.1:1/npac");
  CHECK(db.status().toString().find("hunter2") == std::string::npos);
}

TEST_CASE("A missing PostgreSQL database is refused as cannot-open with a hint", "[postgres]") {
  std::string url = *postgresServerUrl();
  url = url.substr(0, url.rfind('/') + 1) + "npac_no_such_database";
  Result<std::unique_ptr<Database>> db = Database::open(url);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCantOpen);
  CHECK(db.status().hint().find("createdb") != std::string::npos);
}

namespace {

// table → its columns in order, from either engine's catalogue.
std::map<std::string, std::vector<std::string>> columnsOf(Database& db) {
  std::map<std::string, std::vector<std::string>> out;
  const bool pg = db.backend() == Backend::kPostgres;
  Result<Statement> query = db.prepare(
      pg ? "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
           "ORDER BY table_name, ordinal_position"
         : "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p "
           "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid");
  REQUIRE(query.isOk());
  while (query->step().value()) out[query->columnText(0)].push_back(query->columnText(1));
  return out;
}

std::set<std::string> indexesOf(Database& db) {
  std::set<std::string> out;
  const bool pg = db.backend() == Backend::kPostgres;
  Result<Statement> query = db.prepare(
      pg ? "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%_pkey' "
           "AND indexname NOT LIKE '%_key'"
         : "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'");
  REQUIRE(query.isOk());
  while (query->step().value()) out.insert(query->columnText(0));
  return out;
}

}  // namespace

TEST_CASE("The PostgreSQL schema has the SQLite schema's tables, columns in order and indexes", "[postgres]") {
  TempDir dir;
  auto pg = openFresh(dir);
  Result<std::unique_ptr<Database>> sqlite = Database::open(dir.file("compare.db"));
  REQUIRE(sqlite.isOk());
  const auto expected = columnsOf(**sqlite);
  CHECK(expected.size() == 21);  // meta and the twenty tables of docs/DATABASE.md "Schema"
  CHECK(columnsOf(*pg) == expected);
  CHECK(indexesOf(*pg) == indexesOf(**sqlite));
}

TEST_CASE("A malformed PostgreSQL URL is refused with libpq's reason and no crash") {
  for (const char* url : {"postgresql://127.0.0.1:notaport/npac", "postgresql://[::1/npac",
                          "postgresql://127.0.0.1/npac?nosuchoption=1"}) {
    Result<std::unique_ptr<Database>> db = Database::open(url);
    INFO(url << ": " << db.status().toString());
    REQUIRE_FALSE(db.isOk());
    CHECK(db.status().code() == Status::Code::kInvalidArgument);
    CHECK(db.status().message().find("not a PostgreSQL connection URL") != std::string::npos);
    CHECK(db.status().hint().find("postgresql://user") != std::string::npos);
  }
  // Well-formed but naming no host: libpq's default socket, where no server listens here.
  Result<std::unique_ptr<Database>> nowhere = Database::open("postgresql:///npac?host=/nonexistent-socket-dir");
  REQUIRE_FALSE(nowhere.isOk());
  CHECK(nowhere.status().code() == Status::Code::kUnavailable);
}

// db/postgres_io.h and StorageHealth::reportNotAnswering on a real server stopped with
// SIGSTOP: the wait is bounded, then refused at once, then noticed when it answers.
TEST_CASE("A paused PostgreSQL server costs one answer bound, is refused at once after, and is used again when it answers",
          "[postgres]") {
  npac::testing::PrivateCluster cluster;
  npac::testing::PostgresTestDatabase database(cluster.url());
  StorageHealth health;
  OpenOptions options;
  options.apply_schema = false;
  options.health = &health;
  options.answer_timeout = std::chrono::milliseconds(500);
  options.probe_interval = std::chrono::milliseconds(100);
  auto db = Database::open(database.url(), options);
  REQUIRE(db.isOk());
  REQUIRE((*db)->execute("CREATE TABLE t(k BIGINT PRIMARY KEY, v TEXT, b BYTEA)").isOk());
  npac::testing::PrivateCluster::Pause pause(cluster);
  const auto seconds = [](auto call) {
    const auto started = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  Status first, second;
  const double waited = seconds([&] { first = (*db)->execute("INSERT INTO t(k, v) VALUES(1, 'a')"); });
  CHECK(first.code() == Status::Code::kUnavailable);
  CHECK(first.message().find("no answer within 500 ms") != std::string::npos);
  CHECK(waited >= 0.45);
  CHECK(waited < 10.0);  // the bound, not the pause (which lasts until unpaused)
  // Refused at once: the message says it was not tried, unlike the first's "no answer within".
  second = (*db)->execute("INSERT INTO t(k, v) VALUES(2, 'b')");
  CHECK(second.code() == Status::Code::kUnavailable);
  CHECK(second.message().find("has not answered for") != std::string::npos);
  CHECK(health.failing());
  pause.end();
  const bool back =
      eventually([&] { return health.notAnswering((*db)->path()).isOk(); }, std::chrono::seconds(10),
                 std::chrono::milliseconds(50));
  REQUIRE(back);
  CHECK((*db)->execute("INSERT INTO t(k, v) VALUES(3, 'c')").isOk());  // reconnected
  CHECK_FALSE(health.failing());
}

TEST_CASE("An append on PostgreSQL costs the same few round trips for 5 messages as for 500", "[postgres]") {
  TempDir dir;
  auto db = openFresh(dir);
  REQUIRE(db->execute("INSERT INTO service_providers(spid, name, system_type) VALUES('0001', 'a', 'soa')").isOk());
  OutboundQueue queue(*db);
  const auto batch = [](std::size_t count) {
    std::vector<NewMessage> messages;
    for (std::size_t i = 0; i < count; ++i) {
      messages.push_back(NewMessage{"0001", 1, 0, Bytes{0x30, 0x02, static_cast<std::uint8_t>(i), 0x00}});
    }
    return messages;
  };
  REQUIRE(queue.appendBatch(batch(2), 1).isOk());  // statements prepared on the server once
  const auto roundTrips = [&](std::size_t count) {
    const std::uint64_t before = db->postgres()->requests();
    auto ids = queue.appendBatch(batch(count), 2);
    const std::uint64_t spent = db->postgres()->requests() - before;
    REQUIRE(ids.isOk());
    REQUIRE(ids->size() == count);
    CHECK(queue.get(ids->back())->pdu == batch(count).back().pdu);
    return spent;
  };
  const std::uint64_t few = roundTrips(5);
  // BEGIN, the append lock, the newest row's stamp (created_at never decreases in id
  // order, schema 10), two id draws, two INSERTs, COMMIT.
  CHECK(few <= 8);
  CHECK(roundTrips(500) == few);
}

TEST_CASE("A PostgreSQL transaction of k savepoint-wrapped writes costs k + 1 round trips", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  Result<Statement> insert = db->prepare("INSERT INTO t(k, v) VALUES(?, 'x')");
  REQUIRE(insert.isOk());
  const std::uint64_t before = db->postgres()->requests();
  Transaction outer(*db);
  REQUIRE(outer.begin().isOk());
  for (int k = 1; k <= 4; ++k) {
    Transaction write(*db);
    REQUIRE(write.begin().isOk());
    insert->reset();
    insert->bindInt64(0, k);
    REQUIRE(insert->run().isOk());
    REQUIRE(write.commit().isOk());
  }
  REQUIRE(outer.commit().isOk());
  // BEGIN and each SAVEPOINT and RELEASE travel with the next statement; the last
  // RELEASE with the COMMIT.
  CHECK(db->postgres()->requests() - before == 5);
  CHECK(countRows(*db) == 4);
}

TEST_CASE("A PostgreSQL transaction in which no statement ran sends nothing to the server", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  const std::uint64_t before = db->postgres()->requests();
  {
    Transaction committed(*db);
    REQUIRE(committed.begin().isOk());
    Transaction inner(*db);
    REQUIRE(inner.begin().isOk());
    REQUIRE(inner.commit().isOk());
    REQUIRE(committed.commit().isOk());
  }
  {
    Transaction abandoned(*db);
    REQUIRE(abandoned.begin().isOk());
  }
  CHECK(db->postgres()->requests() == before);
  CHECK_FALSE(db->inTransaction());
  CHECK(db->execute("INSERT INTO t(k, v) VALUES(1, 'after')").isOk());  // not inside a stale BEGIN
  CHECK_FALSE(db->inTransaction());
  CHECK(countRows(*db) == 1);
}

TEST_CASE("A PostgreSQL savepoint rolled back before any statement ran in it keeps the outer writes", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  Transaction outer(*db);
  REQUIRE(outer.begin().isOk());
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'kept')").isOk());
  {
    Transaction unused(*db);
    REQUIRE(unused.begin().isOk());
  }  // rolled back while its SAVEPOINT was still waiting to be sent
  {
    Transaction undone(*db);
    REQUIRE(undone.begin().isOk());
    REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(2, 'undone')").isOk());
  }  // rolled back on the server
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(3, 'kept')").isOk());
  REQUIRE(outer.commit().isOk());
  Result<Statement> keys = db->prepare("SELECT string_agg(k::text, ',' ORDER BY k) FROM t");
  REQUIRE(keys->step().value());
  CHECK(keys->columnText(0) == "1,3");
}

TEST_CASE("A statement failing in the round trip that carries its BEGIN and SAVEPOINT is undone alone", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'existing')").isOk());
  Transaction outer(*db);
  REQUIRE(outer.begin().isOk());
  {
    Transaction inner(*db);
    REQUIRE(inner.begin().isOk());
    Status duplicate = db->execute("INSERT INTO t(k, v) VALUES(1, 'duplicate')");
    CHECK(duplicate.code() == Status::Code::kConstraint);
  }
  CHECK(db->inTransaction());
  CHECK_FALSE(db->postgres()->transactionFailed());
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(2, 'new')").isOk());
  REQUIRE(outer.commit().isOk());
  CHECK(countRows(*db) == 2);
}

TEST_CASE("A nested PostgreSQL transaction begun inside a failed one is refused at once", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  REQUIRE(db->execute("INSERT INTO t(k, v) VALUES(1, 'existing')").isOk());
  Transaction outer(*db);
  REQUIRE(outer.begin().isOk());
  CHECK_FALSE(db->execute("INSERT INTO t(k, v) VALUES(1, 'duplicate')").isOk());
  Transaction inner(*db);
  Status begun = inner.begin();
  CHECK_FALSE(begun.isOk());
  CHECK(begun.message().find("aborted") != std::string::npos);
  CHECK_FALSE(outer.commit().isOk());
  CHECK(countRows(*db) == 1);
}

TEST_CASE("Binary arrays reach PostgreSQL element for element, NULLs, zero bytes and extreme integers included",
          "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  PostgresArray keys(PostgresArray::Type::kInt8), texts(PostgresArray::Type::kText), blobs(PostgresArray::Type::kBytea);
  const std::vector<std::int64_t> numbers{INT64_MIN, -1, 0, INT64_MAX};
  const std::vector<std::uint8_t> zeros{0x00, 0xff, 0x00};
  for (std::int64_t n : numbers) keys.addInt64(n);
  texts.addText("o'quote\"d");
  texts.addNull();
  texts.addText("");
  texts.addText("é");
  for (int i = 0; i < 4; ++i) blobs.addBytes(zeros);
  Result<Statement> insert =
      db->prepare("INSERT INTO t(k, v, b) SELECT * FROM unnest(CAST(? AS bigint[]), CAST(? AS text[]), CAST(? AS bytea[]))");
  REQUIRE(insert.isOk());
  insert->bindBlob(0, keys.encoded()).bindBlob(1, texts.encoded()).bindBlob(2, blobs.encoded());
  REQUIRE(insert->run().isOk());
  Result<Statement> read = db->prepare("SELECT k, v IS NULL, coalesce(v, ''), b FROM t ORDER BY k");
  std::vector<std::int64_t> got;
  std::vector<std::string> values;
  while (read->step().value()) {
    got.push_back(read->columnInt64(0));
    values.push_back(read->columnBool(1) ? "NULL" : read->columnText(2));
    CHECK(read->columnBlob(3) == zeros);
  }
  CHECK(got == numbers);
  CHECK(values == std::vector<std::string>{"o'quote\"d", "NULL", "", "é"});
}

TEST_CASE("Doubles bound as parameters and as a binary float8 array read back exactly", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  REQUIRE(db->execute("CREATE TABLE d(k BIGINT PRIMARY KEY, x DOUBLE PRECISION)").isOk());
  const std::vector<double> values{0.1, -2.5e-300, 1.7976931348623157e308, 0.0, 12.5,
                                   std::numeric_limits<double>::infinity()};
  PostgresArray keys(PostgresArray::Type::kInt8), doubles(PostgresArray::Type::kFloat8);
  for (std::size_t i = 0; i < values.size(); ++i) {
    keys.addInt64(static_cast<std::int64_t>(i));
    doubles.addDouble(values[i]);
  }
  Result<Statement> insert =
      db->prepare("INSERT INTO d(k, x) SELECT * FROM unnest(CAST(? AS bigint[]), CAST(? AS float8[]))");
  REQUIRE(insert.isOk());
  insert->bindBlob(0, keys.encoded()).bindBlob(1, doubles.encoded());
  REQUIRE(insert->run().isOk());
  Result<Statement> one = db->prepare("INSERT INTO d(k, x) VALUES(?, ?)");
  REQUIRE(one.isOk());
  one->bindInt64(0, 100).bindDouble(1, 0.30000000000000004);
  REQUIRE(one->run().isOk());
  Result<Statement> read = db->prepare("SELECT x FROM d ORDER BY k");
  std::vector<double> got;
  while (read->step().value()) got.push_back(read->columnDouble(0));
  std::vector<double> expected = values;
  expected.push_back(0.30000000000000004);
  CHECK(got == expected);
}

TEST_CASE("A binary array of the wrong element type is refused by PostgreSQL, not misread", "[postgres]") {
  TempDir dir;
  auto db = openScratch(dir);
  PostgresArray texts(PostgresArray::Type::kText);
  texts.addText("1");
  Result<Statement> insert = db->prepare("INSERT INTO t(k) SELECT * FROM unnest(CAST(? AS bigint[]))");
  REQUIRE(insert.isOk());
  insert->bindBlob(0, texts.encoded());
  Status status = insert->run();
  CHECK_FALSE(status.isOk());
  INFO(status.toString());
  CHECK(status.message().find("array element type 25 (text)") != std::string::npos);
  CHECK(countRows(*db) == 0);
}
