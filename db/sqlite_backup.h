// A consistent copy of a live npacd SQLite database, and the check of such a copy — the
// two halves of `npacctl backup FILE` (docs/OPERATIONS.md "Backup, restore and upgrade").
//
// SqliteCopier::copy() opens the database on a connection of its own, read-only, and runs
// `VACUUM INTO` a new file: one read transaction, so the copy is the database as of one
// commit — the WAL's committed transactions included, none half-written — while npacd's
// own connections keep committing (WAL lets one writer and any readers proceed; a reader
// only keeps the WAL from being checkpointed past its snapshot until it ends, so the WAL
// grows for the length of the copy). Everything lives in that file: providers, keys,
// tunables, the queue, the logs, the NPAC's private signing keys and the admin API's token
// digests; so the copy is created mode 0600 and must be kept like the database itself.
// The copy is compacted and in rollback-journal mode; npacd turns WAL on when it opens it.
// VACUUM INTO is chosen over the online backup API (sqlite3_backup_step) because a backup
// stepped in pieces restarts whenever another connection writes in between — under load it
// may never finish — and one step of the whole file cannot be interrupted; VACUUM INTO is
// one statement that interrupt() stops at once.
//
// inspectSqliteBackup() opens a copy read-only and says whether npacd can start on it:
// PRAGMA integrity_check, its schema version (the meta table, db/migrations.h), and what
// it holds, counted.
//
// Threading: a SqliteCopier is used by one thread (copy(), usually a worker) while
// interrupt() may be called from any other. inspectSqliteBackup is a free function that
// opens its own connection: any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "db/status.h"

struct sqlite3;

namespace npac::db {

class SqliteCopier {
 public:
  SqliteCopier() = default;
  SqliteCopier(const SqliteCopier&) = delete;
  SqliteCopier& operator=(const SqliteCopier&) = delete;

  // Copies the database `source` into `target`, which must not exist (it is created mode
  // 0600 in a directory that must exist). On failure `target` is removed; an interrupted
  // copy fails with kShutdown.
  Status copy(const std::string& source, const std::string& target);
  // Stops a copy() running on another thread (it returns kShutdown), or the next one.
  void interrupt();

 private:
  std::mutex mutex_;  // guards connection_ and interrupted_ against interrupt()
  sqlite3* connection_ = nullptr;
  bool interrupted_ = false;
};

// What a backup file holds, as inspectSqliteBackup() reads it.
struct BackupSummary {
  std::vector<std::string> integrity_problems;  // empty: PRAGMA integrity_check said ok
  int schema_version = 0;                       // meta.version
  int last_compatible_version = 0;              // meta.last_compatible_version
  std::int64_t providers = 0;
  std::int64_t messages = 0;         // outbound_queue rows, in any state
  std::int64_t unacknowledged = 0;   // of which queued or sent
  std::int64_t npac_keys = 0;        // the NPAC's own signing keys (private halves inside)
  std::int64_t tokens = 0;           // admin API tokens (their SHA-256 digests)
  bool sound() const { return integrity_problems.empty(); }
};

// How much inspectSqliteBackup() reads: every page (PRAGMA integrity_check, then the
// counts), or only the schema version (npacd, about the copy it just made).
enum class BackupCheck { kFull, kSchemaOnly };

// Reads `path` without changing it (read-only; no -wal or -shm is made). kCorrupt for a
// file that is not an SQLite database, kInvalidArgument for one that is not npacd's (no
// meta table), kCantOpen when it cannot be opened; a sound-looking file whose pages fail
// the check comes back ok with integrity_problems filled (and nothing else read).
Result<BackupSummary> inspectSqliteBackup(const std::string& path, BackupCheck check = BackupCheck::kFull);

}  // namespace npac::db
