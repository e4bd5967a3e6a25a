#include "common/timer.h"

#include <algorithm>
#include <optional>

namespace npac::common {

class ManualTimers::ManualTimer final : public Timer {
 public:
  explicit ManualTimer(ManualTimers& timers) : timers_(timers), alive_(timers.alive_) {}
  ~ManualTimer() override { cancel(); }

  void after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    cancel();
    if (*alive_) key_ = timers_.arm(this, delay, std::move(fn));
  }
  void cancel() override {
    if (key_ && *alive_) timers_.drop(*key_);
    key_.reset();
  }
  bool armed() const override { return key_.has_value(); }
  // Its entry left the queue to run.
  void fired() { key_.reset(); }

 private:
  ManualTimers& timers_;
  std::shared_ptr<bool> alive_;  // false once the factory is gone: the timer is inert
  std::optional<Key> key_;
};

ManualTimers::~ManualTimers() { *alive_ = false; }

std::unique_ptr<Timer> ManualTimers::makeTimer() { return std::make_unique<ManualTimer>(*this); }

std::int64_t ManualTimers::nowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time_.now().time_since_epoch()).count();
}

ManualTimers::Key ManualTimers::arm(ManualTimer* timer, std::chrono::milliseconds delay, std::function<void()> fn) {
  const Key key{nowMs() + std::max<std::int64_t>(delay.count(), 0), next_order_++};
  queue_.emplace(key, Entry{timer, std::move(fn)});
  return key;
}

void ManualTimers::drop(const Key& key) { queue_.erase(key); }

void ManualTimers::advance(std::chrono::milliseconds by) {
  const std::int64_t until = nowMs() + by.count();
  while (!queue_.empty() && queue_.begin()->first.deadline_ms <= until) {
    auto first = queue_.begin();
    const std::int64_t deadline = first->first.deadline_ms;
    Entry entry = std::move(first->second);
    queue_.erase(first);
    entry.timer->fired();
    if (deadline > nowMs()) time_.advance(std::chrono::milliseconds(deadline - nowMs()));
    entry.fn();  // may arm, cancel or destroy timers, this one included
  }
  if (until > nowMs()) time_.advance(std::chrono::milliseconds(until - nowMs()));
}

}  // namespace npac::common
