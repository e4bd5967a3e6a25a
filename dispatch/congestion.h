// Congestion levels for egress throttling (DSR "Egress Throttle Lists"): the building
// blocks shared by the egress throttle group (dispatch/throttle_group.h) and list
// (dispatch/throttle_list.h).
//
// A metric — egress message rate (EMR) or egress pending transactions (EPT) — has a
// maximum and up to three congestion levels, each with an onset and an abatement
// percentage of that maximum (DSR "Egress Throttle Lists": "the same set of Onset and
// Abatement Thresholds for EMR and EPT"). CongestionLevelTracker is the hysteresis state machine:
//   * onset: when the value EXCEEDS onset(L) × maximum for a level L above the current
//     one, the level rises at once to the highest such L (it may jump 0 → 3);
//   * abatement: when the value FALLS BELOW abatement(L) × maximum at the current level
//     L, and at least `abatement_time` has passed since level L was entered, the level
//     drops by one to L − 1 (entering L − 1 restarts the clock, so 3 → 0 takes three
//     abatement times); between abatement(L) and onset(L+1) nothing changes.
// Thresholds must satisfy onset3 > abatement3 > onset2 > abatement2 > onset1 >
// abatement1 (the order the Oracle DSR configuration sets enforce), so onset and
// abatement can never both apply.
//
// EgressRateWindow is the EMR smoother: a sliding window of `window` length cut into
// `buckets` equal buckets; the rate is the count in the buckets overlapping
// (now − window, now] divided by the window. A message therefore counts for between
// window − window/buckets and window after it was sent.
//
// Time is always passed in (TimePoint); nothing here reads a clock.
// Threading: none (one strand).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dispatch/config_error.h"
#include "dispatch/member.h"

namespace npac::dispatch {

inline constexpr int kMaxCongestionLevel = 3;  // DSR "Egress Throttle Groups": levels 1–3

struct CongestionThreshold {
  std::uint32_t onset_percent = 100;     // level entered when value > onset% × maximum
  std::uint32_t abatement_percent = 80;  // level left when value < abatement% × maximum
};

// One limited metric (EMR or EPT).
struct LimitConfig {
  bool enabled = false;
  double maximum = 0;                      // msg/s for EMR, transactions for EPT
  std::vector<CongestionThreshold> levels;  // levels[0] is level 1; 1–3 entries
  Duration abatement_time{};               // minimum time in a level before abating

  // `prefix` names the field in the error ("rate", "pending").
  Status validate(const std::string& prefix) const;
};

class CongestionLevelTracker {
 public:
  explicit CongestionLevelTracker(LimitConfig config) : config_(std::move(config)) {}

  // Re-evaluates the level for `value` against `maximum` (the configured maximum, or a
  // reduced one for a throttle list). Returns the level after the update (0–3; always 0
  // when the limit is disabled).
  int update(double value, double maximum, TimePoint now);

  int level() const { return level_; }
  TimePoint enteredAt() const { return entered_at_; }
  const LimitConfig& config() const { return config_; }

 private:
  LimitConfig config_;
  int level_ = 0;
  TimePoint entered_at_{};
};

class EgressRateWindow {
 public:
  static constexpr std::uint32_t kDefaultBuckets = 10;

  explicit EgressRateWindow(Duration window = std::chrono::seconds(1),
                            std::uint32_t buckets = kDefaultBuckets);

  void add(TimePoint now, std::uint64_t messages = 1);
  std::uint64_t countInWindow(TimePoint now) const;
  double ratePerSecond(TimePoint now) const;  // count in window / window

  Duration window() const { return bucket_width_ * static_cast<Duration::rep>(buckets_.size()); }

 private:
  struct Bucket {
    std::int64_t index = -1;  // absolute bucket number (time / bucket width)
    std::uint64_t count = 0;
  };
  std::int64_t bucketIndex(TimePoint now) const;

  Duration bucket_width_;
  std::vector<Bucket> buckets_;
  std::optional<std::int64_t> latest_index_;  // newest bucket written
};

}  // namespace npac::dispatch
