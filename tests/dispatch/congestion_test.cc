// Congestion levels (the onset/abatement hysteresis of DSR "Egress Throttle Lists") and the
// EMR sliding window.
#include "dispatch/congestion.h"

#include <catch2/catch.hpp>

#include "tests/dispatch/test_epoch.h"

#include <chrono>

namespace npac::dispatch {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using testing::kT0;

// Levels as percent of 100: onset 50/70/90, abatement 40/60/80, 1 s abatement time.
LimitConfig threeLevels() {
  LimitConfig c;
  c.enabled = true;
  c.maximum = 100;
  c.levels = {{50, 40}, {70, 60}, {90, 80}};
  c.abatement_time = seconds(1);
  return c;
}

}  // namespace

TEST_CASE("Onset needs the value to exceed the threshold, not reach it", "[congestion]") {
  CongestionLevelTracker t(threeLevels());
  CHECK(t.update(50, 100, kT0) == 0);
  CHECK(t.update(51, 100, kT0) == 1);
}

TEST_CASE("Onset jumps straight to the highest level exceeded", "[congestion]") {
  CongestionLevelTracker t(threeLevels());
  CHECK(t.update(95, 100, kT0) == 3);
}

TEST_CASE("Each level holds between its abatement and the next onset", "[congestion]") {
  const int onset[] = {50, 70, 90};
  const int abatement[] = {40, 60, 80};
  for (int level = 1; level <= 3; ++level) {
    INFO("level " << level);
    CongestionLevelTracker t(threeLevels());
    TimePoint now = kT0;
    REQUIRE(t.update(onset[level - 1] + 1, 100, now) == level);
    // Anywhere in [abatement, onset of the next level] the level stays, however long.
    now += seconds(60);
    CHECK(t.update(abatement[level - 1], 100, now) == level);
    const int next_onset = level < 3 ? onset[level] : 100;
    CHECK(t.update(next_onset, 100, now) == level);
    // Falling below the abatement threshold steps down exactly one level.
    CHECK(t.update(abatement[level - 1] - 1, 100, now) == level - 1);
  }
}

TEST_CASE("Abatement waits for the minimum abatement time in the level", "[congestion]") {
  CongestionLevelTracker t(threeLevels());
  REQUIRE(t.update(75, 100, kT0) == 2);
  CHECK(t.update(10, 100, kT0 + milliseconds(999)) == 2);
  CHECK(t.update(10, 100, kT0 + seconds(1)) == 1);
  // Entering level 1 restarted the clock: another full second before level 0.
  CHECK(t.update(10, 100, kT0 + milliseconds(1999)) == 1);
  CHECK(t.update(10, 100, kT0 + seconds(2)) == 0);
}

TEST_CASE("Abating from level 3 to 0 takes three abatement times", "[congestion]") {
  CongestionLevelTracker t(threeLevels());
  REQUIRE(t.update(100, 100, kT0) == 3);
  int level = 3;
  TimePoint now = kT0;
  int steps = 0;
  while (level > 0 && steps < 10) {
    now += seconds(1);
    level = t.update(0, 100, now);
    ++steps;
  }
  CHECK(steps == 3);
  CHECK(level == 0);
}

TEST_CASE("Thresholds are percentages of the maximum passed in", "[congestion]") {
  CongestionLevelTracker t(threeLevels());
  CHECK(t.update(30, 50, kT0) == 1);  // 60 % of 50
}

TEST_CASE("A disabled limit never congests", "[congestion]") {
  LimitConfig c = threeLevels();
  c.enabled = false;
  CongestionLevelTracker t(c);
  CHECK(t.update(1e9, 100, kT0) == 0);
}

TEST_CASE("Limit validation enforces onset3 > abatement3 > onset2 > ... > abatement1",
          "[congestion]") {
  CHECK(threeLevels().validate("rate").isOk());
  LimitConfig c = threeLevels();
  c.levels[1] = {70, 50};  // abatement 2 not above onset 1
  REQUIRE_FALSE(c.validate("rate").isOk());
  CHECK_THAT(c.validate("rate").message(), Catch::StartsWith("rate.levels[1].abatement_percent: "));
  c = threeLevels();
  c.levels[0] = {40, 40};
  CHECK_THAT(c.validate("pending").message(), Catch::StartsWith("pending.levels[0].onset_percent: "));
  c = threeLevels();
  c.levels[2] = {101, 80};
  CHECK_THAT(c.validate("rate").message(), Catch::StartsWith("rate.levels[2].onset_percent: "));
  c = threeLevels();
  c.levels.push_back({100, 95});
  CHECK_THAT(c.validate("rate").message(), Catch::StartsWith("rate.levels: "));
  c = threeLevels();
  c.maximum = 0;
  CHECK_THAT(c.validate("rate").message(), Catch::StartsWith("rate.maximum: "));
}

TEST_CASE("The rate window counts a message until its bucket leaves the window",
          "[congestion][emr]") {
  EgressRateWindow w(seconds(1), 10);  // 100 ms buckets
  w.add(kT0 + milliseconds(50), 100);
  CHECK(w.ratePerSecond(kT0 + milliseconds(50)) == 100);
  CHECK(w.ratePerSecond(kT0 + milliseconds(999)) == 100);
  CHECK(w.ratePerSecond(kT0 + seconds(1)) == 0);
}

TEST_CASE("The rate window averages over its length", "[congestion][emr]") {
  EgressRateWindow w(seconds(2), 20);
  for (int i = 0; i < 20; ++i) w.add(kT0 + milliseconds(100 * i), 10);
  CHECK(w.countInWindow(kT0 + milliseconds(1999)) == 200);
  CHECK(w.ratePerSecond(kT0 + milliseconds(1999)) == 100);  // 200 messages / 2 s
  // At 2.5 s the window holds buckets 6–25: the messages of 0–600 ms have left.
  CHECK(w.countInWindow(kT0 + milliseconds(2500)) == 140);
}

TEST_CASE("The rate window reuses a bucket slot after a long silence", "[congestion][emr]") {
  EgressRateWindow w(seconds(1), 10);
  w.add(kT0, 7);
  w.add(kT0 + seconds(10), 3);  // same slot, ten windows later
  CHECK(w.countInWindow(kT0 + seconds(10)) == 3);
}

TEST_CASE("A late timestamp never wipes newer counts", "[congestion][emr]") {
  EgressRateWindow w(seconds(1), 10);
  w.add(kT0 + milliseconds(1050), 5);  // bucket 10, slot 0
  w.add(kT0 + milliseconds(50), 9);    // bucket 0, same slot, a window too old: ignored
  w.add(kT0 + milliseconds(950), 2);   // late but inside the window: counted
  CHECK(w.countInWindow(kT0 + milliseconds(1050)) == 7);
}

}  // namespace npac::dispatch
