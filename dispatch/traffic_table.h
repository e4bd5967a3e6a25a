// The "current load %" column of EAGLE "Weighted GTT Load Sharing", Tables 2-1 and 2-4.
//
// Each entity's share is weight / total × 100, rounded half up, and the last entity that
// carries traffic absorbs the residue so the column sums to exactly 100 ("in order to
// maintain 100% for the RC group, some rounding may occur. This rounding error will
// always be ± 1%"). The tables' figures pin the rule down:
//   Table 2-1: 40, 30, 10, 30 of 110 → 36.4→36, 27.3→27, 9.1→9, and D = 100−72 = 28
//              (rounding D alone would give 27; largest-remainder would give A 37).
//   Table 2-4: 40, 0, 10, 30 of 80  → 50, 0, 12.5→13 (half up), and D = 100−63 = 37.
// With many small members, rounding each can leave the last a residue more than 1 away
// from its exact share (or negative); then (and only then) the column falls back to largest-remainder apportionment, which still
// sums to 100 and keeps every share within 1 of its exact value.
//
// Pure functions, no state.
#pragma once

#include <cstdint>
#include <vector>

namespace npac::dispatch {

// Percent shares for `weights` (entity available weights or pick counts), in the same
// order. All zeros when the weights sum to zero; otherwise the result sums to 100.
std::vector<std::uint32_t> loadPercents(const std::vector<std::uint64_t>& weights);

}  // namespace npac::dispatch
