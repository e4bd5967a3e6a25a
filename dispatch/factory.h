// Creates an egress dispatch policy by name from configuration.
//
// Names (docs/DISPATCH.md): "round-robin" (NANC 353), "weighted" (weighted cost groups,
// EAGLE "Weighted GTT Load Sharing"), "lrtm" (least response time using monitors,
// NetScaler "LRTM method"), and "throttle", which wraps any of the others
// (PolicyConfig::inner) in an egress throttle gate (DSR "Egress Throttle Lists").
// An unknown name or an invalid parameter is answered as an error Status
// (dispatch/config_error.h: kBadEgressPolicy, "FIELD: REASON"); nothing here throws.
//
// Threading: a plain function; the policy it returns is driven from one strand.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/config_error.h"
#include "dispatch/lrtm.h"
#include "dispatch/policy.h"
#include "dispatch/round_robin.h"
#include "dispatch/throttled_policy.h"
#include "dispatch/weighted.h"

namespace npac::dispatch {

inline constexpr std::string_view kRoundRobinName = "round-robin";
inline constexpr std::string_view kWeightedName = "weighted";
inline constexpr std::string_view kLrtmName = "lrtm";
inline constexpr std::string_view kThrottleName = "throttle";

struct PolicyConfig {
  std::string name{kRoundRobinName};
  WeightedConfig weighted;  // used by "weighted"
  LrtmConfig lrtm;          // used by "lrtm"
  // "throttle": the policy it gates (any name but "throttle"), the egress throttle
  // group over its members, and optionally the egress throttle list (DSR "Egress Throttle Lists").
  std::string inner{kRoundRobinName};
  ThrottleGroupConfig throttle_group;
  std::optional<ThrottleListConfig> throttle_list;
};

// A policy, or why there is none.
Result<std::unique_ptr<Policy>> makePolicy(const PolicyConfig& config);

// Every name makePolicy accepts (for help texts and error messages).
std::vector<std::string_view> policyNames();

// Checks a weighted config: every threshold within 1–100 %.
Status validate(const WeightedConfig& config);

}  // namespace npac::dispatch
