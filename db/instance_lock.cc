#include "db/instance_lock.h"

#include "db/database.h"
#include "db/postgres_connection.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <sstream>

namespace npac::db {
namespace {

constexpr std::size_t kMaxLockFileBytes = 4096;  // ours are ~60 bytes; never read a huge file

std::string formatUtc(TimeMs at) {
  const std::time_t seconds = static_cast<std::time_t>(at / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string hostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

Status systemError(Status::Code code, const std::string& what, const std::string& path, int error,
                   std::string hint) {
  return Status::make(code, what + ": " + std::strerror(error), path, std::move(hint));
}

Status openError(const std::string& lock_path, const std::string& database_path, int error) {
  const Status::Code code =
      error == EACCES || error == EROFS || error == EPERM ? Status::Code::kReadOnly : Status::Code::kCantOpen;
  return systemError(code, "cannot open the instance lock file " + lock_path, database_path, error,
                     "npacd needs to create and write files in the database's directory");
}

std::string readAll(int fd) {
  std::string text(kMaxLockFileBytes, '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

}  // namespace

std::string InstanceLock::lockPathFor(const std::string& database_path) {
  return database_path + ".lock";
}

std::optional<InstanceLockHolder> InstanceLock::parseHolder(const std::string& text) {
  InstanceLockHolder holder;
  bool has_pid = false, has_host = false, has_start = false;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) return std::nullopt;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    if (key == "pid") {
      holder.pid = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || holder.pid <= 0) return std::nullopt;
      has_pid = true;
    } else if (key == "host") {
      holder.host = value;
      has_host = true;
    } else if (key == "started_at") {
      holder.started_at = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0) return std::nullopt;
      has_start = true;
    }
  }
  if (!has_pid || !has_host || !has_start) return std::nullopt;
  return holder;
}

InstanceLock::InstanceLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

InstanceLock::InstanceLock(std::string path, std::unique_ptr<Database> session)
    : path_(std::move(path)), session_(std::move(session)) {}

Result<std::unique_ptr<InstanceLock>> InstanceLock::acquirePostgres(const std::string& url, TimeMs now,
                                                                    const std::string& node) {
  OpenOptions options;
  options.apply_schema = false;  // the lock comes before the migrations
  Result<std::unique_ptr<Database>> session = Database::open(url, options);
  if (!session) return session.status();
  Database& db = **session;
  const std::string me = "npacd node " + node + ", pid " + std::to_string(static_cast<long>(getpid())) +
                         " on host " + hostName() + " since " + formatUtc(now);
  Result<Statement> name = db.prepare("SELECT set_config('application_name', ?, false)");
  if (!name) return name.status();
  name->bindText(0, me);
  if (Status status = name->run(); !status) return status;
  // The second key: the node name's hash, kept positive (pg_locks shows it as an oid).
  Result<Statement> take = db.prepare("SELECT pg_try_advisory_lock(CAST(? AS INTEGER), hashtext(?) & 2147483647)");
  if (!take) return take.status();
  take->bindInt64(0, kPostgresInstanceLockKey).bindText(1, node);
  Result<bool> row = take->step();
  if (!row) return row.status();
  if (*row && take->columnBool(0)) {
    take->reset();
    name->reset();
    return std::unique_ptr<InstanceLock>(new InstanceLock(db.path(), std::move(session).value()));
  }
  take->reset();
  name->reset();
  // Who holds it: the other session's application_name and address (pg_stat_activity).
  Result<Statement> holder = db.prepare(
      "SELECT a.application_name, COALESCE(host(a.client_addr), 'a local socket') FROM pg_locks l "
      "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
      "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
      "AND CAST(l.classid AS BIGINT) = CAST(? AS BIGINT) AND CAST(l.objid AS BIGINT) = (hashtext(?) & 2147483647) "
      "AND l.objsubid = 2 LIMIT 1");
  std::string who = "a session that has ended meanwhile";
  if (holder) {
    holder->bindInt64(0, kPostgresInstanceLockKey).bindText(1, node);
    Result<bool> found = holder->step();
    if (found.isOk() && *found) who = holder->columnText(0) + ", connected from " + holder->columnText(1);
  }
  return Status::make(Status::Code::kBusy,
                      "another npacd is using this PostgreSQL database as node '" + node + "' (" + who +
                          "); this one changed nothing in it",
                      db.path(), "stop that npacd first, or give this one its own --node name");
}

Result<std::unique_ptr<InstanceLock>> InstanceLock::acquire(const std::string& database_path,
                                                            TimeMs now, const std::string& node) {
  if (isPostgresUrl(database_path)) return acquirePostgres(database_path, now, node);
  const std::string lock_path = lockPathFor(database_path);
  // O_NOFOLLOW: a symlink planted at the lock's name must not make us truncate its target.
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return openError(lock_path, database_path, errno);
  std::unique_ptr<InstanceLock> lock(new InstanceLock(lock_path, fd));

  int rc;
  do {
    rc = flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int error = errno;
    if (error != EWOULDBLOCK) {
      return systemError(Status::Code::kIoError, "cannot lock " + lock_path, database_path, error,
                         "keep the database on a local filesystem that supports flock");
    }
    std::optional<InstanceLockHolder> holder = parseHolder(readAll(fd));
    std::string who = holder ? "pid " + std::to_string(holder->pid) + " on host " + holder->host +
                                   ", running since " + formatUtc(holder->started_at)
                             : "a process that has not recorded itself in " + lock_path + " yet";
    return Status::make(Status::Code::kBusy,
                        "another npacd is using this database (" + who +
                            "); this one changed nothing in it",
                        database_path,
                        "stop that npacd first, or give this one its own --db file");
  }

  std::string content = "pid=" + std::to_string(static_cast<long>(getpid())) + "\nhost=" + hostName() +
                        "\nstarted_at=" + std::to_string(now) + "\n";
  if (ftruncate(fd, 0) != 0) {
    return systemError(Status::Code::kIoError, "cannot write " + lock_path, database_path, errno,
                       "check the disk and the directory's permissions");
  }
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = pwrite(fd, content.data() + written, content.size() - written,
                             static_cast<off_t>(written));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return systemError(errno == ENOSPC ? Status::Code::kFull : Status::Code::kIoError,
                         "cannot write " + lock_path, database_path, n < 0 ? errno : EIO,
                         "check the disk and the directory's permissions");
    }
    written += static_cast<std::size_t>(n);
  }
  return lock;
}

InstanceLock::~InstanceLock() {
  // Closing the only descriptor of the open file description releases the flock. The
  // content stays: it is rewritten by the next holder and only read while locked.
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace npac::db
