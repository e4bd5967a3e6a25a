// PostgresConnection and PostgresStatement: the PostgreSQL side of a Database (libpq).
//
// A Database opened on a `postgresql://` (or `postgres://`) URL holds one
// PostgresConnection; its Statements hold PostgresStatements. The stores' SQL is written
// once, with `?` placeholders, in the SQL both engines accept: prepare() rewrites each `?`
// outside quotes to `$1, $2 …` and prepares it server-side (PQprepare) under a name of
// its own. Parameters travel as text (integers, text) or binary (blobs, i.e. bytea);
// results come back as text and are converted on read (integers parsed, bytea
// hex-decoded), so a column may be any integer or numeric type the query produces.
//
// Errors become Status values by SQLSTATE (PostgreSQL's "Appendix A. PostgreSQL Error
// Codes"): class 23 → kConstraint; 40001/40P01/55P03 → kBusy; 53100 → kFull; class 08 and
// 57P01..57P03, and a connection libpq reports as bad → kUnavailable. The SQLSTATE is kept
// in the Status (Status::sqlstate()).
//
// A connection lost outside a transaction is re-established once, on the next statement
// (PQreset); statements are prepared again on the new session. One lost inside a
// transaction fails that transaction with kUnavailable: the caller decides what to redo.
//
// Threading: as Database — one thread at a time; a libpq connection is not shared.
#pragma once

#include <cstdint>
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

class PostgresStatement {
 public:
  PostgresStatement(PostgresConnection* connection, std::string sql, std::string name, int params);
  ~PostgresStatement();
  PostgresStatement(const PostgresStatement&) = delete;
  PostgresStatement& operator=(const PostgresStatement&) = delete;

  void bindInt64(int index, std::int64_t value);
  void bindText(int index, std::string_view value);
  void bindBlob(int index, std::span<const std::uint8_t> value);
  void bindNull(int index);
  Status bindError() const { return bind_error_; }

  // Runs the statement on the first call after a reset; then walks its rows.
  Result<bool> step();
  void reset();  // drops the result and the bindings

  bool columnIsNull(int column) const;
  std::int64_t columnInt64(int column) const;
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
  // (Durability::kNormal). `health` receives failures.
  static Result<std::unique_ptr<PostgresConnection>> connect(const std::string& url,
                                                             bool synchronous_commit,
                                                             StorageHealth& health);
  ~PostgresConnection();
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  const std::string& location() const { return location_; }  // the redacted URL

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
  pg_conn* handle() { return conn_; }

 private:
  PostgresConnection(std::string location, pg_conn* conn, bool synchronous_commit,
                     StorageHealth& health);
  Status configureSession();

  std::string location_;
  pg_conn* conn_ = nullptr;
  bool synchronous_commit_ = true;
  StorageHealth& health_;
  std::int64_t changes_ = 0;
  std::uint64_t next_name_ = 0;
  std::uint64_t session_ = 1;
  bool transaction_open_ = false;
};

}  // namespace npac::db
