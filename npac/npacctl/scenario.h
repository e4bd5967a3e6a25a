// An `npacctl plan` scenario: a dispatch policy, its members and a list of steps, read
// from JSON (format: docs/DISPATCH.md "Scenario files"). Parsing never throws: a bad file
// gives a kBadDocument Status (common/status.h) whose message names the JSON path and what
// is wrong with it ("steps[3].member: unknown member \"Z\""). A field a step
// needs is never defaulted, and a field the chosen policy would ignore is refused.
//
// Threading: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "dispatch/factory.h"
#include "dispatch/monitor.h"

namespace npac::npacctl {

// The most picks one scenario may ask for, over all its pick steps together. The plan
// streams its output, so memory does not grow with the picks themselves, but time does,
// and a throttle holds every message it cannot send yet (dispatch/throttled_policy.h:
// the held queues are unbounded); this keeps one run within seconds and megabytes.
inline constexpr std::uint64_t kMaxPicksPerScenario = 2'000'000;

struct ScenarioMember {
  std::string name;
  dispatch::Member member;
  std::optional<dispatch::MonitorMask> monitors;  // LRTM: monitors bound to this member
  std::vector<std::pair<dispatch::MonitorKind, dispatch::Duration>> samples;  // initial
};

enum class StepOp : std::uint8_t {
  kPick,       // count picks (each followed by onSent unless send is false)
  kState,      // member state change
  kWeight,     // member weight change
  kComplete,   // a transaction on member completed with latency
  kFail,       // a transaction on member failed
  kSample,     // a monitor sample for member
  kAdvance,    // the scenario clock moves on
  kAdd,        // a member joins
  kRemove,     // a member leaves
  kShow,       // print the tables only
  kPeerCounts,    // egress throttle list: a peer reports its counts
  kPeerLost,      // egress throttle list: connection to a peer lost
  kPeerRestored,  // egress throttle list: connection to a peer back
};

std::string_view toString(StepOp op);

struct Step {
  StepOp op = StepOp::kShow;
  std::string note;  // free text carried to the output ("comment")
  // kPick
  std::uint32_t count = 1;
  std::optional<std::uint64_t> key;
  bool sequenced = false;
  std::uint8_t priority = 0;
  std::optional<dispatch::MemberId> avoid;
  bool send = true;
  // kState, kWeight, kComplete, kFail, kSample, kRemove
  dispatch::MemberId member = 0;
  dispatch::MemberState state = dispatch::MemberState::kAvailable;
  std::uint32_t weight = dispatch::kDefaultWeight;
  dispatch::Duration latency{};  // kComplete; kSample rtt; kAdvance amount
  dispatch::MonitorKind monitor = dispatch::MonitorKind::kRequestResponse;
  // kAdd
  ScenarioMember added;
  // kPeerCounts / kPeerLost / kPeerRestored
  std::uint32_t peer = 0;
  double peer_rate = 0;
  std::uint64_t peer_pending = 0;
};

struct Scenario {
  std::string title;
  std::string source;  // which source document table it reproduces
  dispatch::PolicyConfig policy;  // includes the "throttle" block's group and list
  std::vector<ScenarioMember> members;
  std::vector<Step> steps;
  std::map<dispatch::MemberId, std::string> names;  // id → display name
};

Result<Scenario> parseScenario(std::string_view text);

std::optional<dispatch::MemberState> parseMemberState(std::string_view text);
std::optional<dispatch::MonitorKind> parseMonitorKind(std::string_view text);

}  // namespace npac::npacctl
