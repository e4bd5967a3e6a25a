// Cross-tunable rule for the egress throttle's congestion levels (DSR "Egress Throttle Lists").
//
// Each level n = 1..3 has an onset percentage (the level starts when the rate or pending
// count exceeds it) and an abatement percentage (the level ends when it falls below). A
// level is in use when both are non-zero; level 1 is always in use. For the levels in use:
//   abatement_n < onset_n                        (hysteresis, else the level flaps)
//   onset_n > onset_(n-1), abatement_n > abatement_(n-1)   (levels climb in order)
//   level n in use only if level n-1 is in use
// A level with only one of its two values set is allowed and simply unused, so that an
// operator can enable level 2 one tunable at a time.
//
// Threading: pure function of an immutable snapshot.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tunables/catalogue.h"
#include "tunables/snapshot.h"
#include "tunables/status.h"

namespace npac::tunables {

bool isThrottleLevel(TunableId id);

// kInconsistent with the broken rule named, else ok. `spid` "" checks the global values.
Status checkThrottleLevels(const TunableSnapshot& snapshot, std::string_view spid);

// The same rule over plain values (a provisioned throttle group's levels, db/
// throttle_group_store.h): the fields are named `prefix` + "onset_1"..., and `suffix`
// ends each message (" (provider 0001)").
Status checkLevelPercentages(const std::array<std::int64_t, 3>& onset, const std::array<std::int64_t, 3>& abatement,
                             std::string_view prefix, std::string_view suffix);

}  // namespace npac::tunables
