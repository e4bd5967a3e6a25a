// Congestion levels and the EMR window (DSR "Egress Throttle Lists"). See congestion.h for
// the rules.
#include "dispatch/congestion.h"

#include <algorithm>

namespace npac::dispatch {
namespace {

std::string levelField(const std::string& prefix, std::size_t i, const char* what) {
  return prefix + ".levels[" + std::to_string(i) + "]." + what;
}

}  // namespace

Status LimitConfig::validate(const std::string& prefix) const {
  if (!enabled) return Status::ok();
  if (!(maximum > 0)) return configError(prefix + ".maximum", "must be positive");
  if (levels.empty() || levels.size() > static_cast<std::size_t>(kMaxCongestionLevel)) {
    return configError(prefix + ".levels", "needs 1 to 3 congestion levels, got " + std::to_string(levels.size()));
  }
  if (abatement_time < Duration::zero()) {
    return configError(prefix + ".abatement_time", "must not be negative");
  }
  // onset3 > abatement3 > onset2 > abatement2 > onset1 > abatement1 > 0, onset ≤ 100.
  std::uint32_t floor = 0;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const CongestionThreshold& t = levels[i];
    if (t.abatement_percent <= floor) {
      return configError(levelField(prefix, i, "abatement_percent"),
                         "must be above " + std::to_string(floor) +
                             (i == 0 ? "" : " (the onset of the level below)"));
    }
    if (t.onset_percent <= t.abatement_percent) {
      return configError(levelField(prefix, i, "onset_percent"),
                         "must be above abatement_percent (" +
                             std::to_string(t.abatement_percent) + ")");
    }
    if (t.onset_percent > 100) {
      return configError(levelField(prefix, i, "onset_percent"), "must be at most 100");
    }
    floor = t.onset_percent;
  }
  return Status::ok();
}

int CongestionLevelTracker::update(double value, double maximum, TimePoint now) {
  if (!config_.enabled || config_.levels.empty()) return level_ = 0;
  const int levels = static_cast<int>(std::min<std::size_t>(config_.levels.size(),
                                                            kMaxCongestionLevel));
  // Percentages are compared as value × 100 against percent × maximum, so integral
  // counts and maxima compare exactly (no division).
  const double scaled = value * 100.0;
  int onset_level = 0;
  for (int l = levels; l > level_; --l) {
    if (scaled > config_.levels[l - 1].onset_percent * maximum) {
      onset_level = l;
      break;
    }
  }
  if (onset_level > level_) {
    level_ = onset_level;
    entered_at_ = now;
    return level_;
  }
  if (level_ > 0 && scaled < config_.levels[level_ - 1].abatement_percent * maximum &&
      now - entered_at_ >= config_.abatement_time) {
    --level_;
    entered_at_ = now;
  }
  return level_;
}

EgressRateWindow::EgressRateWindow(Duration window, std::uint32_t buckets) {
  if (buckets == 0) buckets = kDefaultBuckets;
  if (window < Duration(buckets)) window = Duration(buckets);  // ≥ 1 ns per bucket
  bucket_width_ = window / buckets;
  buckets_.resize(buckets);
}

std::int64_t EgressRateWindow::bucketIndex(TimePoint now) const {
  const auto t = now.time_since_epoch().count();
  const auto w = bucket_width_.count();
  return t >= 0 ? t / w : -((-t + w - 1) / w);  // floor division
}

void EgressRateWindow::add(TimePoint now, std::uint64_t messages) {
  const std::int64_t index = bucketIndex(now);
  const auto n = static_cast<std::int64_t>(buckets_.size());
  // A late timestamp (an event stamped before the newest one seen) still counts if it
  // falls inside the window; older than the window it no longer matters. It must never
  // recycle a slot that holds newer counts.
  if (latest_index_ && index <= *latest_index_ - n) return;
  if (!latest_index_ || index > *latest_index_) latest_index_ = index;
  Bucket& b = buckets_[static_cast<std::size_t>(((index % n) + n) % n)];
  if (b.index != index) {
    b.index = index;
    b.count = 0;
  }
  b.count += messages;
}

std::uint64_t EgressRateWindow::countInWindow(TimePoint now) const {
  const std::int64_t current = bucketIndex(now);
  const auto n = static_cast<std::int64_t>(buckets_.size());
  std::uint64_t sum = 0;
  for (const Bucket& b : buckets_) {
    if (b.index > current - n && b.index <= current) sum += b.count;
  }
  return sum;
}

double EgressRateWindow::ratePerSecond(TimePoint now) const {
  const double seconds = std::chrono::duration<double>(window()).count();
  return static_cast<double>(countInWindow(now)) / seconds;
}

}  // namespace npac::dispatch
