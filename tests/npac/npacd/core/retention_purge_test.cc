// RetentionPurge's pace: a backlog is purged run after run, each run followed by a pause
// of kPurgePauseFactor times its own duration, then at most once per kPurgeInterval.
#include "npac/npacd/core/retention_purge.h"

#include <catch2/catch.hpp>

#include <optional>
#include <vector>

#include "associations/outstanding.h"
#include "common/time_source.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "tests/db/temp_dir.h"
#include "tunables/registry.h"

using namespace npac;
using namespace npac::npacd;
using namespace std::chrono_literals;

namespace {

// A clock on which every steady reading is `per_read` after the one before: a purge run,
// which reads the clock when it starts and when it ends, takes exactly `per_read`.
class ReadingClock final : public npac::common::TimeSource {
 public:
  explicit ReadingClock(std::chrono::milliseconds per_read) : per_read_(per_read) {}
  associations::TimePoint now() const override {
    const associations::TimePoint t = steady_;
    steady_ += per_read_;
    return t;
  }
  common::SystemTime wallTime() const override {  // 2026-01-01
    return common::SystemTime(std::chrono::milliseconds(1'767'225'600'000));
  }
  void advance(associations::Duration by) { steady_ += by; }

 private:
  std::chrono::milliseconds per_read_;
  mutable associations::TimePoint steady_{std::chrono::hours(1)};
};

struct PurgeFixture {
  db::testing::TempDir dir;
  std::unique_ptr<db::Database> db;
  std::unique_ptr<tunables::TunableRegistry> registry;

  PurgeFixture() {
    db = db::Database::open(dir.file("npacd.db")).value();
    REQUIRE(tunables::TunableRegistry::open(*db, [] { return db::TimeMs{1'767'225'600'000}; }, &registry).isOk());
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
  }
  // `n` messages acknowledged `age` before the clocks' wall time: past queue_retention.
  void acknowledged(std::size_t n, std::chrono::hours age) {
    const db::TimeMs at = 1'767'225'600'000 - std::chrono::duration_cast<std::chrono::milliseconds>(age).count();
    std::vector<db::NewMessage> messages(n, db::NewMessage{"0001", 1, 0, db::Bytes{0x30, 0x00}});
    const std::vector<db::MessageId> ids = db::OutboundQueue(*db).appendBatch(messages, at).value();
    REQUIRE(db::OutboundQueue(*db).markSent(ids, 1, at).isOk());
    REQUIRE(db::OutboundQueue(*db).markAcknowledged(ids, at).isOk());
  }
  std::size_t left() { return db::OutboundQueue(*db).count(db::MessageState::kAcknowledged).value(); }
};

}  // namespace

TEST_CASE("A purge run that left a backlog is due again after three times its own duration") {
  PurgeFixture f;
  f.acknowledged(2 * kPurgeBatch + 7, std::chrono::hours(24 * 8));  // past the 7-day default
  ReadingClock clock(4ms);
  RetentionPurge purge(*f.db, *f.registry, clock);
  REQUIRE_FALSE(purge.continueAfter());  // nothing ran yet
  // Readings: the run starts at T and ends at T+4 ms, so the next is due at T+16 ms.
  CHECK(purge.runIfDue().messages == kPurgeBatch);
  const std::optional<associations::Duration> pause = purge.continueAfter();  // read at T+8 ms
  REQUIRE(pause);
  CHECK(*pause == 8ms);
  CHECK_FALSE(purge.runIfDue().ran);     // read at T+12 ms: still in the pause
  CHECK(purge.runIfDue().messages == kPurgeBatch);  // read at T+16 ms: due; ends at T+20
  clock.advance(8ms);                                 // T+32 ms: the second pause is over
  CHECK(purge.runIfDue().messages == 7);
  CHECK_FALSE(purge.continueAfter());  // through: the next run is a kPurgeInterval away
  CHECK_FALSE(purge.runIfDue().ran);
  CHECK(f.left() == 0);
}

TEST_CASE("A purge through its backlog runs again only after kPurgeInterval") {
  PurgeFixture f;
  npac::common::ManualTimeSource clock(1'767'225'600'000);
  RetentionPurge purge(*f.db, *f.registry, clock);
  CHECK(purge.runIfDue().ran);  // the first call runs (nothing to purge)
  CHECK_FALSE(purge.continueAfter());
  f.acknowledged(3, std::chrono::hours(24 * 8));
  clock.advance(kPurgeInterval - 1ms);
  CHECK_FALSE(purge.runIfDue().ran);
  clock.advance(1ms);
  CHECK(purge.runIfDue().messages == 3);
}

TEST_CASE("A purge backlog of several batches is removed run after run without waiting for the interval") {
  PurgeFixture f;
  f.acknowledged(5 * kPurgeBatch, std::chrono::hours(24 * 8));
  npac::common::ManualTimeSource clock(1'767'225'600'000);  // runs take no time here: no pause
  RetentionPurge purge(*f.db, *f.registry, clock);
  std::size_t runs = 0;
  while (runs < 10) {
    ++runs;
    CHECK(purge.runIfDue().ran);
    const std::optional<associations::Duration> pause = purge.continueAfter();
    if (!pause) break;
    CHECK(*pause == associations::Duration::zero());
  }
  CHECK(runs == 6);  // five full batches, then one that finds nothing left
  CHECK(f.left() == 0);
}
