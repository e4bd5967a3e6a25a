// ProviderThrottle: see provider_throttle.h.
#include "npac/npacd/core/provider_throttle.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <spdlog/spdlog.h>

#include "tunables/catalogue.h"

namespace npac::npacd {
namespace as = npac::associations;

ProviderThrottle::ProviderThrottle(std::string spid, tunables::TunableRegistry& registry)
    : spid_(std::move(spid)), registry_(registry) {}

void ProviderThrottle::build() {
  const std::int64_t max_rate = registry_.get(tunables::kThrottleMaxRate, spid_);
  const std::int64_t max_pending = registry_.get(tunables::kThrottleMaxPending, spid_);
  if (max_rate == 0 && max_pending == 0) {
    throttle_.reset();
    throttled_ = false;
    return;
  }
  // Levels in use (tunables/throttle_levels.h): level 1 always, 2 and 3 when both of
  // their percentages are set.
  std::vector<dispatch::CongestionThreshold> levels;
  const std::int64_t onset[] = {registry_.get(tunables::kThrottleOnset1, spid_),
                                registry_.get(tunables::kThrottleOnset2, spid_),
                                registry_.get(tunables::kThrottleOnset3, spid_)};
  const std::int64_t abatement[] = {registry_.get(tunables::kThrottleAbatement1, spid_),
                                    registry_.get(tunables::kThrottleAbatement2, spid_),
                                    registry_.get(tunables::kThrottleAbatement3, spid_)};
  for (std::size_t n = 0; n < 3; ++n) {
    if (onset[n] == 0 || abatement[n] == 0) break;
    levels.push_back({static_cast<std::uint32_t>(onset[n]), static_cast<std::uint32_t>(abatement[n])});
  }
  dispatch::ThrottleGroupConfig config;
  const auto abatement_time = registry_.get(tunables::kThrottleMinAbatementTime, spid_);
  config.rate = {max_rate > 0, static_cast<double>(max_rate), levels, abatement_time};
  config.pending = {max_pending > 0, static_cast<double>(max_pending), levels, abatement_time};
  if (Status valid = config.validate(); !valid.isOk()) {
    spdlog::error("SPID {}: egress throttle refused ({}); messages leave unthrottled", spid_,
                  valid.message());
    throttle_.reset();
    return;
  }
  throttle_.emplace(config);
}

void ProviderThrottle::refreshGroup(std::shared_ptr<ThrottleGroup> group, std::size_t pending) {
  if (group_ && group_ != group) group_->notePending(spid_, 0);  // left it, or it was replaced
  group_ = std::move(group);
  if (!group_) group_level_ = 0;
  if (group_) group_->notePending(spid_, pending);
}

bool ProviderThrottle::admits(as::TimePoint now, std::size_t pending) {
  if (!throttle_) return true;
  if (throttle_->evaluate(now) > 0) return false;  // a level is in force: pushes are held
  const auto& config = throttle_->config();
  if (config.rate.enabled) {
    // Never above the maximum within the rate window, and paced within it.
    if (throttle_->emr(now) + 1.0 > config.rate.maximum) return false;
    const std::int64_t slot = now.time_since_epoch() / kPaceSlot;
    if (slot != pace_slot_) {
      pace_slot_ = slot;
      pace_in_slot_ = 0;
    }
    const auto per_slot = static_cast<std::uint32_t>(std::ceil(config.rate.maximum / 10.0));
    if (pace_in_slot_ >= per_slot) return false;
  }
  if (config.pending.enabled && static_cast<double>(pending) + 1.0 > config.pending.maximum) {
    return false;
  }
  return true;
}

int ProviderThrottle::groupHolds(as::TimePoint now) { return group_ ? group_->mayAdmit(now) : 0; }

void ProviderThrottle::onSent(as::TimePoint now, bool confirmed, std::size_t pending) {
  if (throttle_) {
    throttle_->onSent(now, confirmed);
    ++pace_in_slot_;
  }
  if (group_) group_->onSent(spid_, pending, now);
}

void ProviderThrottle::onAnswered(as::TimePoint now, std::size_t pending) {
  if (throttle_) throttle_->onTransactionEnded(now);
  if (group_) group_->notePending(spid_, pending);
}

void ProviderThrottle::onEnded(as::TimePoint now, std::size_t count) {
  if (!throttle_) return;
  for (std::size_t i = 0; i < count; ++i) throttle_->onTransactionEnded(now);
}

void ProviderThrottle::settle(bool throttled, int group_level) {
  throttled_ = throttled;
  group_level_ = group_level;
}

std::optional<int> ProviderThrottle::level(as::TimePoint now) {
  if (!throttle_) return std::nullopt;
  const int level = throttle_->evaluate(now);  // as describe() reports it
  return throttled_ ? std::max(level, 1) : level;
}

void ProviderThrottle::describe(ProviderQueueView& view, const common::TimeSource& clock, std::size_t pending) {
  if (group_) view.throttle_group_level = throttled_ ? group_level_ : 0;
  if (view.throttle_group_level > 0) {
    view.throttle_level = view.throttle_group_level;
    view.throttle_detail = group_->detail(clock.now());
    return;
  }
  if (!throttle_) return;
  const as::TimePoint now = clock.now();
  const int level = throttle_->evaluate(now);
  view.throttle_level = throttled_ ? std::max(level, 1) : level;
  const auto& config = throttle_->config();
  if (view.throttle_level == 0) return;
  std::string detail;
  if (config.rate.enabled) {
    detail = "rate " + std::to_string(static_cast<long>(throttle_->emr(now))) + "/" +
             std::to_string(static_cast<long>(config.rate.maximum)) + " msg/s";
  }
  if (config.pending.enabled) {
    detail += (detail.empty() ? "" : ", ") + std::string("pending ") + std::to_string(pending) + "/" +
              std::to_string(static_cast<long>(config.pending.maximum));
  }
  view.throttle_detail = detail;
}

}  // namespace npac::npacd
