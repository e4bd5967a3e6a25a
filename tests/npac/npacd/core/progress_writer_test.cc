// ProgressWriter: the DeliveryStore's write path on a real SQLite file — a storage
// failure keeps writes in order in the backlog, later writes go behind it, retry()
// replays them; a read's storage failure holds delivery until a retry reads again.
#include "npac/npacd/core/progress_writer.h"

#include <catch2/catch.hpp>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "tests/db/temp_dir.h"

using namespace npac;
using namespace npac::npacd;

namespace {

struct WriterFixture {
  db::testing::TempDir dir;
  std::unique_ptr<db::Database> db = db::Database::open(dir.file("npacd.db")).value();
  std::unique_ptr<db::Database> reader = db::Database::open(dir.file("npacd.db")).value();
  db::OutboundQueue queue{*db};
  KnownStates known;
  ReadyMessages ready{queue};
  SettleSchedule settle{queue};
  ProgressFence fence{*db, [](const std::string&) {}};
  ProgressWriter writer{{*db, queue, known, ready, settle, fence}};

  WriterFixture() {
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
  }
  std::vector<db::MessageId> queued(int count) {
    std::vector<db::NewMessage> rows;
    for (int i = 0; i < count; ++i) rows.push_back(db::NewMessage{"0001", 1, 0, {0x30, 0x00}});
    return db::OutboundQueue(*db).appendBatch(rows, 1000).value();
  }
  db::MessageState stateOf(db::MessageId id) { return db::OutboundQueue(*reader).get(id).value().state; }
  static ProgressWrite sent(std::vector<db::MessageId> ids) {
    return ProgressWrite{ProgressWrite::Kind::kSent, "0001", std::move(ids), 1, 2000, {}};
  }
  static ProgressWrite acknowledged(db::MessageId id) {
    return ProgressWrite{ProgressWrite::Kind::kAcknowledged, "0001", {id}, 0, 2100, {}};
  }
};

}  // namespace

TEST_CASE("A turn's writes commit together and leave the writer healthy") {
  WriterFixture f;
  auto ids = f.queued(2);
  f.writer.commitTurn({WriterFixture::sent(ids), WriterFixture::acknowledged(ids[0])});
  CHECK(f.writer.healthy());
  CHECK(f.writer.backlog() == 0);
  CHECK(f.stateOf(ids[0]) == db::MessageState::kAcknowledged);
  CHECK(f.stateOf(ids[1]) == db::MessageState::kSent);
}

TEST_CASE("A turn the database refuses to store waits whole in the backlog and the writer turns unhealthy") {
  WriterFixture f;
  auto ids = f.queued(2);
  REQUIRE(f.db->execute("PRAGMA query_only = ON").isOk());  // SQLITE_READONLY: a storage failure
  f.writer.commitTurn({WriterFixture::sent(ids), WriterFixture::acknowledged(ids[0])});
  CHECK_FALSE(f.writer.healthy());
  CHECK(f.writer.backlog() == 2);
  CHECK(f.stateOf(ids[0]) == db::MessageState::kQueued);
}

TEST_CASE("A write made while the backlog waits goes behind it, not around it, even once the database takes writes") {
  WriterFixture f;
  auto ids = f.queued(1);
  REQUIRE(f.db->execute("PRAGMA query_only = ON").isOk());
  f.writer.commitTurn({WriterFixture::sent(ids)});
  REQUIRE(f.db->execute("PRAGMA query_only = OFF").isOk());
  // Applied around it, the `sent` replayed after would meet a failed row and be refused.
  f.writer.write(ProgressWrite{ProgressWrite::Kind::kFailed, "0001", {ids[0]}, 0, 2200, "no answer"});
  CHECK(f.writer.backlog() == 2);
  CHECK(f.stateOf(ids[0]) == db::MessageState::kQueued);
}

TEST_CASE("retry applies the backlog in order and the writer is healthy again") {
  WriterFixture f;
  auto ids = f.queued(1);
  REQUIRE(f.db->execute("PRAGMA query_only = ON").isOk());
  f.writer.commitTurn({WriterFixture::sent(ids)});
  f.writer.write(ProgressWrite{ProgressWrite::Kind::kFailed, "0001", {ids[0]}, 0, 2200, "no answer"});
  CHECK_FALSE(f.writer.retry());  // still refused: nothing lost, nothing applied
  CHECK(f.writer.backlog() == 2);
  REQUIRE(f.db->execute("PRAGMA query_only = OFF").isOk());
  CHECK(f.writer.retry());
  CHECK(f.writer.healthy());
  CHECK(f.writer.backlog() == 0);
  CHECK(f.stateOf(ids[0]) == db::MessageState::kFailed);
}

TEST_CASE("A read that meets a storage failure holds the writer unhealthy until a retry reads again") {
  WriterFixture f;
  f.writer.readFailed(db::Status::error(db::Status::Code::kIoError, "disk I/O error"), "reading the queue");
  CHECK_FALSE(f.writer.healthy());
  CHECK(f.writer.backlog() == 0);
  CHECK(f.writer.retry());
  CHECK(f.writer.healthy());
}

TEST_CASE("A read refused for another reason than storage leaves the writer healthy") {
  WriterFixture f;
  f.writer.readFailed(db::Status::notFound("no such message"), "reading a message");
  CHECK(f.writer.healthy());
}

TEST_CASE("A write the queue refuses for another reason than storage is dropped alone and the writer stays healthy") {
  WriterFixture f;
  auto ids = f.queued(1);
  // Moving a message that was never sent: the row is not in the state the write expects.
  f.writer.write(ProgressWrite{ProgressWrite::Kind::kMoveSent, "0001", {ids[0]}, 2, 0, {}});
  CHECK(f.writer.healthy());
  CHECK(f.writer.backlog() == 0);
  CHECK(f.stateOf(ids[0]) == db::MessageState::kQueued);
}
