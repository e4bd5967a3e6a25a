// Status in tunables/: the project's one error family (common/status.h).
//
// Every way a `set` can be refused has its own code, in the tunables group of
// NPAC_STATUS_CODES (kUnknownName, kWrongType, kOutOfRange, kWrongScope,
// kUnknownEnumValue, kInvalidProvider, kInconsistent, kStorage, kReentrant, kNoActor),
// so that the admin API can map it to a precise answer ("srr is per provider: give a
// SPID") without parsing text. The message is written for the operator: it names the
// tunable and what would be accepted.
//
// Threading: a Status is a value; copy it freely between threads.
#pragma once

#include <string_view>

#include "common/status.h"

namespace npac::tunables {

using ErrorCode = npac::StatusCode;
using npac::Status;

// "unknown tunable", "out of range"…
inline std::string_view toString(ErrorCode code) { return npac::describe(code); }

}  // namespace npac::tunables
