#include "dispatch/policy.h"

namespace npac::dispatch {

std::string_view toString(MemberState state) {
  switch (state) {
    case MemberState::kAvailable: return "available";
    case MemberState::kCongested: return "congested";
    case MemberState::kProhibited: return "prohibited";
  }
  return "unknown";
}

std::vector<MemberFigures> Policy::figures() const {
  std::vector<MemberFigures> out;
  for (const Member& member : members()) out.push_back(MemberFigures{member, {}, {}, false, {}, {}});
  return out;
}

std::string_view toString(NoneReason reason) {
  switch (reason) {
    case NoneReason::kNoMembers: return "no members";
    case NoneReason::kNoneAvailable: return "no member available";
    case NoneReason::kGroupProhibited: return "group prohibited";
    case NoneReason::kThresholdProhibited: return "threshold-prohibited";
    case NoneReason::kThrottled: return "throttled (held)";
  }
  return "unknown";
}

}  // namespace npac::dispatch
