// The egress dispatch policy interface.
//
// A Policy picks exactly one member per PDU (NANC 353: "one unique PDU will be sent over
// one association only") or answers "none" with a reason. It owns its own member table,
// changed only through the event calls below (HAProxy lb_* style: state changes go
// through the table, the pick itself is a direct fast call). Context may lack
// information (no key, no priority) and every policy must cope.
//
// Threading: none. A Policy is driven from one strand; it holds no locks and does no I/O.
// Time: never read from a clock inside a policy; callers pass `now`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/member.h"

namespace npac::dispatch {

// Why a pick returned no member.
enum class NoneReason : std::uint8_t {
  kNoMembers,             // the policy has no members at all
  kNoneAvailable,         // members exist, none Available (round robin, LRTM)
  kGroupProhibited,       // EAGLE Table 2-2: every RC group Prohibited
  kThresholdProhibited,   // EAGLE Table 2-2: best group below its in-service threshold
  kThrottled,             // DSR "Egress Throttle Lists": held by a group/list
};

std::string_view toString(NoneReason reason);

// What the caller knows about the PDU being sent.
struct PickContext {
  TimePoint now{};
  // EAGLE "Weighted GTT Load Sharing", "MSU Key": sequenced / transaction-based traffic
  // carries a key that must map to the same member until a status change in its group.
  std::optional<std::uint64_t> key;
  // EAGLE "MSU Routing under Congestion": sequenced traffic may stay on a Congested
  // member; other traffic treats Congested as unavailable.
  bool sequenced = false;
  // Message priority 0–3, 3 highest (DSR "Egress Throttle Groups").
  std::uint8_t priority = 0;
  // A member not to pick on a retry (HAProxy's "avoid"); honoured when another exists.
  std::optional<MemberId> avoid;
};

struct PickResult {
  std::optional<MemberId> member;
  NoneReason reason = NoneReason::kNoMembers;  // meaningful only when !member

  static PickResult of(MemberId id) { return PickResult{id, NoneReason::kNoMembers}; }
  static PickResult none(NoneReason why) { return PickResult{std::nullopt, why}; }
  bool ok() const { return member.has_value(); }
};

// Where a member's response time comes from (the monitors of NetScaler "LRTM method").
enum class MonitorKind : std::uint8_t {
  kRequestResponse,  // the association's own request→response round trip
  kTcpConnect,       // a TCP connect probe
  kHeartbeat,        // an application heartbeat round trip
};

// One member's live figures as its policy computes them, for operators (GET
// /v1/associations, GET /metrics, the console) — never for the hot path. Every policy
// gives the member itself; the fields a policy does not compute stay empty.
struct MemberFigures {
  Member member;
  // Weighted (EAGLE "Weighted GTT Load Sharing", Table 2-4 "Current Load %"): the share of
  // its relative-cost group's traffic the member takes now, 0 outside the group in use.
  std::optional<std::uint32_t> load_percent;
  // LRTM (NetScaler "LRTM method"): the response time N uses (the monitors' mean, or the
  // unmeasured default while `measured` is false), N and Nw as the method's tables write
  // them (response time in seconds).
  std::optional<Duration> response_time;
  bool measured = false;
  std::optional<double> n;
  std::optional<double> nw;
};

class Policy {
 public:
  virtual ~Policy() = default;
  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;

  virtual std::string_view name() const = 0;

  // The hot path: pick one member for one PDU.
  virtual PickResult pick(const PickContext& context) = 0;

  // Member table changes.
  virtual void addMember(const Member& member) = 0;
  virtual void removeMember(MemberId id) = 0;
  virtual void setState(MemberId id, MemberState state) = 0;
  virtual void setWeight(MemberId id, std::uint32_t weight) = 0;

  // Traffic events. Default: ignore (round robin does not care about load).
  virtual void onSent(MemberId /*id*/, TimePoint /*now*/) {}
  virtual void onCompleted(MemberId /*id*/, Duration /*latency*/, TimePoint /*now*/) {}
  virtual void onFailed(MemberId /*id*/, TimePoint /*now*/) {}
  virtual void onMonitorSample(MemberId /*id*/, MonitorKind /*kind*/, Duration /*rtt*/,
                               TimePoint /*now*/) {}

  // A snapshot of the member table, in the policy's own order (for npacctl plan and the
  // admin API; not for the hot path).
  virtual std::vector<Member> members() const = 0;

  // members() with what this policy computes about each (MemberFigures), same order.
  // Default: the members alone.
  virtual std::vector<MemberFigures> figures() const;

 protected:
  Policy() = default;
};

}  // namespace npac::dispatch
