// Timer: work run once, later, on the event loop that made it — the timers half of the
// one time source (after Envoy's Dispatcher::createTimer and its SimulatedTimeSystem).
//
//   Timer          after(delay, fn) runs fn once `delay` has passed, unless cancel(),
//                  another after() or the timer's destruction comes first (they drop it).
//   TimerFactory   makes timers on one event loop. npacd's is AsioTimers
//                  (npac/npacd/asio_timers.h, an io_context's steady_timer: the only one in
//                  the server); tests use ManualTimers below.
//   ManualTimers   timers on a ManualTimeSource: advance() moves the source and runs, in
//                  deadline order and each at its deadline, every timer due on the way —
//                  so a test drives a release timeout, a long poll's expiry or the drain in
//                  milliseconds, with no sleep.
//
// Threading: a Timer is made, armed, cancelled and destroyed on its event loop's thread,
// and fn runs there. ManualTimers runs fn on the thread that calls advance(): a test that
// also runs the component's io_context calls both from the one test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>

#include "common/time_source.h"

namespace npac::common {

class Timer {
 public:
  virtual ~Timer() = default;
  virtual void after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;
  virtual void cancel() = 0;
  // Between after() and the run of its fn (or cancel()).
  virtual bool armed() const = 0;
};

class TimerFactory {
 public:
  virtual ~TimerFactory() = default;
  virtual std::unique_ptr<Timer> makeTimer() = 0;
};

class ManualTimers final : public TimerFactory {
 public:
  explicit ManualTimers(ManualTimeSource& time) : time_(time) {}
  ~ManualTimers() override;
  ManualTimers(const ManualTimers&) = delete;
  ManualTimers& operator=(const ManualTimers&) = delete;

  std::unique_ptr<Timer> makeTimer() override;
  // Moves the time source forward by `by`, running every timer due on the way, in
  // deadline order (ties in the order they were armed), the source standing at each
  // one's deadline while it runs. A timer armed by a running fn runs too if it falls
  // due within `by`.
  void advance(std::chrono::milliseconds by);
  // Timers armed and not yet run.
  std::size_t pending() const { return queue_.size(); }

 private:
  class ManualTimer;
  struct Key {
    std::int64_t deadline_ms;
    std::uint64_t order;
    bool operator<(const Key& other) const {
      return deadline_ms != other.deadline_ms ? deadline_ms < other.deadline_ms : order < other.order;
    }
  };
  struct Entry {
    ManualTimer* timer;
    std::function<void()> fn;
  };
  std::int64_t nowMs() const;
  Key arm(ManualTimer* timer, std::chrono::milliseconds delay, std::function<void()> fn);
  void drop(const Key& key);

  ManualTimeSource& time_;
  std::map<Key, Entry> queue_;
  std::uint64_t next_order_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace npac::common
