// A fresh PostgreSQL database for one test, on the test cluster CTest starts
// (tests/pg/cluster.sh, fixture npac_pg). CTest sets NPAC_TEST_PG to the cluster's
// directory for the db-postgres/ tests; its file `url` holds the server's URL.
// PostgresTestDatabase creates a uniquely named database (npac_t_<pid>_<counter>, so
// tests in parallel processes never meet) and drops it, with whatever sessions still use
// it, when destroyed. Errors throw std::runtime_error carrying libpq's message: this is
// test set-up, where a failure should stop the test case loudly.
//
// Threading: postgresTestServerUrl() and constructing or destroying distinct
// PostgresTestDatabase objects are safe from any thread (each opens its own short-lived
// libpq connection; the name counter is atomic). One object is not shared while it is
// being destroyed.
#pragma once

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace npac::testing {

// The URL of the test PostgreSQL server, or nullopt when NPAC_TEST_PG is unset (the test
// runs against SQLite only). Throws when NPAC_TEST_PG is set but names no started cluster.
inline std::optional<std::string> postgresTestServerUrl() {
  const char* dir = std::getenv("NPAC_TEST_PG");
  if (dir == nullptr || *dir == '\0') return std::nullopt;
  const std::string file = std::string(dir) + "/url";
  std::ifstream in(file);
  std::string url;
  if (!in || !std::getline(in, url) || url.empty()) {
    throw std::runtime_error("NPAC_TEST_PG=" + std::string(dir) + " but " + file +
                             " cannot be read: start the cluster first (tests/pg/cluster.sh "
                             "start DIR, or run the test through CTest)");
  }
  return url;
}

namespace detail {

struct PgConnCloser {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
using PgConnection = std::unique_ptr<PGconn, PgConnCloser>;

// Bounded (connect_timeout 10 s): a server a test paused and left paused fails the
// set-up or the clean-up instead of hanging the test run.
inline PgConnection connectOrThrow(const std::string& url) {
  const char* const keywords[] = {"dbname", "connect_timeout", nullptr};
  const char* const values[] = {url.c_str(), "10", nullptr};
  PgConnection conn(PQconnectdbParams(keywords, values, /*expand_dbname=*/1));
  if (conn == nullptr) throw std::runtime_error("libpq could not allocate a connection");
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    throw std::runtime_error("cannot connect to " + url + ": " + PQerrorMessage(conn.get()));
  }
  // "database … does not exist, skipping" and the like are not failures: keep them quiet.
  PQsetNoticeProcessor(conn.get(), [](void*, const char*) {}, nullptr);
  return conn;
}

inline void executeOrThrow(PGconn* conn, const std::string& sql) {
  std::unique_ptr<PGresult, decltype(&PQclear)> result(PQexec(conn, sql.c_str()), &PQclear);
  if (result == nullptr || PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
    throw std::runtime_error(sql + ": " +
                             (result ? PQresultErrorMessage(result.get()) : PQerrorMessage(conn)));
  }
}

// The URL with its database (the path after host:port) replaced by `database`; a query
// string (?sslmode=…) is kept.
inline std::string withDatabase(const std::string& url, const std::string& database) {
  const std::string::size_type scheme = url.find("://");
  const std::string::size_type authority = scheme == std::string::npos ? 0 : scheme + 3;
  const std::string::size_type query = url.find('?', authority);
  std::string::size_type path = url.find('/', authority);
  if (path == std::string::npos || (query != std::string::npos && path > query)) path = query;
  const std::string head = path == std::string::npos ? url : url.substr(0, path);
  const std::string tail = query == std::string::npos ? "" : url.substr(query);
  return head + "/" + database + tail;
}

}  // namespace detail

class PostgresTestDatabase {
 public:
  // On the server postgresTestServerUrl() names; throws when NPAC_TEST_PG is unset.
  PostgresTestDatabase() : PostgresTestDatabase(requireServerUrl()) {}

  explicit PostgresTestDatabase(std::string serverUrl)
      : serverUrl_(std::move(serverUrl)), name_(nextName()),
        url_(detail::withDatabase(serverUrl_, name_)) {
    detail::PgConnection admin = detail::connectOrThrow(serverUrl_);
    // A database of this name can only be left by a killed process whose pid came back.
    detail::executeOrThrow(admin.get(), "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    // FILE_COPY copies template1's files and checkpoints, where the default (WAL_LOG)
    // writes every page of it to the WAL: 12-37 ms against 100-150 ms on the suite's
    // cluster in memory (tests/CMakeLists.txt), 45-115 against 105-340 on disk.
    detail::executeOrThrow(admin.get(), "CREATE DATABASE " + name_ + " STRATEGY FILE_COPY");
  }

  ~PostgresTestDatabase() {
    try {
      detail::PgConnection admin = detail::connectOrThrow(serverUrl_);
      detail::executeOrThrow(admin.get(), "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (const std::exception& e) {
      // A destructor must not throw; the cluster is removed after the run anyway.
      std::fprintf(stderr, "PostgresTestDatabase: could not drop %s: %s\n", name_.c_str(),
                   e.what());
    }
  }

  PostgresTestDatabase(const PostgresTestDatabase&) = delete;
  PostgresTestDatabase& operator=(const PostgresTestDatabase&) = delete;

  // The database's name: npac_t_<pid>_<counter>, lower case, needing no quotes in SQL.
  const std::string& name() const { return name_; }
  // A libpq connection URL for this database.
  const std::string& url() const { return url_; }
  // The server's URL (its maintenance database `postgres`).
  const std::string& serverUrl() const { return serverUrl_; }

 private:
  static std::string requireServerUrl() {
    std::optional<std::string> url = postgresTestServerUrl();
    if (!url) {
      throw std::runtime_error(
          "NPAC_TEST_PG is not set: PostgreSQL tests run through CTest (db-postgres/), or "
          "after tests/pg/cluster.sh start DIR with NPAC_TEST_PG=DIR");
    }
    return *url;
  }

  static std::string nextName() {
    static std::atomic<unsigned> counter{0};
    return "npac_t_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
  }

  std::string serverUrl_;
  std::string name_;
  std::string url_;
};

}  // namespace npac::testing
