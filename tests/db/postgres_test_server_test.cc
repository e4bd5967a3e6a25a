// The test PostgreSQL cluster (tests/pg/cluster.sh) and PostgresTestDatabase, through
// libpq directly. [postgres] cases run under db-postgres/ only, where CTest sets
// NPAC_TEST_PG; the untagged cases about NPAC_TEST_PG itself run under both prefixes.
#include "tests/support/postgres_test_database.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "temp_dir.h"

using npac::db::testing::TempDir;
using npac::testing::PostgresTestDatabase;
using npac::testing::postgresTestServerUrl;

namespace {

using Connection = npac::testing::detail::PgConnection;

Connection connect(const std::string& url) {
  Connection conn(PQconnectdb(url.c_str()));
  REQUIRE(conn != nullptr);
  INFO(url << ": " << PQerrorMessage(conn.get()));
  REQUIRE(PQstatus(conn.get()) == CONNECTION_OK);
  return conn;
}

using PgResult = std::unique_ptr<PGresult, decltype(&PQclear)>;

PgResult exec(PGconn* conn, const std::string& sql) {
  return PgResult(PQexec(conn, sql.c_str()), &PQclear);
}

void command(PGconn* conn, const std::string& sql) {
  PgResult result = exec(conn, sql);
  INFO(sql << ": " << PQresultErrorMessage(result.get()));
  REQUIRE(PQresultStatus(result.get()) == PGRES_COMMAND_OK);
}

// The first column of the only row `sql` returns.
std::string scalar(PGconn* conn, const std::string& sql) {
  PgResult result = exec(conn, sql);
  INFO(sql << ": " << PQresultErrorMessage(result.get()));
  REQUIRE(PQresultStatus(result.get()) == PGRES_TUPLES_OK);
  REQUIRE(PQntuples(result.get()) == 1);
  return PQgetvalue(result.get(), 0, 0);
}

bool databaseExists(const std::string& serverUrl, const std::string& name) {
  Connection admin = connect(serverUrl);
  return scalar(admin.get(), "SELECT count(*) FROM pg_database WHERE datname = '" + name + "'") ==
         "1";
}

// Sets or unsets NPAC_TEST_PG for one test case and puts the previous value back.
class ScopedTestPgVariable {
 public:
  explicit ScopedTestPgVariable(const std::optional<std::string>& value) {
    if (const char* old = std::getenv("NPAC_TEST_PG")) old_ = old;
    if (value) {
      ::setenv("NPAC_TEST_PG", value->c_str(), 1);
    } else {
      ::unsetenv("NPAC_TEST_PG");
    }
  }
  ~ScopedTestPgVariable() {
    if (old_) {
      ::setenv("NPAC_TEST_PG", old_->c_str(), 1);
    } else {
      ::unsetenv("NPAC_TEST_PG");
    }
  }
  ScopedTestPgVariable(const ScopedTestPgVariable&) = delete;
  ScopedTestPgVariable& operator=(const ScopedTestPgVariable&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("A test PostgreSQL database answers a query", "[postgres]") {
  PostgresTestDatabase db;
  Connection conn = connect(db.url());
  CHECK(scalar(conn.get(), "SELECT current_database()") == db.name());
  CHECK(std::stoi(scalar(conn.get(), "SHOW server_version_num")) >= 150000);
}

TEST_CASE("Two test PostgreSQL databases do not see each other's tables", "[postgres]") {
  PostgresTestDatabase first;
  PostgresTestDatabase second;
  REQUIRE(first.name() != second.name());
  Connection a = connect(first.url());
  Connection b = connect(second.url());

  command(a.get(), "CREATE TABLE shared_name(v TEXT)");
  command(a.get(), "INSERT INTO shared_name VALUES ('first')");
  CHECK(scalar(b.get(), "SELECT to_regclass('shared_name') IS NULL") == "t");

  command(b.get(), "CREATE TABLE shared_name(v TEXT)");
  command(b.get(), "INSERT INTO shared_name VALUES ('second')");
  CHECK(scalar(a.get(), "SELECT string_agg(v, ',') FROM shared_name") == "first");
  CHECK(scalar(b.get(), "SELECT string_agg(v, ',') FROM shared_name") == "second");
}

TEST_CASE("A test PostgreSQL database is dropped when it goes out of scope", "[postgres]") {
  std::string serverUrl;
  std::string name;
  {
    PostgresTestDatabase db;
    serverUrl = db.serverUrl();
    name = db.name();
    REQUIRE(databaseExists(serverUrl, name));
  }
  CHECK_FALSE(databaseExists(serverUrl, name));
}

TEST_CASE("A test PostgreSQL database is dropped while a session still uses it",
          "[postgres]") {
  auto db = std::make_unique<PostgresTestDatabase>();
  const std::string serverUrl = db->serverUrl();
  const std::string name = db->name();
  Connection leftover = connect(db->url());
  command(leftover.get(), "CREATE TABLE t(v INTEGER)");

  db.reset();  // DROP DATABASE ... WITH (FORCE) ends the leftover session

  CHECK_FALSE(databaseExists(serverUrl, name));
  PgResult after = exec(leftover.get(), "SELECT 1");
  CHECK(PQresultStatus(after.get()) != PGRES_TUPLES_OK);
}

TEST_CASE("The test PostgreSQL server listens on loopback only", "[postgres]") {
  PostgresTestDatabase db;
  Connection conn = connect(db.url());
  CHECK(scalar(conn.get(), "SHOW listen_addresses") == "127.0.0.1");
  CHECK(scalar(conn.get(), "SELECT host(inet_server_addr())") == "127.0.0.1");
}

TEST_CASE("The test PostgreSQL server takes at least 200 connections", "[postgres]") {
  PostgresTestDatabase db;
  Connection conn = connect(db.url());
  CHECK(std::stoi(scalar(conn.get(), "SHOW max_connections")) >= 200);
}

TEST_CASE("The test PostgreSQL server URL is absent when NPAC_TEST_PG is unset") {
  ScopedTestPgVariable unset(std::nullopt);
  CHECK_FALSE(postgresTestServerUrl().has_value());
  CHECK_THROWS_WITH(PostgresTestDatabase(), Catch::Contains("NPAC_TEST_PG is not set"));
}

TEST_CASE("The test PostgreSQL server URL fails clearly when the cluster has no url file") {
  TempDir dir;
  ScopedTestPgVariable set(dir.path());
  CHECK_THROWS_WITH(postgresTestServerUrl(),
                    Catch::Contains(dir.file("url")) && Catch::Contains("cannot be read"));
}

TEST_CASE("A test PostgreSQL database fails with libpq's message when the server is down") {
  // Port 1 on loopback: nothing listens there (it needs root to bind, and no test does).
  CHECK_THROWS_WITH(PostgresTestDatabase("postgresql://postgres@127.0.0.1:1/postgres"),
                    Catch::Contains("cannot connect to") && Catch::Contains("127.0.0.1"));
}
