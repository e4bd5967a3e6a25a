// InstanceLock: at most one npacd per database file.
//
// npacd's start-up changes its database before it serves anything: the migrations, and
// the recovery that puts every message still "sent" at the last stop back in the queue
// (AssociationManager::recoverInterrupted). Run against a database another npacd is
// using, that recovery takes the live instance's messages in flight and makes it send
// them again under new invoke ids. So before npacd opens the database at all it takes
// this lock, and a second npacd on the same file is refused before it reads or writes
// a single page (no migration, no requeue, no WAL file written).
//
// The lock is flock(2) LOCK_EX | LOCK_NB on "<database>.lock", a file beside the
// database created owner-only (0600). After taking it the holder writes its pid, host
// name and start time into the file, which is what the refusal quotes ("in use by pid 41
// on host soa1 since 2026-12-01T12:00:00Z"). The kernel drops an flock when the last
// descriptor of its open file description closes — at any exit, including kill -9 or a
// crash — so a lock left by a dead npacd never needs cleaning up: the stale file is
// simply locked again and overwritten by the next start. An flock belongs to the open
// file description, so a second acquire() in the same process is refused too.
// (flock is advisory and local: it does not guard a database on NFS shared by two
// hosts; docs/DATABASE.md says to keep the database on a local filesystem.)
//
// On PostgreSQL (a `postgresql://` database) several npacd nodes share the database
// (docs/OPERATIONS.md "Two sites"; who serves which provider is decided by provider
// leases, db/lease_store.h), but each node NAME is used by one process at a time: the
// lock is the session-level advisory lock pg_try_advisory_lock(kPostgresInstanceLockKey,
// hash of the node name) of the npacd database, held by a
// connection of its own that names this process in application_name ("npacd pid 41 on
// host soa1"), which is what the refusal quotes (pg_stat_activity). The server drops it
// when that session ends — npacd's exit, kill -9, or a lost connection.
//
// Threading: acquire() from any thread; the object is owned by one thread and only
// releases the lock in its destructor. Neither copyable nor movable: hold it in the
// unique_ptr acquire() returns for as long as the database is in use.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "db/clock.h"
#include "db/status.h"

namespace npac::db {

class Database;

// The advisory lock's key on PostgreSQL (any constant of npacd's own).
inline constexpr long long kPostgresInstanceLockKey = 7236053;

// What a lock file says about the npacd holding it.
struct InstanceLockHolder {
  long pid = 0;
  std::string host;
  TimeMs started_at = 0;
};

class InstanceLock {
 public:
  // "<database_path>.lock".
  static std::string lockPathFor(const std::string& database_path);

  // Takes the lock for `database_path` and records this process (getpid, host name,
  // `now`) in the lock file. Errors: kBusy when another process (or another acquire in
  // this one) holds it, naming the holder from its lock file; kCantOpen / kReadOnly /
  // kIoError when the lock file cannot be created, opened or written.
  // `node`: the npacd node name (PostgreSQL only; SQLite has one npacd per file).
  static Result<std::unique_ptr<InstanceLock>> acquire(const std::string& database_path, TimeMs now,
                                                       const std::string& node = "npacd");

  // Parses a lock file's text ("pid=…\nhost=…\nstarted_at=…\n"); nullopt when it is
  // empty or not in that form (a holder that has not written it yet, a foreign file).
  static std::optional<InstanceLockHolder> parseHolder(const std::string& text);

  ~InstanceLock();  // releases the lock (the file stays, see above)
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  InstanceLock(std::string path, int fd);
  InstanceLock(std::string path, std::unique_ptr<Database> session);
  static Result<std::unique_ptr<InstanceLock>> acquirePostgres(const std::string& url, TimeMs now,
                                                               const std::string& node);

  std::string path_;
  int fd_ = -1;
  std::unique_ptr<Database> session_;  // PostgreSQL: the session holding the advisory lock
};

}  // namespace npac::db
