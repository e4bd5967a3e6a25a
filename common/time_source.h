// TimeSource: the one place npacd's code reads time (after Envoy's TimeSource): monotonic
// time for intervals, deadlines and rates, and system (wall) time for what is stored or
// shown — stored timestamps, key validity, departure times, retention cutoffs.
//
//   RealTimeSource    the system's clocks (std::chrono::steady_clock and system_clock);
//                     the only code in the tree that reads them. realTimeSource() is the
//                     process's one instance, handed to every component by main().
//   ManualTimeSource  moves only when told (advance, setSystemTime): tests drive timeouts,
//                     heartbeats, throttling and retention in milliseconds, without sleeps.
//
// Components take a `const TimeSource&` (the association core, the listener, the throttle
// groups, the startup check); the stores take a db::Clock made from one (db/clock.h
// clockOf), since they need the wall time only.
//
// Threading: RealTimeSource is stateless and safe from any thread. ManualTimeSource's
// reads and advances are atomic, so a test may advance it on one thread while the
// component under test reads it on another; a test that needs "everything before this
// instant is done" still has to synchronise with that component itself.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace npac::common {

using MonotonicClock = std::chrono::steady_clock;
using MonotonicTime = MonotonicClock::time_point;
using SystemClock = std::chrono::system_clock;
using SystemTime = SystemClock::time_point;

class TimeSource {
 public:
  virtual ~TimeSource() = default;
  // Monotonic time: never goes back; only differences mean anything.
  virtual MonotonicTime now() const = 0;
  // Wall time: civil, may jump (NTP, an operator).
  virtual SystemTime wallTime() const = 0;
  // wallTime() in milliseconds since the Unix epoch, UTC (db::TimeMs, every *_at column).
  std::int64_t wallMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(wallTime().time_since_epoch()).count();
  }
};

class RealTimeSource final : public TimeSource {
 public:
  MonotonicTime now() const override;
  SystemTime wallTime() const override;
};

// The process's real time source.
const TimeSource& realTimeSource();

// Starts at an arbitrary monotonic point (one hour after the clock's epoch, so that
// "now - interval" never underflows) and at `wall_start_ms`; moves only when told.
class ManualTimeSource final : public TimeSource {
 public:
  explicit ManualTimeSource(std::int64_t wall_start_ms = 1'767'225'600'000)  // 2026-01-01
      : steady_ms_(std::chrono::milliseconds(std::chrono::hours(1)).count()), wall_ms_(wall_start_ms) {}
  MonotonicTime now() const override { return MonotonicTime(std::chrono::milliseconds(steady_ms_.load())); }
  SystemTime wallTime() const override { return SystemTime(std::chrono::milliseconds(wall_ms_.load())); }
  // Both clocks move forward by `by`.
  void advance(std::chrono::milliseconds by) {
    steady_ms_ += by.count();
    wall_ms_ += by.count();
  }
  // The wall clock alone jumps (an operator or NTP setting it); monotonic time does not.
  void setWallMs(std::int64_t wall_ms) { wall_ms_ = wall_ms; }

 private:
  std::atomic<std::int64_t> steady_ms_;
  std::atomic<std::int64_t> wall_ms_;
};

}  // namespace npac::common
