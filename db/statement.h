// Statement: an RAII handle on a prepared statement (SQLite's, or a PostgreSQL one of
// db/postgres_connection.h; the same calls either way).
//
// Obtained from Database::prepare(); values are bound by 0-based parameter index (the
// first `?` is index 0) and columns are read by 0-based index, as in sqlite3_column_*.
// A bind error is remembered and returned by the next step()/run(), so call sites can
// bind a row without checking each call. Destroying (or reset()ing) the handle resets
// the statement and clears its bindings; a cached statement goes back to its
// Database's cache.
//
// Threading: same as the Database it came from (one thread at a time). Move-only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "db/status.h"

struct sqlite3_stmt;

namespace npac::db {

class Database;
class PostgresStatement;

using Bytes = std::vector<std::uint8_t>;

class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bindInt64(int index, std::int64_t value);
  Statement& bindInt(int index, int value) { return bindInt64(index, value); }
  Statement& bindBool(int index, bool value) { return bindInt64(index, value ? 1 : 0); }
  Statement& bindDouble(int index, double value);  // REAL / DOUBLE PRECISION
  Statement& bindText(int index, std::string_view value);
  Statement& bindBlob(int index, std::span<const std::uint8_t> value);
  Statement& bindNull(int index);
  Statement& bindOptionalInt64(int index, const std::optional<std::int64_t>& value);
  Statement& bindOptionalText(int index, const std::optional<std::string>& value);

  // Advances: true when a row is available, false when done, or the error.
  Result<bool> step();
  // Steps to completion for statements that return no rows (INSERT, UPDATE, DDL).
  Status run();
  // Ready to step again with new bindings.
  void reset();

  bool columnIsNull(int column) const;
  std::int64_t columnInt64(int column) const;
  int columnInt(int column) const { return static_cast<int>(columnInt64(column)); }
  bool columnBool(int column) const { return columnInt64(column) != 0; }
  double columnDouble(int column) const;
  std::string columnText(int column) const;
  Bytes columnBlob(int column) const;
  std::optional<std::int64_t> columnOptionalInt64(int column) const;
  std::optional<std::string> columnOptionalText(int column) const;

 private:
  friend class Database;
  // in_use: the cache slot's flag to clear on release; nullptr for an uncached statement.
  Statement(Database* db, sqlite3_stmt* stmt, bool* in_use);
  // A PostgreSQL statement; `owned`: a private copy the handle deletes (nested use).
  Statement(Database* db, PostgresStatement* pg, bool owned);
  void noteBind(int rc, int index);
  void release();

  Database* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  bool* in_use_ = nullptr;
  PostgresStatement* pg_ = nullptr;
  bool pg_owned_ = false;
  Status bind_error_;
};

}  // namespace npac::db
