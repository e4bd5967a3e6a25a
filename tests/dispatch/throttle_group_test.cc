// Egress throttle group (DSR "Egress Throttle Groups"): EMR and EPT counted independently,
// level = max.
#include "dispatch/throttle_group.h"

#include <catch2/catch.hpp>

#include "tests/dispatch/test_epoch.h"

#include <chrono>

namespace npac::dispatch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::kT0;

ThrottleGroupConfig config() {
  ThrottleGroupConfig c;
  c.rate.enabled = true;
  c.rate.maximum = 100;  // msg/s
  c.rate.levels = {{100, 80}};
  c.pending.enabled = true;
  c.pending.maximum = 10;
  c.pending.levels = {{50, 40}, {70, 60}, {90, 80}};
  c.pending.abatement_time = seconds(1);
  return c;
}

}  // namespace

TEST_CASE("Pending transactions above onset raise the group level", "[throttle][group]") {
  EgressThrottleGroup g(config());
  for (int i = 0; i < 5; ++i) g.onSent(kT0);
  CHECK(g.ept() == 5);
  CHECK(g.level() == 0);  // 50 % does not exceed 50 %
  g.onSent(kT0);
  CHECK(g.level() == 1);
  g.onSent(kT0);
  g.onSent(kT0);
  CHECK(g.pendingLevel() == 2);
  CHECK(g.rateLevel() == 0);
}

TEST_CASE("Completed transactions abate the level after the abatement time",
          "[throttle][group]") {
  EgressThrottleGroup g(config());
  for (int i = 0; i < 6; ++i) g.onSent(kT0);
  REQUIRE(g.level() == 1);
  for (int i = 0; i < 3; ++i) g.onTransactionEnded(kT0 + milliseconds(10));
  CHECK(g.ept() == 3);
  CHECK(g.level() == 1);  // below 40 % but not yet 1 s in the level
  CHECK(g.evaluate(kT0 + seconds(1)) == 0);
}

TEST_CASE("Messages that open no transaction count in EMR only", "[throttle][group]") {
  EgressThrottleGroup g(config());
  for (int i = 0; i < 101; ++i) g.onSent(kT0, false);
  CHECK(g.ept() == 0);
  CHECK(g.emr(kT0) == 101);
  CHECK(g.rateLevel() == 1);  // 101 > 100 % of 100 msg/s
  CHECK(g.level() == 1);
}

TEST_CASE("The rate level abates as the window slides", "[throttle][group]") {
  EgressThrottleGroup g(config());
  for (int i = 0; i < 101; ++i) g.onSent(kT0, false);
  REQUIRE(g.level() == 1);
  CHECK(g.evaluate(kT0 + milliseconds(900)) == 1);  // still 101 in the window
  CHECK(g.evaluate(kT0 + seconds(1)) == 0);         // window empty; no abatement time
}

TEST_CASE("Ending more transactions than are pending never goes below zero",
          "[throttle][group]") {
  EgressThrottleGroup g(config());
  g.onTransactionEnded(kT0);
  CHECK(g.ept() == 0);
}

TEST_CASE("Group validation names the failing limit", "[throttle][group]") {
  CHECK(config().validate().isOk());
  ThrottleGroupConfig c = config();
  c.pending.levels.clear();
  CHECK_THAT(c.validate().message(), Catch::StartsWith("pending.levels: "));
  c = config();
  c.rate_window = Duration::zero();
  CHECK_THAT(c.validate().message(), Catch::StartsWith("rate_window: "));
}

}  // namespace npac::dispatch
