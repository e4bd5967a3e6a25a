// Status and Result: errors as values on every database path.
//
// A Status is either ok or carries a category (Code), the SQLite primary and extended
// result codes when SQLite produced the error (and the errno of the system call behind
// it, sqlite3_system_errno()) or the SQLSTATE when PostgreSQL did, the database file (or
// redacted PostgreSQL URL) it concerns, the engine's own message, and an operator hint saying what to do about it ("free disk space",
// "restore from backup"...). toString() renders all of it on one line for logs and for
// npacd's refusal to start. Result<T> is a Status or a value (std::expected is not in
// our toolchain). Both are plain values: copyable, movable, no threading concerns.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace npac::db {

class Status {
 public:
  enum class Code {
    kOk,
    kNotFound,         // the row asked for does not exist
    kInvalidArgument,  // caller passed a value the schema or domain rejects
    kConstraint,       // a UNIQUE / FOREIGN KEY / CHECK constraint refused the write
    kBusy,             // locked by another connection past the busy timeout
    kReadOnly,         // file, directory or filesystem not writable
    kFull,             // disk (or max_page_count) full
    kCorrupt,          // not a database, or damaged
    kCantOpen,         // file or directory missing / inaccessible
    kTooNew,           // schema written by a newer npacd
    kUninitialized,    // an existing file that holds no database (0 bytes, no tables)
    kIoError,          // the OS reported an I/O error
    kOverloaded,       // a bounded in-memory queue is full; retry later
    kShutdown,         // the component is stopping
    kUnavailable,      // the database server cannot be reached (PostgreSQL); retry later
    kFenced,           // the write carries a provider lease epoch this node no longer holds
    kInternal,         // misuse or an unexpected SQLite result
  };

  Status() = default;  // ok

  static Status ok() { return Status(); }
  static Status notFound(std::string message) { return Status(Code::kNotFound, std::move(message)); }
  static Status invalidArgument(std::string message) {
    return Status(Code::kInvalidArgument, std::move(message));
  }
  static Status overloaded(std::string message) { return Status(Code::kOverloaded, std::move(message)); }
  static Status shutdown(std::string message) { return Status(Code::kShutdown, std::move(message)); }
  static Status internal(std::string message) { return Status(Code::kInternal, std::move(message)); }
  // Builds a Status from any category; used by the SQLite mapping and by open().
  static Status make(Code code, std::string message, std::string file = {}, std::string hint = {},
                     int sqlite_code = 0, int extended_code = 0, int system_errno = 0);

  bool isOk() const { return code_ == Code::kOk; }
  explicit operator bool() const { return isOk(); }
  Code code() const { return code_; }
  bool isNotFound() const { return code_ == Code::kNotFound; }

  int sqliteCode() const { return sqlite_code_; }          // e.g. SQLITE_FULL (13); 0 if none
  int extendedCode() const { return extended_code_; }      // e.g. SQLITE_IOERR_FSYNC; 0 if none
  int systemErrno() const { return system_errno_; }        // sqlite3_system_errno(), e.g. EPERM; 0 if none
  const std::string& sqlstate() const { return sqlstate_; }  // PostgreSQL's, e.g. "23505"; empty if none
  const std::string& message() const { return message_; }  // the engine's or ours
  const std::string& file() const { return file_; }        // database path, may be empty
  const std::string& hint() const { return hint_; }        // what an operator should do

  // "<category>: <message> [file <path>] (sqlite <code>/<extended>[, errno <n> <NAME>]) — <hint>"
  // or, from PostgreSQL, "… (postgresql SQLSTATE <code>) — <hint>".
  std::string toString() const;

  // Returns a copy carrying PostgreSQL's SQLSTATE.
  Status withSqlstate(std::string sqlstate) const;

  // Returns a copy naming `file` (if none yet) — lets lower layers stay path-agnostic.
  Status withFile(const std::string& file) const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  int sqlite_code_ = 0;
  int extended_code_ = 0;
  int system_errno_ = 0;
  std::string sqlstate_;
  std::string message_;
  std::string file_;
  std::string hint_;
};

const char* toString(Status::Code code);

// A value or the Status explaining why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.isOk()) status_ = Status::internal("Result built from an ok Status without a value");
  }

  bool isOk() const { return value_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }  // no reference into a temporary

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace npac::db
