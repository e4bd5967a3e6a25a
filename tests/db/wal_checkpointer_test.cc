#include "db/wal_checkpointer.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "db/storage_health.h"
#include "fixtures.h"
#include "tests/support/eventually.h"
#include "tests/support/immutable_file.h"

using namespace npac::db;
using npac::testing::eventually;
using namespace npac::db::testing;
using namespace std::chrono_literals;

namespace {

// A connection to dir's npacd.db whose WAL checkpoints are left to `checkpointer`.
std::unique_ptr<Database> openWith(const TempDir& dir, WalCheckpointer& checkpointer) {
  OpenOptions options;
  options.durability = Durability::kNormal;
  options.checkpointer = &checkpointer;
  return openFresh(dir, options);
}

std::unique_ptr<WalCheckpointer> openCheckpointer(const TempDir& dir, WalCheckpointer::Options options) {
  OpenOptions open;
  open.durability = Durability::kNormal;
  auto checkpointer = WalCheckpointer::open(dir.file("npacd.db"), open, options);
  INFO(checkpointer.status().toString());
  REQUIRE(checkpointer.isOk());
  return std::move(checkpointer).value();
}

// `commits` transactions, each adding one row of almost a page (each commit writes a few
// WAL frames: the row's page, the b-tree above it, the file's header page).
void writePages(Database& db, int commits) {
  REQUIRE(db.execute("CREATE TABLE IF NOT EXISTS filler(data BLOB)").isOk());
  for (int i = 0; i < commits; ++i) {
    REQUIRE(db.execute("INSERT INTO filler VALUES (zeroblob(4000))").isOk());
  }
}

// The schema's creation fills the WAL first: copy it and let the next commit start the
// WAL over, so that a test counts its own pages from nearly nothing.
void startOver(Database& db, WalCheckpointer& checkpointer) {
  writePages(db, 1);
  REQUIRE(checkpointer.checkpointIfDue());
  writePages(db, 1);
  REQUIRE(checkpointer.metrics().wal_pages < 16);
}

// chattr +i on `path` for the scope (a checkpoint's writes into the database file then fail
// with EPERM, even as root; the WAL beside it stays writable). `on` is false where the
// attribute cannot be set (not root, or a file system without it).
struct Immutable {
  std::string path;
  bool on = npac::testing::setImmutable(path, true);
  ~Immutable() {
    if (on) npac::testing::setImmutable(path, false);
  }
};

std::int64_t rows(Database& db) {
  auto count = db.prepare("SELECT count(*) FROM filler");
  REQUIRE(count.isOk());
  REQUIRE(count->step().value());
  return count->columnInt64(0);
}

}  // namespace

TEST_CASE("A connection given a checkpointer runs no checkpoint in its commits: the WAL grows past SQLite's "
          "1000 pages until the checkpointer runs",
          "[sqlite]") {
  TempDir dir;
  auto checkpointer = openCheckpointer(dir, {});  // SQLite's mark, 1000 pages; no thread
  auto db = openWith(dir, *checkpointer);
  writePages(*db, 1200);
  // SQLite's automatic checkpoint would have copied the WAL at 1000 pages and the next
  // commit started it over; here it holds every frame written.
  CHECK(checkpointer->metrics().wal_pages > 1000);
  CHECK(checkpointer->metrics().checkpoints == 0);

  CHECK(checkpointer->checkpointIfDue());
  CHECK(checkpointer->metrics().checkpoints == 1);
  CHECK_FALSE(checkpointer->checkpointIfDue());  // nothing committed since: none due
  // Every frame was copied and no reader holds the WAL: the next commit starts it over.
  writePages(*db, 1);
  CHECK(checkpointer->metrics().wal_pages < 10);
  CHECK(rows(*db) == 1201);
}

TEST_CASE("The checkpointer's thread checkpoints once a commit finds the WAL past its mark", "[sqlite]") {
  TempDir dir;
  auto checkpointer = openCheckpointer(dir, {.wal_pages = 8, .restart_pages = 100000});
  auto db = openWith(dir, *checkpointer);
  checkpointer->start();
  writePages(*db, 10);
  // Bounded wait for the thread's checkpoint (an event, not a timing assumption).
  eventually([&] { return checkpointer->metrics().checkpoints != 0; }, 10s, 1ms);
  REQUIRE(checkpointer->metrics().checkpoints >= 1);
  checkpointer->stop();
  CHECK(checkpointer->metrics().restarts == 0);
  CHECK(checkpointer->metrics().failures == 0);
  CHECK(rows(*db) == 10);
}

TEST_CASE("A WAL grown to the restart mark is checkpointed with RESTART so that the next commit starts it over",
          "[sqlite]") {
  TempDir dir;
  auto checkpointer = openCheckpointer(dir, {.wal_pages = 16, .restart_pages = 64});
  auto db = openWith(dir, *checkpointer);
  startOver(*db, *checkpointer);
  const auto before = checkpointer->metrics();

  writePages(*db, 6);  // past 16 pages, below 64: passive
  REQUIRE(checkpointer->metrics().wal_pages >= 16);
  REQUIRE(checkpointer->metrics().wal_pages < 64);
  REQUIRE(checkpointer->checkpointIfDue());
  CHECK(checkpointer->metrics().restarts == before.restarts);
  writePages(*db, 30);
  REQUIRE(checkpointer->metrics().wal_pages >= 64);
  REQUIRE(checkpointer->checkpointIfDue());
  CHECK(checkpointer->metrics().restarts == before.restarts + 1);
  CHECK(checkpointer->metrics().checkpoints == before.checkpoints + 2);
  writePages(*db, 1);
  CHECK(checkpointer->metrics().wal_pages < 16);
}

TEST_CASE("A RESTART that a reader holds back gives up after restart_wait and is not tried again until the WAL "
          "grew by another restart_pages",
          "[sqlite]") {
  TempDir dir;
  auto checkpointer = openCheckpointer(dir, {.wal_pages = 16, .restart_pages = 64, .restart_wait = 20ms});
  auto db = openWith(dir, *checkpointer);
  startOver(*db, *checkpointer);
  const auto before = checkpointer->metrics();

  // A reader in a transaction keeps its snapshot, and with it the WAL.
  auto reader = openFresh(dir);
  REQUIRE(reader->execute("BEGIN").isOk());
  REQUIRE(rows(*reader) == 2);
  writePages(*db, 30);
  REQUIRE(checkpointer->metrics().wal_pages >= 64);
  REQUIRE(checkpointer->checkpointIfDue());  // a RESTART: the reader outlasts its wait
  CHECK(checkpointer->metrics().busy == before.busy + 1);
  CHECK(checkpointer->metrics().restarts == before.restarts);
  // The next ones are passive (no new wait for the reader) while the WAL grows less than
  // another 64 pages, and commits carry on.
  writePages(*db, 2);
  REQUIRE(checkpointer->checkpointIfDue());
  CHECK(checkpointer->metrics().busy == before.busy + 1);
  CHECK(checkpointer->metrics().restarts == before.restarts);
  CHECK(checkpointer->metrics().checkpoints == before.checkpoints + 1);

  // The reader done, a checkpoint copies everything and the next commit starts the WAL over.
  REQUIRE(reader->execute("COMMIT").isOk());
  writePages(*db, 1);
  REQUIRE(checkpointer->checkpointIfDue());
  writePages(*db, 1);
  CHECK(checkpointer->metrics().wal_pages < 16);
  CHECK(rows(*db) == 36);
}

TEST_CASE("A checkpoint that cannot write the database file is counted as failed while commits go on into the WAL",
          "[sqlite]") {
  TempDir dir;
  auto checkpointer = openCheckpointer(dir, {.wal_pages = 16, .restart_pages = 100000});
  auto db = openWith(dir, *checkpointer);
  writePages(*db, 1);
  REQUIRE(checkpointer->checkpointIfDue());  // the schema is in the file
  const auto before = checkpointer->metrics();
  Immutable immutable{dir.file("npacd.db")};
  if (!immutable.on) {
    WARN("SKIPPED: the immutable attribute cannot be set here (needs root and ext4/xfs/btrfs)");
    return;
  }
  writePages(*db, 10);  // the commits go on: the WAL takes them
  REQUIRE(checkpointer->checkpointIfDue());
  CHECK(checkpointer->metrics().failures == before.failures + 1);
  CHECK(checkpointer->metrics().checkpoints == before.checkpoints);
  CHECK_FALSE(StorageHealth::process().failing());  // no commit failed

  npac::testing::setImmutable(dir.file("npacd.db"), false);
  immutable.on = false;
  writePages(*db, 20);  // tried again once the WAL grew by another wal_pages (each commit adds a page)
  REQUIRE(checkpointer->checkpointIfDue());
  CHECK(checkpointer->metrics().checkpoints == before.checkpoints + 1);
  CHECK(checkpointer->metrics().failures == before.failures + 1);
  CHECK(rows(*db) == 31);
}

TEST_CASE("A checkpoint that failed is tried again only once the WAL has grown by another wal_pages", "[sqlite]") {
  TempDir dir;
  auto checkpointer = openCheckpointer(dir, {.wal_pages = 16, .restart_pages = 100000});
  auto db = openWith(dir, *checkpointer);
  writePages(*db, 1);
  REQUIRE(checkpointer->checkpointIfDue());
  const auto before = checkpointer->metrics();
  Immutable immutable{dir.file("npacd.db")};
  if (!immutable.on) {
    WARN("SKIPPED: the immutable attribute cannot be set here (needs root and ext4/xfs/btrfs)");
    return;
  }
  writePages(*db, 20);
  REQUIRE(checkpointer->checkpointIfDue());
  REQUIRE(checkpointer->metrics().failures == before.failures + 1);
  // The next commits do not ask again while the WAL is within wal_pages of the failure.
  writePages(*db, 1);
  CHECK_FALSE(checkpointer->checkpointIfDue());
  writePages(*db, 2);
  CHECK_FALSE(checkpointer->checkpointIfDue());
  CHECK(checkpointer->metrics().failures == before.failures + 1);
  writePages(*db, 20);
  CHECK(checkpointer->checkpointIfDue());
  CHECK(checkpointer->metrics().failures == before.failures + 2);  // still immutable: failed again
}

TEST_CASE("A checkpointer is refused for a PostgreSQL database, which checkpoints by itself", "[sqlite]") {
  auto checkpointer = WalCheckpointer::open("postgresql://127.0.0.1:1/none", {});
  REQUIRE_FALSE(checkpointer.isOk());
  CHECK(checkpointer.status().code() == Status::Code::kInvalidArgument);
  CHECK_THAT(checkpointer.status().toString(), Catch::Contains("SQLite"));
}
