#include "db/sqlite_backup.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace npac::db {
namespace {

// How long the copy's connection waits for a lock: a reader of a WAL database waits only
// while another connection recovers the WAL, which is short.
constexpr int kBusyTimeoutMs = 5000;

struct Connection {
  sqlite3* handle = nullptr;
  ~Connection() {
    if (handle != nullptr) sqlite3_close_v2(handle);
  }
};

// A Status for SQLite result `rc` about `file`, with what to do about the common ones.
Status sqliteStatus(int rc, const std::string& what, sqlite3* db, const std::string& file) {
  const int primary = rc & 0xff;
  const std::string message = what + ": " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  const int system_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
  using Code = Status::Code;
  switch (primary) {
    case SQLITE_INTERRUPT:
      return Status::make(Code::kShutdown, what + ": interrupted (npacd is stopping)", file, "", primary, rc);
    case SQLITE_FULL:
      return Status::make(Code::kFull, message, file, "free space in the directory of " + file, primary, rc,
                          system_errno);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::make(Code::kBusy, message, file, "another connection held a lock for more than 5 s: retry",
                          primary, rc);
    case SQLITE_CANTOPEN:
      return Status::make(Code::kCantOpen, message, file, "check that the file exists and may be read", primary,
                          rc, system_errno);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return Status::make(Code::kCorrupt, message, file, "the file is not an SQLite database or is damaged",
                          primary, rc);
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return Status::make(Code::kReadOnly, message, file, "", primary, rc, system_errno);
    case SQLITE_IOERR:
      return Status::make(Code::kIoError, message, file, "check the disk and the kernel log (dmesg)", primary, rc,
                          system_errno);
    default:
      return Status::make(Code::kInternal, message, file, "", primary, rc, system_errno);
  }
}

Status openReadOnly(const std::string& path, Connection* connection) {
  const int rc = sqlite3_open_v2(path.c_str(), &connection->handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) return sqliteStatus(rc, "cannot open " + path, connection->handle, path);
  sqlite3_busy_timeout(connection->handle, kBusyTimeoutMs);
  sqlite3_extended_result_codes(connection->handle, 1);
  return Status::ok();
}

// The one integer `sql` answers (its first column of its first row), or 0 for no row.
Result<std::int64_t> queryInteger(sqlite3* db, const std::string& sql, const std::string& file,
                                  const std::string& text_argument = {}) {
  sqlite3_stmt* statement = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr);
  if (rc != SQLITE_OK) return sqliteStatus(rc, sql, db, file);
  if (!text_argument.empty()) {
    sqlite3_bind_text(statement, 1, text_argument.c_str(), -1, SQLITE_TRANSIENT);
  }
  std::int64_t value = 0;
  rc = sqlite3_step(statement);
  if (rc == SQLITE_ROW) value = sqlite3_column_int64(statement, 0);
  const int finished = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
  sqlite3_finalize(statement);
  if (finished != SQLITE_OK) return sqliteStatus(finished, sql, db, file);
  return value;
}

// Rows of `table`, or 0 when an older schema has no such table.
Result<std::int64_t> countRows(sqlite3* db, const std::string& table, const std::string& file,
                               const std::string& where = "") {
  Result<std::int64_t> exists =
      queryInteger(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", file, table);
  if (!exists) return exists.status();
  if (*exists == 0) return std::int64_t{0};
  return queryInteger(db, "SELECT count(*) FROM " + table + (where.empty() ? "" : " WHERE " + where), file);
}

// PRAGMA integrity_check into `problems` (empty when it says ok).
Status checkPages(sqlite3* db, const std::string& path, std::vector<std::string>* problems) {
  sqlite3_stmt* check = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &check, nullptr);
  if (rc != SQLITE_OK) return sqliteStatus(rc, "PRAGMA integrity_check", db, path);
  while ((rc = sqlite3_step(check)) == SQLITE_ROW) {
    const unsigned char* line = sqlite3_column_text(check, 0);
    std::string text = line != nullptr ? reinterpret_cast<const char*>(line) : "";
    if (text != "ok") problems->push_back(std::move(text));
  }
  sqlite3_finalize(check);
  if (rc == SQLITE_DONE) return Status::ok();
  // A page so damaged that the check itself stops is a problem found, not an error.
  if ((rc & 0xff) != SQLITE_CORRUPT && (rc & 0xff) != SQLITE_NOTADB) {
    return sqliteStatus(rc, "PRAGMA integrity_check", db, path);
  }
  problems->push_back(std::string("the check stopped: ") + sqlite3_errmsg(db));
  return Status::ok();
}

}  // namespace

Status SqliteCopier::copy(const std::string& source, const std::string& target) {
  // The target is made here, empty and owner-only, so the copy is never readable by others
  // for a moment (VACUUM INTO fills an empty file and keeps its mode); O_EXCL: never a
  // file someone else made.
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    return Status::make(error == ENOSPC ? Status::Code::kFull : Status::Code::kCantOpen,
                        "cannot create the backup copy " + target + ": " + std::strerror(error), target,
                        "npacd needs to write a file beside its database for the length of a backup", 0, 0, error);
  }
  ::close(fd);
  Connection connection;
  Status status = openReadOnly(source, &connection);
  if (status.isOk()) {
    {
      std::lock_guard lock(mutex_);
      if (interrupted_) status = Status::shutdown("the backup was interrupted: npacd is stopping");
      connection_ = connection.handle;
    }
    if (status.isOk()) {
      sqlite3_stmt* statement = nullptr;
      int rc = sqlite3_prepare_v2(connection.handle, "VACUUM INTO ?", -1, &statement, nullptr);
      if (rc == SQLITE_OK) {
        sqlite3_bind_text(statement, 1, target.c_str(), -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(statement);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
      }
      if (rc != SQLITE_OK) status = sqliteStatus(rc, "VACUUM INTO " + target, connection.handle, source);
      sqlite3_finalize(statement);
    }
    std::lock_guard lock(mutex_);
    connection_ = nullptr;
  }
  if (!status.isOk()) ::unlink(target.c_str());
  return status;
}

void SqliteCopier::interrupt() {
  std::lock_guard lock(mutex_);
  interrupted_ = true;
  // sqlite3_interrupt is safe from another thread while the connection is open; the mutex
  // keeps copy() from closing it meanwhile.
  if (connection_ != nullptr) sqlite3_interrupt(connection_);
}

Result<BackupSummary> inspectSqliteBackup(const std::string& path, BackupCheck depth) {
  Connection connection;
  if (::access(path.c_str(), R_OK) != 0) {
    const int error = errno;
    return Status::make(Status::Code::kCantOpen, "cannot read " + path + ": " + std::strerror(error), path, "",
                        0, 0, error);
  }
  if (Status opened = openReadOnly(path, &connection); !opened.isOk()) return opened;
  sqlite3* db = connection.handle;
  BackupSummary summary;
  // The header is read first: a file that is not SQLite fails here with kCorrupt.
  Result<std::int64_t> has_meta =
      queryInteger(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'meta'", path);
  if (!has_meta) return has_meta.status();
  if (depth == BackupCheck::kFull) {
    if (Status checked = checkPages(db, path, &summary.integrity_problems); !checked.isOk()) return checked;
  }
  if (!summary.integrity_problems.empty()) return summary;
  if (*has_meta == 0) {
    return Status::make(Status::Code::kInvalidArgument, path + " is an SQLite database but not npacd's (no meta table)",
                        path, "");
  }
  for (auto [key, out] : {std::pair{"version", &summary.schema_version},
                          std::pair{"last_compatible_version", &summary.last_compatible_version}}) {
    Result<std::int64_t> value = queryInteger(db, "SELECT value FROM meta WHERE key = ?", path, key);
    if (!value) return value.status();
    *out = static_cast<int>(*value);
  }
  if (depth == BackupCheck::kSchemaOnly) return summary;
  struct Count {
    const char* table;
    const char* where;
    std::int64_t* out;
  };
  for (const Count& c : {Count{"service_providers", "", &summary.providers},
                         Count{"outbound_queue", "", &summary.messages},
                         Count{"outbound_queue", "state = 'queued' OR state = 'sent'", &summary.unacknowledged},
                         Count{"npac_keys", "", &summary.npac_keys}, Count{"api_tokens", "", &summary.tokens}}) {
    Result<std::int64_t> n = countRows(db, c.table, path, c.where);
    if (!n) return n.status();
    *c.out = *n;
  }
  return summary;
}

}  // namespace npac::db
