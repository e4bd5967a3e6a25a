#include "db/statement.h"

#include <sqlite3.h>

#include <utility>

#include "db/database.h"
#include "db/postgres_connection.h"
#include "db/storage_health.h"

namespace npac::db {

Statement::Statement(Database* db, sqlite3_stmt* stmt, bool* in_use)
    : db_(db), stmt_(stmt), in_use_(in_use) {}

Statement::Statement(Database* db, PostgresStatement* pg, bool owned)
    : db_(db), pg_(pg), pg_owned_(owned) {}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      in_use_(std::exchange(other.in_use_, nullptr)),
      pg_(std::exchange(other.pg_, nullptr)),
      pg_owned_(std::exchange(other.pg_owned_, false)),
      bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    release();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    in_use_ = std::exchange(other.in_use_, nullptr);
    pg_ = std::exchange(other.pg_, nullptr);
    pg_owned_ = std::exchange(other.pg_owned_, false);
    bind_error_ = std::move(other.bind_error_);
  }
  return *this;
}

Statement::~Statement() { release(); }

void Statement::release() {
  if (stmt_ != nullptr) db_->release(stmt_, in_use_);
  if (pg_ != nullptr) db_->release(pg_, pg_owned_);
  pg_ = nullptr;
  pg_owned_ = false;
  stmt_ = nullptr;
  db_ = nullptr;
  in_use_ = nullptr;
}

void Statement::noteBind(int rc, int index) {
  if (rc == SQLITE_OK || !bind_error_.isOk()) return;
  bind_error_ = db_->errorStatus(rc, "binding parameter " + std::to_string(index));
}

Statement& Statement::bindInt64(int index, std::int64_t value) {
  if (pg_ != nullptr) {
    pg_->bindInt64(index, value);
    return *this;
  }
  noteBind(sqlite3_bind_int64(stmt_, index + 1, value), index);
  return *this;
}

Statement& Statement::bindDouble(int index, double value) {
  if (pg_ != nullptr) {
    pg_->bindDouble(index, value);
    return *this;
  }
  noteBind(sqlite3_bind_double(stmt_, index + 1, value), index);
  return *this;
}

Statement& Statement::bindText(int index, std::string_view value) {
  if (pg_ != nullptr) {
    pg_->bindText(index, value);
    return *this;
  }
  noteBind(sqlite3_bind_text64(stmt_, index + 1, value.data(), value.size(), SQLITE_TRANSIENT,
                               SQLITE_UTF8),
           index);
  return *this;
}

Statement& Statement::bindBlob(int index, std::span<const std::uint8_t> value) {
  if (pg_ != nullptr) {
    pg_->bindBlob(index, value);
    return *this;
  }
  // A zero-length blob must still be a BLOB, not NULL: pass a non-null pointer.
  static const std::uint8_t kEmpty = 0;
  const void* data = value.empty() ? &kEmpty : value.data();
  noteBind(sqlite3_bind_blob64(stmt_, index + 1, data, value.size(), SQLITE_TRANSIENT), index);
  return *this;
}

Statement& Statement::bindNull(int index) {
  if (pg_ != nullptr) {
    pg_->bindNull(index);
    return *this;
  }
  noteBind(sqlite3_bind_null(stmt_, index + 1), index);
  return *this;
}

Statement& Statement::bindOptionalInt64(int index, const std::optional<std::int64_t>& value) {
  return value ? bindInt64(index, *value) : bindNull(index);
}

Statement& Statement::bindOptionalText(int index, const std::optional<std::string>& value) {
  return value ? bindText(index, *value) : bindNull(index);
}

Result<bool> Statement::step() {
  if (pg_ != nullptr) {
    Result<bool> row = pg_->step();
    // An autocommit write reached the server: storage works (again).
    if (row.isOk() && !*row && db_->health().failing() && !db_->inTransaction()) {
      db_->health().reportWritten(db_->path());
    }
    return row;
  }
  if (stmt_ == nullptr) return Status::internal("step() on a moved-from Statement");
  if (!bind_error_.isOk()) return bind_error_;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    // An autocommit write reached the file: storage works (again). COMMIT counts as
    // read-only for sqlite3_stmt_readonly(); Transaction::commit() reports those.
    if (db_->health().failing() && sqlite3_get_autocommit(db_->db_) != 0 &&
        sqlite3_stmt_readonly(stmt_) == 0) {
      db_->health().reportWritten(db_->path());
    }
    return false;
  }
  Status status = db_->errorStatus(rc, sqlite3_sql(stmt_));
  sqlite3_reset(stmt_);
  return status;
}

Status Statement::run() {
  Result<bool> row = step();
  if (!row) return row.status();
  while (*row) {  // PRAGMAs may answer with a row; drain them
    row = step();
    if (!row) return row.status();
  }
  return Status::ok();
}

void Statement::reset() {
  if (pg_ != nullptr) {
    pg_->reset();
    return;
  }
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = Status::ok();
}

bool Statement::columnIsNull(int column) const {
  if (pg_ != nullptr) return pg_->columnIsNull(column);
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::columnInt64(int column) const {
  if (pg_ != nullptr) return pg_->columnInt64(column);
  return sqlite3_column_int64(stmt_, column);
}

double Statement::columnDouble(int column) const {
  if (pg_ != nullptr) return pg_->columnDouble(column);
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::columnText(int column) const {
  if (pg_ != nullptr) return pg_->columnText(column);
  const auto* text = sqlite3_column_text(stmt_, column);
  const int size = sqlite3_column_bytes(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

Bytes Statement::columnBlob(int column) const {
  if (pg_ != nullptr) return pg_->columnBlob(column);
  const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return {};
  return Bytes(data, data + size);
}

std::optional<std::int64_t> Statement::columnOptionalInt64(int column) const {
  if (columnIsNull(column)) return std::nullopt;
  return columnInt64(column);
}

std::optional<std::string> Statement::columnOptionalText(int column) const {
  if (columnIsNull(column)) return std::nullopt;
  return columnText(column);
}

}  // namespace npac::db
