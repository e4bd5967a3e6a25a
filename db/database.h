// Database: one connection to an npacd database — an SQLite file (the embedded default)
// or a PostgreSQL database named by a `postgresql://` URL (db/postgres_connection.h).
//
// The stores write their SQL once, in the dialect both engines accept (`?` placeholders,
// integers for booleans, RETURNING, ON CONFLICT … DO UPDATE); the few places that must
// differ ask backend(). The rest of this comment describes the SQLite side; on
// PostgreSQL, open() connects, sets lock_timeout to the busy timeout and
// synchronous_commit from the Durability setting, and runs the PostgreSQL ladder of the
// same schema versions (db/migrations.h). docs/DATABASE.md "PostgreSQL".
//
// Database::open() opens the file, sets WAL journaling, a busy timeout, foreign keys and
// the synchronous level from the Durability setting, then brings the schema to the
// current version (db/migrations.h). It creates a database only where no file exists: an
// existing file holding no database (0 bytes, or no table) is refused unless the caller
// asks to initialise it (OpenOptions::initialize_existing_blank, npacd --init). Every
// failure — missing directory, read-only file, a lock held past the busy timeout, a
// blank, corrupt or foreign file, a database from a newer npacd — comes back as a Status
// naming the file and what an operator should do, so npacd can refuse to start instead
// of running without persistence or on an empty database.
//
// Statements are prepared once per connection and cached by their SQL text
// (prepare()); a Statement handle returns its sqlite3_stmt to the cache when destroyed.
//
// Threading: a Database is NOT thread-safe. Use one connection from one thread at a time
// (it may move between threads, e.g. be opened on one and used on a worker). Open one
// Database per thread that needs the file; WAL lets readers proceed while one writer
// writes, and concurrent writers wait up to the busy timeout. Statements and
// Transactions must be destroyed before the Database they came from.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "db/message_facts.h"
#include "db/statement.h"
#include "db/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace npac::db {

class StorageHealth;
class WalCheckpointer;
class PostgresConnection;
class PostgresStatement;

// Which engine a Database talks to.
enum class Backend { kSqlite, kPostgres };
const char* toString(Backend backend);  // "sqlite" / "postgresql"

// How hard a COMMIT waits for the disk (PRAGMA synchronous, with WAL).
//  kFull   — fsync the WAL on every commit: a committed transaction survives power loss
//            and a kernel crash. The default.
//  kNormal — fsync only at checkpoints: a committed transaction survives an npacd crash
//            (even SIGKILL) but the last commits before a power loss or kernel crash may
//            be rolled back. The database is never corrupted either way. docs/DATABASE.md.
enum class Durability { kFull, kNormal };

const char* toString(Durability durability);                       // "full" / "normal"
std::optional<Durability> parseDurability(std::string_view text);  // inverse; else nullopt

// How a connection waits for another connection's lock (sqlite3_busy_handler): the wait
// before attempt `count` (0-based) — 10 µs, doubling to at most 1 ms — and the time
// waited before it in all. SQLite's own busy_timeout handler sleeps 1, 2, 5, 10 … up to
// 100 ms at a time, which turns a lock held for a commit's few hundred µs by another
// thread of npacd (npacd --threads N, the QueueWriter) into a sleep of milliseconds.
std::chrono::microseconds busyWaitBefore(int count);
std::chrono::microseconds busyWaitedBefore(int count);

struct OpenOptions {
  Durability durability = Durability::kFull;
  // How long a statement waits for another connection's lock before failing with kBusy.
  std::chrono::milliseconds busy_timeout{5000};
  // Create the file when it does not exist (the directory must exist either way).
  bool create_if_missing = true;
  // An EXISTING file that holds no database — 0 bytes, or an SQLite file without a single
  // table — is refused (kUninitialized) unless this is set (npacd --init): such a file is
  // what a truncation, a failed restore or a placeholder leaves, and initialising it
  // silently would start every provider, key and queued message from nothing. A file
  // holding data that is not npacd's is refused either way. Only with apply_schema.
  bool initialize_existing_blank = false;
  // Run db/migrations on open. Off only for tests that build old-version files.
  bool apply_schema = true;
  // How the migrations fill what older rows lack (db/migrations.h); only with apply_schema.
  MigrationOptions migration = {};
  // PostgreSQL only: how long one statement (or a connection attempt) may go unanswered
  // before the server counts as not answering and every connection to it refuses at once
  // until it answers again (db/postgres_connection.h, StorageHealth::reportNotAnswering;
  // npacd --db-timeout), and how often it is asked again meanwhile.
  std::chrono::milliseconds answer_timeout{5000};
  std::chrono::milliseconds probe_interval{1000};
  // Where this connection reports storage failures and committed writes (one log line
  // per change, db/storage_health.h); nullptr: StorageHealth::process().
  StorageHealth* health = nullptr;
  // SQLite only: when set, this connection runs no WAL checkpoint inside its commits; it
  // reports the WAL's size to `checkpointer`, whose thread checkpoints
  // (db/wal_checkpointer.h). nullptr: SQLite's automatic checkpoint at 1000 pages.
  WalCheckpointer* checkpointer = nullptr;
};

class Database {
 public:
  // `path` is an SQLite file, or a `postgresql://` / `postgres://` URL (isPostgresUrl).
  static Result<std::unique_ptr<Database>> open(const std::string& path,
                                                const OpenOptions& options = {});

  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // The file, or the PostgreSQL URL with its password hidden.
  const std::string& path() const { return path_; }
  Backend backend() const { return pg_ ? Backend::kPostgres : Backend::kSqlite; }
  Durability durability() const { return options_.durability; }

  // Runs SQL text without parameters (DDL, PRAGMA, BEGIN...). Never pass values in it:
  // values go through prepare() and bind*().
  Status execute(std::string_view sql);
  // Runs a script of several ';'-separated statements without parameters (migrations).
  Status executeScript(const std::string& sql);

  // A statement from this connection's cache, prepared on first use. If the cached one is
  // already in use (a nested query with the same text), a private copy is prepared and
  // finalized when its handle dies.
  Result<Statement> prepare(std::string_view sql);

  // PRAGMA integrity_check (kFull), or quick_check (kQuick: every page and b-tree, but
  // not whether the indexes match their tables; about ten times faster): an empty vector
  // when the file is sound, else SQLite's list of problems. For npacd's start, operators
  // and the crash test. SQLite only.
  enum class CheckDepth { kQuick, kFull };
  Result<std::vector<std::string>> integrityCheck(CheckDepth depth = CheckDepth::kFull);
  // PRAGMA page_count and page_size: the file's size in pages and bytes per page. SQLite only.
  Result<std::int64_t> pageCount();
  Result<std::int64_t> pageSize();

  // One WAL checkpoint (sqlite3_wal_checkpoint_v2) on this connection. kPassive copies
  // what no reader still needs into the database file without waiting for anyone;
  // kRestart also waits, up to the busy timeout, for the writers and readers in progress,
  // so that the next commit starts the WAL file from its beginning. The WAL's frames and
  // how many of them are now in the database file; `busy` when another checkpoint was
  // running or a RESTART could not finish waiting (not an error). A failure is returned,
  // not reported to the StorageHealth (no commit was lost). SQLite only.
  enum class CheckpointMode { kPassive, kRestart };
  struct CheckpointResult {
    int wal_frames = 0;
    int backfilled_frames = 0;
    bool busy = false;
  };
  Result<CheckpointResult> checkpointWal(CheckpointMode mode);

  // The id the last INSERT gave its row (SQLite's rowid; PostgreSQL's lastval()).
  std::int64_t lastInsertRowId() const;
  int changes() const;           // rows changed by the last INSERT/UPDATE/DELETE
  bool inTransaction() const;    // false in autocommit mode
  std::size_t cachedStatementCount() const { return cache_.size(); }
  std::size_t preparedStatementCount() const { return prepared_count_; }  // tests: cache hits

  // Turns an SQLite result code into a Status naming this file, with operator hints.
  Status errorStatus(int rc, std::string_view context) const;

  // Changes OpenOptions::busy_timeout for this connection from now on (SQLite; a
  // PostgreSQL connection keeps the lock_timeout it was opened with).
  void setBusyTimeout(std::chrono::milliseconds timeout) { options_.busy_timeout = timeout; }

  // The tracker this connection reports to (OpenOptions::health).
  StorageHealth& health() const;

  // The raw handle, for the benchmark's raw-sqlite3 baseline and tests only; nullptr on
  // PostgreSQL.
  sqlite3* handle() { return db_; }
  // The PostgreSQL connection (LISTEN/NOTIFY, tests); nullptr on SQLite.
  PostgresConnection* postgres() { return pg_.get(); }

 private:
  friend class Statement;
  friend class Transaction;

  struct CachedStatement {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };

  Database(std::string path, OpenOptions options, sqlite3* db);
  Database(std::string location, OpenOptions options, std::unique_ptr<PostgresConnection> pg);
  static Result<std::unique_ptr<Database>> openPostgres(const std::string& url, const OpenOptions& options);
  Status configure();
  Result<bool> holdsNoTable();  // true for a file without a single table
  void release(sqlite3_stmt* stmt, bool* in_use);
  void release(PostgresStatement* stmt, bool owned);
  Result<Statement> preparePostgres(std::string_view sql);

  std::string path_;
  OpenOptions options_;
  sqlite3* db_ = nullptr;
  struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  std::unordered_map<std::string, CachedStatement, TextHash, std::equal_to<>> cache_;
  std::unique_ptr<PostgresConnection> pg_;  // set: this is a PostgreSQL connection
  std::unordered_map<std::string, std::unique_ptr<PostgresStatement>, TextHash, std::equal_to<>> pg_cache_;
  std::size_t prepared_count_ = 0;
  int transaction_depth_ = 0;  // maintained by Transaction (savepoint nesting)
};

}  // namespace npac::db
