// Egress throttle group (DSR "Egress Throttle Groups"): the counts and congestion
// levels for the traffic leaving through one set of members.
//
// It tracks two metrics independently (DSR "Egress Throttle Lists": "Both can track Egress
// Message Rate and Pending Transactions independently"), each optional:
//   * EMR, egress message rate: every PDU sent, smoothed by a sliding window
//     (EgressRateWindow, default 1 s in 10 buckets);
//   * EPT, egress pending transactions: requests sent and not yet answered or failed.
// Each metric has its own CongestionLevelTracker (onset/abatement hysteresis, minimum
// abatement time; dispatch/congestion.h). The group's congestion level is the higher of
// the two. What the level does to traffic (messages with priority below it are held) is
// ThrottledPolicy's business (dispatch/throttled_policy.h); this class only counts.
//
// Levels are re-evaluated by evaluate(now) — ThrottledPolicy calls it on every submit,
// release and traffic event — so the minimum abatement time is measured between
// evaluations; a caller with no traffic must call release(now) on a timer for held
// messages to drain.
//
// Threading: none (one strand). Time is passed in.
#pragma once

#include <cstdint>
#include <optional>

#include "dispatch/config_error.h"
#include "dispatch/congestion.h"

namespace npac::dispatch {

struct ThrottleGroupConfig {
  LimitConfig rate;     // EMR, maximum in messages per second
  LimitConfig pending;  // EPT, maximum in transactions
  Duration rate_window = std::chrono::seconds(1);  // EMR smoothing window ("convergence")
  std::uint32_t rate_buckets = EgressRateWindow::kDefaultBuckets;

  Status validate() const;
};

class EgressThrottleGroup {
 public:
  explicit EgressThrottleGroup(ThrottleGroupConfig config);

  // One PDU left through the group; `opens_transaction` when it is a request whose
  // response is awaited (it then counts in EPT until onTransactionEnded).
  void onSent(TimePoint now, bool opens_transaction = true);
  // A pending transaction was answered, failed or timed out (never below zero).
  void onTransactionEnded(TimePoint now);

  // Re-evaluates both trackers at `now`; returns the group level (0–3).
  int evaluate(TimePoint now);
  int level() const;
  int rateLevel() const { return rate_.level(); }
  int pendingLevel() const { return pending_.level(); }

  double emr(TimePoint now) const { return window_.ratePerSecond(now); }
  std::uint64_t ept() const { return ept_; }
  const ThrottleGroupConfig& config() const { return config_; }

 private:
  ThrottleGroupConfig config_;
  EgressRateWindow window_;
  std::uint64_t ept_ = 0;
  CongestionLevelTracker rate_;
  CongestionLevelTracker pending_;
};

}  // namespace npac::dispatch
