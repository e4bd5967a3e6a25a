// ProviderThrottle: one provider's egress throttling (DSR "Egress Throttle Groups",
// docs/OPERATIONS.md "Egress throttling" and "Throttle groups") — its own limits from the
// throttle_* tunables (a dispatch::EgressThrottleGroup: at most throttle_max_rate messages
// a second, paced in tenths of a second, and at most throttle_max_pending requests
// unanswered, with onset/abatement levels), and the provisioned throttle group it is a
// member of (throttle_groups.h), shared with the other members and nodes. Answers to the
// provider's own requests are never held; the ProviderCore asks only for the rest.
//
// It remembers whether the latest delivery round stopped for throttling (settle()): that is
// what the provider's queue view and metrics report, and why its messages wait.
//
// Threading: the owning ProviderCore's core thread only; no locks of its own (the group
// locks itself, throttle_groups.h). Time: the `now` each call is given.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "associations/outstanding.h"
#include "common/time_source.h"
#include "dispatch/throttle_group.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/throttle_groups.h"
#include "tunables/registry.h"

namespace npac::npacd {

class ProviderThrottle {
 public:
  // `spid`'s throttle_* tunables in `registry`, which outlives it; none applies until
  // build() is called.
  ProviderThrottle(std::string spid, tunables::TunableRegistry& registry);
  ProviderThrottle(const ProviderThrottle&) = delete;
  ProviderThrottle& operator=(const ProviderThrottle&) = delete;

  // The provider's own limits built from the throttle_* tunables, at first and whenever
  // they change (none while both maxima are 0; a configuration that does not validate is
  // logged and not applied).
  void build();
  // The provider's group as provisioned now (none: not a member), told `pending`, the
  // provider's outstanding requests; a group left (or replaced) is told 0.
  void refreshGroup(std::shared_ptr<ThrottleGroup> group, std::size_t pending);

  // Whether the provider's own limits let one more message (not an answer) leave at `now`
  // with `pending` requests outstanding.
  bool admits(associations::TimePoint now, std::size_t pending);
  // The level (1..3) at which the provider's group holds its messages at `now`; 0: it
  // does not (or there is no group).
  int groupHolds(associations::TimePoint now);
  // A message that is not an answer was placed; `pending` counts it if it is confirmed.
  void onSent(associations::TimePoint now, bool confirmed, std::size_t pending);
  // A confirmed request was answered; `pending` requests remain.
  void onAnswered(associations::TimePoint now, std::size_t pending);
  // `count` requests ended without an answer (put back to the queue).
  void onEnded(associations::TimePoint now, std::size_t count);

  // The latest delivery round: whether it stopped for throttling, and at which level of
  // the group (0: the provider's own limits, or not stopped).
  void settle(bool throttled, int group_level);
  bool throttled() const { return throttled_; }
  // The own limits' level now, at least 1 while the latest round was throttled; none
  // without own limits (GET /metrics).
  std::optional<int> level(associations::TimePoint now);
  // The queue view's throttle fields: the group's name, its level while it holds the
  // provider, else the own limits' level and what they are at.
  void describe(ProviderQueueView& view, const common::TimeSource& clock, std::size_t pending);

 private:
  std::string spid_;
  tunables::TunableRegistry& registry_;
  // The own limits (none while both limits are off).
  std::optional<dispatch::EgressThrottleGroup> throttle_;
  std::int64_t pace_slot_ = -1;      // the 1/10-s slot of the latest push
  std::uint32_t pace_in_slot_ = 0;   // pushes in that slot
  bool throttled_ = false;           // the last delivery stopped for throttling
  // The provisioned throttle group this provider is a member of, and the level it held
  // the last delivery with (0: it did not hold it).
  std::shared_ptr<ThrottleGroup> group_;
  int group_level_ = 0;
};

}  // namespace npac::npacd
