// Bad files and bad disks: each gives a Status naming the file and what to do, never a
// crash, hang or exception — so npacd can refuse to start rather than run unpersisted.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "tests/support/immutable_file.h"
#include "db/migrations.h"
#include "db/outbound_queue.h"
#include "db/transaction.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;
using namespace std::chrono_literals;

namespace {

bool mentions(const Status& status, const std::string& text) {
  return status.toString().find(text) != std::string::npos;
}

// Makes a file unwritable even for root: mode 0444 plus, when permitted, the ext4
// immutable attribute (root ignores mode bits). Undone on destruction.
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(std::string path) : path_(std::move(path)) {
    ::chmod(path_.c_str(), 0444);
    if (::geteuid() == 0) immutable_ = setImmutable(true);
  }
  ~ReadOnlyFile() {
    if (immutable_) setImmutable(false);
    ::chmod(path_.c_str(), 0644);
  }
  // True when a write really is refused to us.
  bool effective() const { return ::access(path_.c_str(), W_OK) != 0 || immutable_; }

 private:
  bool setImmutable(bool on) {
    return npac::testing::setImmutable(path_, on);
  }

  std::string path_;
  bool immutable_ = false;
};

}  // namespace

TEST_CASE("A database in a directory that does not exist is refused naming the directory", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/npacd.db");
  auto db = Database::open(path);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCantOpen);
  CHECK(db.status().file() == path);
  CHECK(mentions(db.status(), dir.file("no/such/dir")));
  CHECK(mentions(db.status(), "mkdir -p"));
}

TEST_CASE("A directory given as the database path is refused", "[sqlite]") {
  TempDir dir;
  auto db = Database::open(dir.path());
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCantOpen);
  CHECK(mentions(db.status(), "is a directory"));
}

TEST_CASE("A missing file is refused when creation is not allowed", "[sqlite]") {
  TempDir dir;
  OpenOptions options;
  options.create_if_missing = false;
  auto db = Database::open(dir.file("npacd.db"), options);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCantOpen);
  CHECK(db.status().file() == dir.file("npacd.db"));
}

TEST_CASE("A file of garbage bytes with a .db name is reported corrupt with what to do", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 8192; ++i) out.put(static_cast<char>((i * 131 + 7) & 0xff));
  }
  auto db = Database::open(path);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCorrupt);
  CHECK(db.status().sqliteCode() == 26);  // SQLITE_NOTADB
  CHECK(db.status().file() == path);
  CHECK(mentions(db.status(), "restore the latest backup"));
}

TEST_CASE("A read-only database file is refused naming the file and the fix", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  { openFresh(dir); }
  ReadOnlyFile read_only(path);
  if (!read_only.effective()) {
    WARN("cannot make a file read-only for this user here; read-only case not exercised");
    return;
  }
  auto db = Database::open(path);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kReadOnly);
  CHECK(db.status().file() == path);
  CHECK(mentions(db.status(), "writable"));
}

TEST_CASE("A file locked by another connection past the busy timeout is reported locked", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  auto holder = openFresh(dir);
  // Like an operator's sqlite3 shell holding an exclusive lock.
  REQUIRE(holder->execute("PRAGMA locking_mode=EXCLUSIVE").isOk());
  Transaction txn(*holder);
  REQUIRE(txn.begin().isOk());
  REQUIRE(holder->execute("INSERT INTO service_providers VALUES('0001', 'A', 'soa', 1)").isOk());

  OpenOptions options;
  options.busy_timeout = 50ms;
  auto db = Database::open(path, options);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kBusy);
  CHECK(db.status().file() == path);
  CHECK(mentions(db.status(), "busy timeout (50 ms)"));
}

TEST_CASE("A write blocked by another writer past the busy timeout fails and writes nothing", "[sqlite]") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  OpenOptions options;
  options.busy_timeout = 50ms;
  auto other = Database::open(dir.file("npacd.db"), options);
  REQUIRE(other.isOk());
  Transaction txn(*db);
  REQUIRE(txn.begin().isOk());  // holds the write lock
  OutboundQueue queue(**other);
  auto ids = queue.appendBatch(std::vector{NewMessage{"0001", 1, 0, Bytes{1}}}, 1);
  REQUIRE_FALSE(ids.isOk());
  CHECK(ids.status().code() == Status::Code::kBusy);
  txn.rollback();
  CHECK(queue.count(MessageState::kQueued).value() == 0);
}

TEST_CASE("A full disk fails the append with a clear error and keeps what was committed", "[sqlite]") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  OutboundQueue queue(*db);
  auto kept = queue.appendBatch(std::vector{NewMessage{"0001", 1, 0, Bytes(100, 0x42)}}, 1);
  REQUIRE(kept.isOk());
  // Simulate the disk filling up: cap the file a few pages above its current size.
  auto pages = db->prepare("PRAGMA page_count");
  REQUIRE(pages->step().value());
  const std::int64_t page_count = pages->columnInt64(0);
  pages = db->prepare("SELECT 1");  // release the PRAGMA statement
  REQUIRE(db->execute("PRAGMA max_page_count=" + std::to_string(page_count + 4)).isOk());

  // 64 different PDUs (identical ones would share one body, schema 8).
  std::vector<NewMessage> big(64, NewMessage{"0001", 1, 0, Bytes(4000, 0x17)});
  for (std::size_t i = 0; i < big.size(); ++i) big[i].pdu[0] = static_cast<std::uint8_t>(i);
  auto ids = queue.appendBatch(big, 2);
  REQUIRE_FALSE(ids.isOk());
  CHECK(ids.status().code() == Status::Code::kFull);
  CHECK(ids.status().sqliteCode() == 13);  // SQLITE_FULL
  CHECK(ids.status().file() == dir.file("npacd.db"));
  CHECK(mentions(ids.status(), "free space"));
  CHECK_FALSE(db->inTransaction());
  CHECK(queue.count(MessageState::kQueued).value() == 1);  // nothing of the batch
  CHECK(queue.get(kept->front())->pdu == Bytes(100, 0x42));
  CHECK(db->integrityCheck()->empty());
}

TEST_CASE("An existing 0-byte database file is refused as not initialised and left untouched", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  { std::ofstream touch(path, std::ios::binary); }
  auto db = Database::open(path);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kUninitialized);
  CHECK(db.status().file() == path);
  CHECK(mentions(db.status(), "0 bytes"));
  CHECK(mentions(db.status(), "restore the latest backup"));
  CHECK(mentions(db.status(), "--init"));
  CHECK(std::filesystem::file_size(path) == 0);
  CHECK_FALSE(std::filesystem::exists(path + "-wal"));
  CHECK_FALSE(std::filesystem::exists(path + "-shm"));
}

TEST_CASE("An existing SQLite file without a single table is refused as not initialised", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  {
    OpenOptions raw;
    raw.apply_schema = false;
    auto blank = Database::open(path, raw);  // WAL mode writes the header, no table
    REQUIRE(blank.isOk());
  }
  REQUIRE(std::filesystem::file_size(path) > 0);
  auto db = Database::open(path);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kUninitialized);
  CHECK(mentions(db.status(), "without a single table"));
}

TEST_CASE("Asked to initialise, an existing 0-byte file becomes a new database at the current schema", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  { std::ofstream touch(path, std::ios::binary); }
  {
    OpenOptions options;
    options.initialize_existing_blank = true;
    auto db = Database::open(path, options);
    INFO(db.status().toString());
    REQUIRE(db.isOk());
    auto version = readSchemaVersion(**db);
    REQUIRE(version.isOk());
    CHECK(version->version == kCurrentSchemaVersion);
  }
  auto reopened = Database::open(path);  // initialised now: no flag needed any more
  CHECK(reopened.isOk());
}

TEST_CASE("Asked to initialise, a file holding another application's tables is still refused", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  {
    OpenOptions raw;
    raw.apply_schema = false;
    auto other = Database::open(path, raw);
    REQUIRE(other.isOk());
    REQUIRE((*other)->execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY)").isOk());
  }
  OpenOptions options;
  options.initialize_existing_blank = true;
  auto db = Database::open(path, options);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCorrupt);
  CHECK(mentions(db.status(), "another application"));
}

TEST_CASE("Asked to initialise, a file of garbage bytes is still refused as corrupt", "[sqlite]") {
  TempDir dir;
  const std::string path = dir.file("npacd.db");
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(8192, 'x');
  }
  OpenOptions options;
  options.initialize_existing_blank = true;
  auto db = Database::open(path, options);
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCorrupt);
  CHECK(std::filesystem::file_size(path) == 8192);
}

TEST_CASE("A Status renders category, message, file, SQLite codes and hint on one line", "[sqlite]") {
  Status status = Status::make(Status::Code::kFull, "database or disk is full", "/var/npacd.db",
                               "free space", 13, 13);
  CHECK(status.toString() ==
        "database full: database or disk is full [file /var/npacd.db] (sqlite 13/13) — free space");
  CHECK(Status::ok().toString() == "ok");
}

TEST_CASE("A connection waiting for another's lock retries after 10 us doubling to 1 ms until the busy timeout is spent", "[sqlite]") {
  using std::chrono::microseconds;
  CHECK(npac::db::busyWaitBefore(0) == microseconds(10));
  CHECK(npac::db::busyWaitBefore(1) == microseconds(20));
  CHECK(npac::db::busyWaitBefore(6) == microseconds(640));
  CHECK(npac::db::busyWaitBefore(7) == microseconds(1000));
  CHECK(npac::db::busyWaitBefore(1000) == microseconds(1000));
  CHECK(npac::db::busyWaitedBefore(0) == microseconds(0));
  CHECK(npac::db::busyWaitedBefore(1) == microseconds(10));
  CHECK(npac::db::busyWaitedBefore(7) == microseconds(1270));  // 10 + 20 + … + 640
  CHECK(npac::db::busyWaitedBefore(9) == microseconds(3270));
  // A 5 s busy timeout is spent after about 5,000 waits of 1 ms, never one long sleep.
  CHECK(npac::db::busyWaitedBefore(5005) < std::chrono::milliseconds(5000));
  CHECK(npac::db::busyWaitedBefore(5006) >= std::chrono::milliseconds(5000));
}
