// PostgresConnection and PostgresStatement: the PostgreSQL side of a Database (libpq).
//
// A Database opened on a `postgresql://` (or `postgres://`) URL holds one
// PostgresConnection; its Statements hold PostgresStatements. The stores' SQL is written
// once, with `?` placeholders, in the SQL both engines accept: prepare() rewrites each `?`
// outside quotes to `$1, $2 …` and prepares it server-side (PQprepare) under a name of
// its own. Parameters travel as text (integers, doubles, text) or binary (blobs, i.e. bytea);
// results come back as text and are converted on read (integers parsed, bytea
// hex-decoded, floats parsed), so a column may be any integer or numeric type the query
// produces. A double travels as the shortest text that reads back as the same double.
//
// Errors become Status values by SQLSTATE (PostgreSQL's "Appendix A. PostgreSQL Error
// Codes"): class 23 → kConstraint; 40001/40P01/55P03 → kBusy; 53100 → kFull; class 08 and
// 57P01..57P03, and a connection libpq reports as bad → kUnavailable. The SQLSTATE is kept
// in the Status (Status::sqlstate()).
//
// A connection lost outside a transaction is re-established once, on the next statement;
// statements are prepared again on the new session. One lost inside a transaction fails
// that transaction with kUnavailable: the caller decides what to redo.
//
// Every exchange with the server is bounded (db/postgres_io.h): a statement, or a
// connection attempt, that gets no answer within PostgresTimeouts::answer drops the
// connection and reports the server as not answering (StorageHealth::reportNotAnswering).
// From then on every connection to that server refuses at once with kUnavailable, without
// waiting, until the health tracker's probe finds it answering again. The server cuts its
// own statements and lock waits sooner (statement_timeout, lock_timeout at 4/5 of the
// bound), so a server that runs but is slow answers with an error instead of tripping it.
// A COMMIT that got no answer has an unknown outcome: the Status says so.
//
// Threading: as Database — one thread at a time; a libpq connection is not shared.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/status.h"

struct pg_conn;
struct pg_result;

namespace npac::db {

class StorageHealth;

// `url` with any password replaced by "***", for logs and Status::file().
std::string redactPostgresUrl(std::string_view url);
// True for a `postgresql://` or `postgres://` URL (libpq's connection URI forms).
bool isPostgresUrl(std::string_view location);
// The SQL text with each `?` outside '…' and "…" replaced by `$1`, `$2` …; `count`
// receives how many there were.
std::string numberPlaceholders(std::string_view sql, int* count);

class PostgresConnection;

// How long a PostgresConnection waits for its server (docs/DATABASE.md "When PostgreSQL
// does not answer").
struct PostgresTimeouts {
  // One statement's answer, or one connection attempt (npacd --db-timeout).
  std::chrono::milliseconds answer{5000};
  // How often a server that stopped answering is asked again (StorageHealth's probe).
  std::chrono::milliseconds probe_interval{1000};
  // How long a statement waits for a row lock (lock_timeout); capped at 4/5 of `answer`.
  std::chrono::milliseconds lock_wait{5000};
};

class PostgresStatement {
 public:
  PostgresStatement(PostgresConnection* connection, std::string sql, std::string name, int params);
  ~PostgresStatement();
  PostgresStatement(const PostgresStatement&) = delete;
  PostgresStatement& operator=(const PostgresStatement&) = delete;

  void bindInt64(int index, std::int64_t value);
  void bindDouble(int index, double value);
  void bindText(int index, std::string_view value);
  void bindBlob(int index, std::span<const std::uint8_t> value);
  void bindNull(int index);
  Status bindError() const { return bind_error_; }

  // Runs the statement on the first call after a reset; then walks its rows.
  Result<bool> step();
  void reset();  // drops the result and the bindings

  bool columnIsNull(int column) const;
  std::int64_t columnInt64(int column) const;
  double columnDouble(int column) const;
  std::string columnText(int column) const;
  std::vector<std::uint8_t> columnBlob(int column) const;

  const std::string& sql() const { return sql_; }
  bool inUse() const { return in_use_; }
  void setInUse(bool in_use) { in_use_ = in_use; }

 private:
  Status execute();
  void clearResult();
  bool validIndex(int index);

  PostgresConnection* connection_;
  std::string sql_;   // as the store wrote it (`?`), for errors
  std::string name_;  // the server-side prepared statement's name
  int params_ = 0;
  std::uint64_t prepared_in_session_ = 0;  // PostgresConnection::session() it was prepared in
  std::vector<std::string> values_;
  std::vector<char> is_null_;
  std::vector<int> formats_;  // 0 text, 1 binary (bytea)
  Status bind_error_;
  pg_result* result_ = nullptr;
  int row_ = -1;
  int rows_ = 0;
  bool executed_ = false;
  bool in_use_ = false;
};

class PostgresConnection {
 public:
  // Connects; `synchronous_commit` false sets synchronous_commit=off for this session
  // (Durability::kNormal). `health` receives failures and servers that do not answer.
  static Result<std::unique_ptr<PostgresConnection>> connect(const std::string& url,
                                                             bool synchronous_commit,
                                                             StorageHealth& health,
                                                             PostgresTimeouts timeouts = {});
  // Whether the server at `url` answers `SELECT 1` on a new connection within `within`
  // (StorageHealth's probe of a server that stopped answering).
  static bool answers(const std::string& url, std::chrono::milliseconds within);
  ~PostgresConnection();
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  const std::string& location() const { return location_; }  // the redacted URL

  // From now on (and after every reconnect) the server cancels a statement that runs
  // longer than 4/5 of the answer bound (statement_timeout). Not during the schema
  // migrations at open, which may rightly take longer.
  Status limitStatements();

  // Transaction control rides with the next request (docs/DATABASE.md "Round trips"):
  // `statement` (BEGIN, SAVEPOINT or RELEASE, no parameters) is sent in the same round
  // trip as the next statement, ahead of it; its error, if any, is that request's error.
  // Only for statements that cannot fail on a healthy session outside an aborted
  // transaction: the caller sends them at once when transactionFailed().
  void sendWithNext(std::string statement);
  // The transaction's BEGIN has not been sent: the server has seen nothing of it.
  bool beginUnsent() const { return !with_next_.empty() && with_next_.front() == "BEGIN"; }
  // COMMIT with whatever waits to be sent; nothing at all when the BEGIN itself was not.
  Status commit();
  // ROLLBACK; nothing when the BEGIN was not sent. What waits to be sent is dropped.
  Status rollback();
  // Undoes the work since SAVEPOINT `name` and releases it; nothing when that SAVEPOINT
  // was not sent.
  void rollbackTo(const std::string& name);

  Status execute(std::string_view sql);        // one statement, no parameters
  Status executeScript(const std::string& sql);  // several ';'-separated statements
  Result<std::unique_ptr<PostgresStatement>> prepare(std::string_view sql);

  std::int64_t changes() const { return changes_; }
  Result<std::int64_t> lastInsertId();  // lastval(): the id the last INSERT drew
  bool inTransaction() const;
  bool transactionFailed() const;  // an error inside the transaction: only ROLLBACK helps

  // Makes sure the session is usable, reconnecting once if it was lost while no
  // transaction was open. Called before each statement.
  Status ensureConnected();
  std::uint64_t session() const { return session_; }  // bumped by every reconnect
  // Set by Transaction around the outermost BEGIN … COMMIT/ROLLBACK: a connection lost
  // meanwhile is not silently replaced (the transaction's work is gone with it).
  void setTransactionOpen(bool open) { transaction_open_ = open; }
  Status prepareOnServer(const std::string& name, const std::string& sql, int params);

  // The Status for a failed result (or a null one: the connection), naming `context`.
  Status errorStatus(const pg_result* result, std::string_view context);
  void noteChanges(const pg_result* result);
  // nullptr after the connection was dropped (a server that did not answer).
  pg_conn* handle() { return conn_; }

  // One request, bounded (db/postgres_io.h): `send` is the PQsend* call. Returns the
  // answer when it is a success (COMMAND_OK or TUPLES_OK; the caller PQclear()s it), else
  // the Status — refused at once while the server is known not to answer.
  // What waits to be sent (sendWithNext) goes in the same round trip, pipelined; `send`
  // must then be a call libpq's pipeline mode allows (not PQsendQuery: see requestText).
  Result<pg_result*> request(std::string_view context, const std::function<int(pg_conn*)>& send);
  // A request of SQL text without parameters (PQsendQuery), with what waits to be sent
  // put in front of it in the same text.
  Result<pg_result*> requestText(std::string_view sql);
  // Requests sent to the server so far (each one round trip): what a batch costs.
  std::uint64_t requests() const { return requests_; }
  // kUnavailable at once while this connection's server is known not to answer; else ok.
  Status refusedNow();

 private:
  PostgresConnection(std::string url, std::string location, pg_conn* conn, bool synchronous_commit,
                     StorageHealth& health, PostgresTimeouts timeouts);
  Status configureSession();
  // The request about `context` got no answer in time: drops the connection, reports the
  // server as not answering, and returns the Status saying so.
  Status noAnswer(std::string_view context);

  std::string url_;       // with its password: for reconnecting only, never shown
  std::string location_;  // redacted
  pg_conn* conn_ = nullptr;
  PostgresTimeouts timeouts_;
  bool statements_limited_ = false;
  bool synchronous_commit_ = true;
  StorageHealth& health_;
  std::int64_t changes_ = 0;
  std::uint64_t next_name_ = 0;
  std::uint64_t requests_ = 0;
  std::uint64_t session_ = 1;
  bool transaction_open_ = false;
  std::vector<std::string> with_next_;  // sendWithNext(), in order
};

}  // namespace npac::db
