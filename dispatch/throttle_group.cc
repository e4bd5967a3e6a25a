// Egress throttle group (DSR "Egress Throttle Groups"). See throttle_group.h.
#include "dispatch/throttle_group.h"

#include <algorithm>

namespace npac::dispatch {

Status ThrottleGroupConfig::validate() const {
  if (Status e = rate.validate("rate"); !e.isOk()) return e;
  if (Status e = pending.validate("pending"); !e.isOk()) return e;
  if (rate_window <= Duration::zero()) {
    return configError("rate_window", "must be positive");
  }
  if (rate_buckets == 0 || Duration(rate_buckets) > rate_window) {
    return configError("rate_buckets", "must be between 1 and the window in nanoseconds");
  }
  return Status::ok();
}

EgressThrottleGroup::EgressThrottleGroup(ThrottleGroupConfig config)
    : config_(std::move(config)),
      window_(config_.rate_window, config_.rate_buckets),
      rate_(config_.rate),
      pending_(config_.pending) {}

void EgressThrottleGroup::onSent(TimePoint now, bool opens_transaction) {
  window_.add(now);
  if (opens_transaction) ++ept_;
  evaluate(now);
}

void EgressThrottleGroup::onTransactionEnded(TimePoint now) {
  if (ept_ > 0) --ept_;
  evaluate(now);
}

int EgressThrottleGroup::evaluate(TimePoint now) {
  rate_.update(emr(now), config_.rate.maximum, now);
  pending_.update(static_cast<double>(ept_), config_.pending.maximum, now);
  return level();
}

int EgressThrottleGroup::level() const { return std::max(rate_.level(), pending_.level()); }

}  // namespace npac::dispatch
