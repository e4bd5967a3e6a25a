// CoreClock: the time the association core reads — one object injected into the manager,
// every ProviderCore and the Listener, so timeouts, heartbeats, bind timeouts, throttling
// and the retention purge run on a manual clock in tests (milliseconds, no sleeps) and on
// the system clocks in npacd.
//
//   now()     steady time (associations::TimePoint): intervals, timeouts, rates.
//   wallMs()  wall-clock milliseconds since the Unix epoch: stored timestamps
//             (created_at, sent_at, the association log), retention cutoffs.
//
// The core's periodic tick (AssociationManager::tick) is what turns time into actions; a
// test with a ManualCoreClock advances the clock and calls tick() itself.
//
// Threading: SystemCoreClock is stateless and safe from any thread. ManualCoreClock is
// read and advanced on the thread that drives the core (tests).
#pragma once

#include <chrono>

#include "associations/outstanding.h"
#include "db/clock.h"

namespace npac::npacd {

class CoreClock {
 public:
  virtual ~CoreClock() = default;
  virtual associations::TimePoint now() const = 0;
  virtual db::TimeMs wallMs() const = 0;
};

class SystemCoreClock final : public CoreClock {
 public:
  associations::TimePoint now() const override { return associations::TimePoint::clock::now(); }
  db::TimeMs wallMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// Starts at an arbitrary steady point and at `wall_start_ms`; moves only when told.
class ManualCoreClock final : public CoreClock {
 public:
  explicit ManualCoreClock(db::TimeMs wall_start_ms = 1'767'225'600'000)  // 2026-01-01
      : steady_(std::chrono::hours(1)), wall_ms_(wall_start_ms) {}
  associations::TimePoint now() const override { return steady_; }
  db::TimeMs wallMs() const override { return wall_ms_; }
  void advance(std::chrono::milliseconds by) {
    steady_ += by;
    wall_ms_ += by.count();
  }

 private:
  associations::TimePoint steady_;
  db::TimeMs wall_ms_;
};

}  // namespace npac::npacd
