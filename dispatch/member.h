// The egress dispatch member model.
//
// A member is one egress path a policy can pick: for a provider's logical association
// (NANC 353) it is one live association; for the weighted policy it is an entity of a
// relative-cost group (EAGLE "Weighted GTT Load Sharing"); for LRTM it is a server watched
// by monitors (NetScaler "LRTM method"). The model is plain data with no I/O and no locks:
// one egress path is driven from one strand.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace npac::dispatch {

using MemberId = std::uint32_t;
// Time is passed in by the caller (PickContext::now, event arguments): policies never
// read a clock themselves, so tests drive them with exact instants.
using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;
using Duration = std::chrono::nanoseconds;

// EAGLE "Entity Status" (Tables 2-3 to 2-5): Available, Congested, Prohibited.
enum class MemberState : std::uint8_t { kAvailable, kCongested, kProhibited };

std::string_view toString(MemberState state);

inline constexpr std::uint32_t kMinWeight = 1;   // EAGLE: weights 1–99
inline constexpr std::uint32_t kMaxWeight = 99;
inline constexpr std::uint32_t kDefaultWeight = 1;

struct Member {
  MemberId id = 0;
  std::uint32_t weight = kDefaultWeight;  // 1–99 (EAGLE); LRTM's Nw uses it too
  std::uint32_t relative_cost = 0;        // RC group key (EAGLE); lower is preferred
  MemberState state = MemberState::kAvailable;
  std::uint32_t active = 0;               // active (unanswered) transactions
};

}  // namespace npac::dispatch
