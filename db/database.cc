#include "db/database.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sqlite3.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <set>
#include <system_error>
#include <utility>

#include <spdlog/spdlog.h>

#include "db/migrations.h"
#include "db/postgres_connection.h"
#include "db/storage_health.h"
#include "db/wal_checkpointer.h"

namespace npac::db {
namespace {

// The database holds the NPAC's private signing keys and the admin API's token digests:
// owner only. SQLite's unix VFS creates -wal and -shm with the database file's mode, so a
// database file created 0600 here makes all three 0600 (docs/DATABASE.md "File modes").
void createOwnerOnly(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);  // EEXIST: another opener made it first; SQLite opens it as is
}

// An existing file readable or writable by group or others is left as the operator set it
// (a backup group may be deliberate) but said once per file and process.
void warnIfShared(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  for (const std::string& file : {path, path + "-wal", path + "-shm"}) {
    struct stat st{};
    if (::stat(file.c_str(), &st) != 0 || (st.st_mode & 077) == 0) continue;
    std::lock_guard lock(mutex);
    if (!warned.insert(file).second) continue;
    spdlog::warn("database file {} has mode {:04o}: group or others can reach the NPAC's private keys and "
                 "token digests in it; chmod 600 {}",
                 file, static_cast<unsigned>(st.st_mode & 07777), file);
  }
}

std::string directoryOf(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// True when `file` carries the immutable or append-only attribute (lsattr 'i' / 'a'):
// then even root's writes fail with EPERM, whatever the mode bits say.
bool hasWriteBlockingAttribute(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  int flags = 0;
  const bool blocked = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
                       (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)) != 0;
  ::close(fd);
  return blocked;
}

// EPERM / EACCES: which of the three WAL-mode files refuses us, and how to fix it.
std::string permissionHint(const std::string& path, int error) {
  std::string hint = std::string("permission denied (") + strerrorname_np(error) + "): ";
  std::string named;
  for (const std::string& file : {path, path + "-wal", path + "-shm"}) {
    if (hasWriteBlockingAttribute(file)) {
      named += file + " has the immutable or append-only attribute (lsattr " + file +
               "; clear it with chattr -i -a " + file + "); ";
    } else if (::access(file.c_str(), F_OK) == 0 && ::access(file.c_str(), W_OK) != 0) {
      named += file + " is not writable by the npacd user (uid " + std::to_string(::geteuid()) +
               "): fix its owner or mode (ls -l " + file + "); ";
    }
  }
  if (!named.empty()) return hint + named + "then retry";
  return hint + "check the owner and mode (ls -l) of " + path + ", " + path + "-wal, " + path +
         "-shm and of the directory " + directoryOf(path) +
         ", their immutable/append-only attributes (lsattr) and any security policy (SELinux, "
         "AppArmor) confining npacd";
}

// The category and hint an errno gives an SQLite I/O, read-only, open or full error
// (sqlite3_system_errno(): the connection's last failing system call). False when the
// errno says nothing more than the SQLite code does.
bool classifyErrno(int error, const std::string& path, Status::Code* code, std::string* hint) {
  using Code = Status::Code;
  const std::string directory = directoryOf(path);
  switch (error) {
    case EPERM:
    case EACCES:
      *code = Code::kReadOnly;
      *hint = permissionHint(path, error);
      return true;
    case ENOSPC:
    case EDQUOT:
      *code = Code::kFull;
      *hint = std::string(error == ENOSPC ? "the filesystem holding " + directory + " is full"
                                          : "the npacd user's disk quota is exhausted") +
              " (df -h " + directory + "): free space there, or purge acknowledged queue "
              "messages; nothing was written by the failed transaction";
      return true;
    case EROFS:
      *code = Code::kReadOnly;
      *hint = "the filesystem holding " + directory + " is mounted read-only (findmnt -T " +
              directory + "): find out why in the kernel log (dmesg) — a disk error often "
              "makes the kernel remount read-only — then remount it read-write";
      return true;
    case EIO:
      *code = Code::kIoError;
      *hint = "the disk reported an I/O error (EIO) on " + path +
              " or its -wal/-shm: check the disk and the kernel log (dmesg) before restarting "
              "npacd";
      return true;
    default:
      return false;
  }
}

// Maps an SQLite result code (and the errno behind it) to our category and to what an
// operator should do.
Status statusFromSqlite(int rc, std::string message, const std::string& path,
                        std::chrono::milliseconds busy_timeout, int system_errno = 0) {
  const int primary = rc & 0xff;
  using Code = Status::Code;
  Code code = Code::kInternal;
  std::string hint;
  const bool errno_applies = primary == SQLITE_IOERR || primary == SQLITE_READONLY ||
                             primary == SQLITE_PERM || primary == SQLITE_CANTOPEN ||
                             primary == SQLITE_FULL;
  if (!errno_applies) system_errno = 0;  // a stale errno from an earlier call would mislead
  // SQLite reads errno when the error reaches the connection, after the VFS may have made
  // other calls (a rollback), so a refused write often arrives with errno 0. The files
  // themselves then tell: an immutable/append-only attribute (EPERM, even for root) or a
  // mode that denies us (EACCES).
  if (errno_applies && system_errno == 0 && primary != SQLITE_FULL) {
    for (const std::string& file : {path, path + "-wal", path + "-shm"}) {
      if (hasWriteBlockingAttribute(file)) {
        system_errno = EPERM;
        break;
      }
      if (::access(file.c_str(), F_OK) == 0 && ::access(file.c_str(), W_OK) != 0) {
        system_errno = EACCES;
        break;
      }
    }
  }
  if (system_errno != 0 && classifyErrno(system_errno, path, &code, &hint)) {
    return Status::make(code, std::move(message), path, std::move(hint), primary, rc,
                        system_errno);
  }
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      code = Code::kBusy;
      hint = "another process held a lock on the file for longer than the busy timeout (" +
             std::to_string(busy_timeout.count()) +
             " ms); stop the other npacd or sqlite3 session using it (fuser/lsof on the file), "
             "then retry";
      break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
      code = Code::kReadOnly;
      hint = "make the file and its directory writable by the npacd user (WAL also creates " +
             path + "-wal and " + path +
             "-shm beside it) and check the filesystem is not mounted read-only";
      break;
    case SQLITE_FULL:
      code = Code::kFull;
      hint = "the filesystem holding the file is full (or its page limit is reached): free "
             "space there, or purge acknowledged queue messages; nothing was written by the "
             "failed transaction";
      break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      code = Code::kCorrupt;
      hint = "the file is not an npacd database or is damaged: stop npacd, move the file "
             "aside (keep it for analysis), restore the latest backup, and run "
             "`sqlite3 <file> 'PRAGMA integrity_check'` on the copy";
      break;
    case SQLITE_CANTOPEN:
      code = Code::kCantOpen;
      hint = "check that the directory " + directoryOf(path) +
             " exists and that npacd may read, write and create files in it";
      break;
    case SQLITE_IOERR:
      code = Code::kIoError;
      hint = "the operating system reported an I/O error on " + path +
             " or its -wal/-shm: check the disk and the kernel log (dmesg) before restarting "
             "npacd";
      break;
    case SQLITE_CONSTRAINT:
      code = Code::kConstraint;
      break;
    default:
      code = Code::kInternal;
      hint = "unexpected SQLite result; report it with this message";
      break;
  }
  return Status::make(code, std::move(message), path, std::move(hint), primary, rc, system_errno);
}

// An existing file that holds no database: refused rather than initialised, because the
// usual reason for it is a lost database (truncated, a failed restore or copy), and a new
// empty one would silently drop every provider, key and queued message.
Status blankFileRefusal(const std::string& path, const std::string& what) {
  return Status::make(Status::Code::kUninitialized,
                      what + ": it holds no npacd database, so providers, keys and queued "
                             "messages would start from nothing",
                      path,
                      "if the database was lost, stop and restore the latest backup to " + path +
                          "; to start a new, empty database in this file on purpose, start "
                          "npacd once with --init");
}

}  // namespace

const char* toString(Backend backend) {
  return backend == Backend::kPostgres ? "postgresql" : "sqlite";
}

const char* toString(Durability durability) {
  return durability == Durability::kFull ? "full" : "normal";
}

std::optional<Durability> parseDurability(std::string_view text) {
  if (text == "full") return Durability::kFull;
  if (text == "normal") return Durability::kNormal;
  return std::nullopt;
}

Result<std::unique_ptr<Database>> Database::open(const std::string& path,
                                                 const OpenOptions& options) {
  if (isPostgresUrl(path)) return openPostgres(path, options);
  std::error_code ec;
  const std::string directory = directoryOf(path);
  if (!std::filesystem::is_directory(directory, ec)) {
    return Status::make(Status::Code::kCantOpen, "directory " + directory + " does not exist",
                        path, "create it (mkdir -p " + directory + ") or point --db at a file "
                        "in an existing directory");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return Status::make(Status::Code::kCantOpen, "the path is a directory, not a database file",
                        path, "point --db at a file name, e.g. " + path + "/npacd.db");
  }
  if (!options.create_if_missing && !std::filesystem::exists(path, ec)) {
    return Status::make(Status::Code::kCantOpen, "database file does not exist", path,
                        "check the --db path, or let npacd create a new database");
  }

  // Decided before SQLite touches the file: opening in WAL mode writes a header into it.
  const bool existed = std::filesystem::exists(path, ec);
  const bool check_blank = existed && options.apply_schema && !options.initialize_existing_blank;
  if (check_blank && std::filesystem::file_size(path, ec) == 0 && !ec) {
    return blankFileRefusal(path, "the file exists but is empty (0 bytes)");
  }

  if (!existed && options.create_if_missing) createOwnerOnly(path);
  if (existed) warnIfShared(path);

  // SQLite's memory statistics cost a global mutex on every allocation it makes, and npacd
  // never reads them (sqlite3_status). Off before the library initialises, once.
  static const bool memstatus_off = [] {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
  }();
  (void)memstatus_off;
  sqlite3* handle = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (options.create_if_missing) flags |= SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &handle, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = handle != nullptr ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
    const int system_errno = handle != nullptr ? sqlite3_system_errno(handle) : 0;
    sqlite3_close_v2(handle);
    return statusFromSqlite(rc, "cannot open: " + message, path, options.busy_timeout,
                            system_errno);
  }
  sqlite3_extended_result_codes(handle, 1);
  std::unique_ptr<Database> db(new Database(path, options, handle));
  // Until OpenOptions::busy_timeout has been waited in all, then kBusy (busyWaitBefore).
  sqlite3_busy_handler(
      handle,
      [](void* timeout, int count) {
        const auto limit = *static_cast<const std::chrono::milliseconds*>(timeout);
        if (busyWaitedBefore(count) >= limit) return 0;
        std::this_thread::sleep_for(busyWaitBefore(count));
        return 1;
      },
      &db->options_.busy_timeout);
  // Checkpoints left to a thread of their own (replaces SQLite's automatic checkpoint).
  if (options.checkpointer != nullptr) sqlite3_wal_hook(handle, &WalCheckpointer::onCommit, options.checkpointer);

  // SQLite silently falls back to read-only when the file is not writable.
  if (sqlite3_db_readonly(handle, "main") == 1) {
    return statusFromSqlite(SQLITE_READONLY, "the database file is not writable", path,
                            options.busy_timeout);
  }
  if (check_blank) {
    Result<bool> blank = db->holdsNoTable();
    if (!blank) return blank.status();
    if (*blank) {
      return blankFileRefusal(path, "the file is an SQLite database without a single table");
    }
  }
  if (Status status = db->configure(); !status) return status;
  if (options.apply_schema) {
    if (Status status = migrateToCurrent(*db, options.migration); !status) return status;
  }
  // Statement journals and temporary tables in memory (docs/DATABASE.md "Opening the
  // file"): a savepoint that changes a few hundred queue rows (a delivery round's `sent`,
  // a batch of acknowledgements, a group commit) otherwise spills its statement journal
  // past 64 KiB into a temporary file — created, written, unlinked and closed, on every
  // such transaction, on the thread that serves every association. Only after the
  // migrations: rebuilding a large table's indexes sorts through temporary files, not RAM.
  if (Status status = db->execute("PRAGMA temp_store=MEMORY"); !status) return status;
  return db;
}

Result<std::unique_ptr<Database>> Database::openPostgres(const std::string& url,
                                                         const OpenOptions& options) {
  StorageHealth& health = options.health != nullptr ? *options.health : StorageHealth::process();
  PostgresTimeouts timeouts;
  timeouts.answer = options.answer_timeout;
  timeouts.probe_interval = options.probe_interval;
  // A row lock held by another session is waited for as long as SQLite waits for the
  // file's lock, then kBusy (SQLSTATE 55P03 lock_not_available).
  timeouts.lock_wait = options.busy_timeout;
  Result<std::unique_ptr<PostgresConnection>> connection =
      PostgresConnection::connect(url, options.durability == Durability::kFull, health, timeouts);
  if (!connection) {
    health.reportFailure(connection.status());
    return connection.status();
  }
  const std::string location = (*connection)->location();
  std::unique_ptr<Database> db(new Database(location, options, std::move(connection).value()));
  if (options.apply_schema) {
    if (Status status = migrateToCurrent(*db, options.migration); !status) return status;
  }
  // The schema is in place: from now on the server cuts a statement that runs too long.
  if (Status status = db->pg_->limitStatements(); !status) return status;
  return db;
}

std::chrono::microseconds busyWaitBefore(int count) {
  constexpr std::chrono::microseconds kFirst{10}, kMost{1000};
  if (count < 0) count = 0;
  if (count >= 7) return kMost;  // 10 µs × 2^7 > 1 ms
  return std::min(kFirst * (1 << count), kMost);
}

std::chrono::microseconds busyWaitedBefore(int count) {
  std::chrono::microseconds waited{0};
  for (int i = 0; i < count && i < 7; ++i) waited += busyWaitBefore(i);
  if (count > 7) waited += busyWaitBefore(7) * (count - 7);
  return waited;
}

Database::Database(std::string path, OpenOptions options, sqlite3* db)
    : path_(std::move(path)), options_(options), db_(db) {}

Database::Database(std::string location, OpenOptions options, std::unique_ptr<PostgresConnection> pg)
    : path_(std::move(location)), options_(options), pg_(std::move(pg)) {}

Database::~Database() {
  for (auto& [sql, cached] : cache_) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(db_);
}

Status Database::configure() {
  // Reading the schema first surfaces "not a database" and locks before anything else.
  if (Status status = execute("SELECT count(*) FROM sqlite_master"); !status) return status;

  Result<Statement> mode = prepare("PRAGMA journal_mode=WAL");
  if (!mode) return mode.status();
  Result<bool> row = mode->step();
  if (!row) return row.status();
  if (!*row || mode->columnText(0) != "wal") {
    return Status::make(Status::Code::kIoError, "could not switch the journal to WAL", path_,
                        "the filesystem must support shared memory and locking (not NFS)");
  }
  mode->reset();

  const char* synchronous = options_.durability == Durability::kFull ? "PRAGMA synchronous=FULL"
                                                                     : "PRAGMA synchronous=NORMAL";
  if (Status status = execute(synchronous); !status) return status;
  return execute("PRAGMA foreign_keys=ON");
}

Result<bool> Database::holdsNoTable() {
  Result<Statement> query = prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1");
  if (!query) return query.status();
  Result<bool> row = query->step();
  if (!row) return row.status();
  return !*row;
}

Status Database::errorStatus(int rc, std::string_view context) const {
  std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  if (!context.empty()) {
    message += " (in: ";
    message.append(context.substr(0, 120));
    message += ")";
  }
  Status status = statusFromSqlite(rc, std::move(message), path_, options_.busy_timeout,
                                   sqlite3_system_errno(db_));
  health().reportFailure(status);
  return status;
}

Status Database::execute(std::string_view sql) {
  if (pg_) return pg_->execute(sql);
  Result<Statement> statement = prepare(sql);
  if (!statement) return statement.status();
  return statement->run();
}

Result<Statement> Database::preparePostgres(std::string_view sql) {
  auto it = pg_cache_.find(sql);
  if (it != pg_cache_.end() && !it->second->inUse()) {
    it->second->setInUse(true);
    return Statement(this, it->second.get(), false);
  }
  Result<std::unique_ptr<PostgresStatement>> prepared = pg_->prepare(sql);
  if (!prepared) return prepared.status();
  ++prepared_count_;
  if (it != pg_cache_.end()) return Statement(this, prepared->release(), true);  // nested use
  auto [slot, inserted] = pg_cache_.emplace(std::string(sql), std::move(prepared).value());
  slot->second->setInUse(true);
  return Statement(this, slot->second.get(), false);
}

void Database::release(PostgresStatement* stmt, bool owned) {
  if (owned) {
    delete stmt;
    return;
  }
  stmt->reset();
  stmt->setInUse(false);
}

Result<Statement> Database::prepare(std::string_view sql) {
  if (pg_) return preparePostgres(sql);
  auto it = cache_.find(sql);
  if (it != cache_.end() && !it->second.in_use) {
    it->second.in_use = true;
    return Statement(this, it->second.stmt, &it->second.in_use);
  }
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return errorStatus(rc, sql);
  if (stmt == nullptr) return Status::invalidArgument("empty SQL statement");
  ++prepared_count_;
  if (it != cache_.end()) return Statement(this, stmt, nullptr);  // nested use: private copy
  auto [slot, inserted] = cache_.emplace(std::string(sql), CachedStatement{stmt, true});
  return Statement(this, stmt, &slot->second.in_use);
}

void Database::release(sqlite3_stmt* stmt, bool* in_use) {
  if (in_use == nullptr) {
    sqlite3_finalize(stmt);
    return;
  }
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  *in_use = false;
}

Status Database::executeScript(const std::string& sql) {
  if (pg_) return pg_->executeScript(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::ok();
  std::string message = error != nullptr ? error : sqlite3_errstr(rc);
  sqlite3_free(error);
  Status status = statusFromSqlite(rc, std::move(message), path_, options_.busy_timeout,
                                   sqlite3_system_errno(db_));
  health().reportFailure(status);
  return status;
}

namespace {

Status sqliteOnly(const std::string& path, const char* what) {
  return Status::make(Status::Code::kInvalidArgument, std::string(what) + " is SQLite's", path,
                      "on PostgreSQL use its own tools: pg_amcheck, and the server's data checksums");
}

}  // namespace

Result<std::int64_t> Database::pageCount() {
  if (pg_) return sqliteOnly(path_, "PRAGMA page_count");
  Result<Statement> count = prepare("PRAGMA page_count");
  if (!count) return count.status();
  Result<bool> row = count->step();
  if (!row) return row.status();
  return *row ? count->columnInt64(0) : 0;
}

Result<Database::CheckpointResult> Database::checkpointWal(CheckpointMode mode) {
  if (pg_) return sqliteOnly(path_, "a WAL checkpoint");
  CheckpointResult result;
  const int rc = sqlite3_wal_checkpoint_v2(
      db_, nullptr, mode == CheckpointMode::kRestart ? SQLITE_CHECKPOINT_RESTART : SQLITE_CHECKPOINT_PASSIVE,
      &result.wal_frames, &result.backfilled_frames);
  if (rc == SQLITE_BUSY) {
    result.busy = true;
    return result;
  }
  // Not reported to the StorageHealth: a failed checkpoint loses no commit (the WAL keeps
  // them), and the next commit would report the file writable again — a failing/writable
  // pair of lines at every attempt. The WalCheckpointer logs it once.
  if (rc != SQLITE_OK) {
    return statusFromSqlite(rc, std::string("WAL checkpoint: ") + sqlite3_errmsg(db_), path_, options_.busy_timeout,
                            sqlite3_system_errno(db_));
  }
  return result;
}

Result<std::int64_t> Database::pageSize() {
  if (pg_) return sqliteOnly(path_, "PRAGMA page_size");
  Result<Statement> size = prepare("PRAGMA page_size");
  if (!size) return size.status();
  Result<bool> row = size->step();
  if (!row) return row.status();
  return *row ? size->columnInt64(0) : 0;
}

Result<std::vector<std::string>> Database::integrityCheck(CheckDepth depth) {
  if (pg_) return sqliteOnly(path_, "an integrity check");
  Result<Statement> check = prepare(depth == CheckDepth::kQuick ? "PRAGMA quick_check" : "PRAGMA integrity_check");
  if (!check) return check.status();
  std::vector<std::string> problems;
  for (;;) {
    Result<bool> row = check->step();
    if (!row) return row.status();
    if (!*row) break;
    std::string line = check->columnText(0);
    if (line != "ok") problems.push_back(std::move(line));
  }
  return problems;
}

StorageHealth& Database::health() const {
  return options_.health != nullptr ? *options_.health : StorageHealth::process();
}

std::int64_t Database::lastInsertRowId() const {
  if (pg_) {
    Result<std::int64_t> id = pg_->lastInsertId();
    return id.isOk() ? *id : 0;
  }
  return sqlite3_last_insert_rowid(db_);
}

int Database::changes() const {
  if (pg_) return static_cast<int>(pg_->changes());
  return sqlite3_changes(db_);
}

bool Database::inTransaction() const {
  if (pg_) return pg_->inTransaction();
  return sqlite3_get_autocommit(db_) == 0;
}

}  // namespace npac::db
