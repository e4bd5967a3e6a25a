// kT0, the instant the dispatch tests start from: the epoch of dispatch's Clock. One
// definition for every test file, since a unity build (NPAC_UNITY) compiles several of
// them as one unit, where file-local names must not repeat.
#pragma once

#include "dispatch/member.h"

namespace npac::dispatch::testing {
inline constexpr TimePoint kT0{};
}  // namespace npac::dispatch::testing
