// The JSON of the provisioned egress throttle groups (docs/API.md "Throttle groups";
// DSR "Egress Throttle Groups" / "Egress Throttle Lists"):
//
//   {"name":"bureau-a","members":["0001","0002","0003"],"max_rate":10000,"max_pending":12000,
//    "onset_1":100,"abatement_1":80,"onset_2":0,"abatement_2":0,"onset_3":0,"abatement_3":0,
//    "min_abatement_time":"2s","peer_loss_reduction_percent":50}
//
// POST takes a whole group (name and members required; the rest default as shown), PUT
// the fields to change (the rest keep their values; the name is the path's). Limits:
// name 1..64 of A-Z a-z 0-9 . _ -; members 1..kMaxThrottleGroupMembers distinct SPIDs;
// max_rate and max_pending 0..kMaxThrottleGroupLimit, not both 0 (0 = that metric is not
// limited); onset/abatement percentages 0..100 by the rules of the throttle_* tunables
// (tunables/throttle_levels.h; level 1 always in use); min_abatement_time 0..1min;
// peer_loss_reduction_percent 0..100. Any other field is refused (a typo never passes
// as a default).
//
// Threading: pure functions.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "db/throttle_group_store.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/core/throttle_groups.h"

namespace npac::npacd {

inline constexpr std::size_t kMaxThrottleGroupMembers = 1000;
inline constexpr std::int64_t kMaxThrottleGroupLimit = 1'000'000;

// The group a body describes: a new one (`current` null) or `current` with the body's
// fields applied. Errors: invalid_throttle_group naming the field and why.
Result<db::ThrottleGroupDefinition> parseThrottleGroup(const nlohmann::json& body,
                                                       const db::ThrottleGroupDefinition* current);

nlohmann::json toJson(const db::ThrottleGroupDefinition& group);
// What the node knows live: level, effective maxima, aggregate, this node's share, each
// node's last report with its age, the unreachable peers.
nlohmann::json toJson(const ThrottleGroup::View& view);

}  // namespace npac::npacd
