// ThrottledPolicy — an egress throttle (DSR "Egress Throttle Groups" and "Egress Throttle
// Lists") in front of any policy: the `throttle` wrapper the factory puts around
// round-robin, weighted or lrtm.
//
// It owns an EgressThrottleGroup over the wrapped policy's members and, optionally, the
// EgressThrottleList this node's group belongs to. The congestion level is the higher of
// the group's and the list's (0–3). Oracle's DSR discards low-priority requests
// under congestion; npacd must not lose NPAC messages, so at level L a message with
// priority below L (priority 0–3, 3 highest) is HELD, never discarded, and released when
// the level has abated.
//
// Two ways to use it:
//   1. As a plain Policy (pick / onSent / onCompleted / onFailed): pick() answers
//      none(kThrottled) for a message that would be held, and the caller keeps the
//      message; nothing is queued here.
//   2. As the admission gate (the association manager's path):
//        submit(id, context)  → kSend to member X, or kHeld (queued here), or kNoMember
//                               (not throttled, but the wrapped policy has no member);
//        release(now, max)    → the held messages now releasable, each with its member;
//        onCompleted/onFailed → the transaction ended (EPT and the policy's active count).
//      A kSend or released decision is a commitment: the gate itself records the send
//      (EMR, EPT for a transaction, and the wrapped policy's onSent), so the caller does
//      NOT call onSent for it — this keeps a released batch spread by LRTM and lets the
//      level rise mid-batch and stop the release.
//
// Order (docs/dispatch/throttle.md):
//   * held messages wait in one FIFO per priority;
//   * release serves the highest priority first, FIFO within a priority, as long as the
//     priority is at or above the current level (re-evaluated after every release), and
//     stops at the first message the wrapped policy cannot place (it stays held first);
//   * submit never lets a message overtake a held message of the same or a higher
//     priority: such a message is held behind them even if the level is 0. So within a
//     priority class messages leave in submission order, and a message never leaves
//     before an earlier-submitted message of equal or higher priority.
// The held queues are unbounded (nothing is ever dropped); heldCount() is the caller's
// back-pressure signal.
//
// Threading: none (one strand). Time is passed in (PickContext::now, `now`).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dispatch/policy.h"
#include "dispatch/throttle_group.h"
#include "dispatch/throttle_list.h"

namespace npac::dispatch {

using MessageId = std::uint64_t;  // opaque to the throttle; the caller's handle
inline constexpr std::uint8_t kMaxMessagePriority = 3;  // DSR "Egress Throttle Groups": 0–3

struct Submission {
  MessageId id = 0;
  PickContext context;            // priority, key, avoid, now
  bool opens_transaction = true;  // a request awaiting a response (counts in EPT)
};

struct Admission {
  enum class Kind : std::uint8_t {
    kSend,             // send now to `member` (already recorded as sent)
    kHeld,             // queued here; comes out of a later release()
    kNoMember,         // not throttled, but the wrapped policy answered none(`reason`)
    kInvalidPriority,  // priority above 3; nothing done
  };
  Kind kind = Kind::kHeld;
  MessageId id = 0;
  std::optional<MemberId> member;
  NoneReason reason = NoneReason::kThrottled;
  int level = 0;  // congestion level the decision was taken at
};

struct Released {
  MessageId id = 0;
  MemberId member = 0;
  std::uint8_t priority = 0;
};

struct ReleaseBatch {
  std::vector<Released> released;  // in release order; each already recorded as sent
  // Set when release stopped because the wrapped policy had no member for the next
  // held message (it stays at the head of its queue).
  std::optional<NoneReason> blocked;
  int level = 0;  // congestion level after the batch
};

class ThrottledPolicy final : public Policy {
 public:
  // `inner` must not be null (the factory builds it first). Configs should have passed
  // validate(); an invalid one is used as given.
  ThrottledPolicy(std::unique_ptr<Policy> inner, ThrottleGroupConfig group,
                  std::optional<ThrottleListConfig> list = std::nullopt);

  // "throttle(<inner name>)".
  std::string_view name() const override { return name_; }

  // Plain-policy path (see header comment, use 1). Priorities above 3 count as 3.
  PickResult pick(const PickContext& context) override;
  void addMember(const Member& member) override { inner_->addMember(member); }
  void removeMember(MemberId id) override { inner_->removeMember(id); }
  void setState(MemberId id, MemberState state) override { inner_->setState(id, state); }
  void setWeight(MemberId id, std::uint32_t weight) override { inner_->setWeight(id, weight); }
  // A request sent (EMR + EPT) — for the plain-policy path only.
  void onSent(MemberId id, TimePoint now) override;
  void onCompleted(MemberId id, Duration latency, TimePoint now) override;
  void onFailed(MemberId id, TimePoint now) override;
  void onMonitorSample(MemberId id, MonitorKind kind, Duration rtt, TimePoint now) override {
    inner_->onMonitorSample(id, kind, rtt, now);
  }
  std::vector<Member> members() const override { return inner_->members(); }
  std::vector<MemberFigures> figures() const override { return inner_->figures(); }

  // A PDU that opens no transaction (a response) sent on the plain-policy path: EMR only.
  void onMessageSent(MemberId id, TimePoint now);

  // Gate path (use 2).
  Admission submit(const Submission& submission);
  ReleaseBatch release(TimePoint now,
                       std::size_t max = std::numeric_limits<std::size_t>::max());

  // Throttle list feed (no-ops answering kUnknownPeer when there is no list).
  PeerUpdate reportPeerCounts(PeerId peer, double emr, std::uint64_t ept, TimePoint now);
  PeerUpdate peerLost(PeerId peer, TimePoint now);
  PeerUpdate peerRestored(PeerId peer, TimePoint now);

  // Re-evaluates group (and list) at `now`; the effective congestion level.
  int congestionLevel(TimePoint now);
  std::size_t heldCount() const;
  std::size_t heldCount(std::uint8_t priority) const;

  Policy& inner() { return *inner_; }
  const EgressThrottleGroup& group() const { return group_; }
  const EgressThrottleList* list() const { return list_ ? &*list_ : nullptr; }

 private:
  struct Held {
    MessageId id;
    PickContext context;
    bool opens_transaction;
  };
  bool heldAtOrAbove(std::uint8_t priority) const;
  void commit(MemberId member, bool opens_transaction, TimePoint now);

  std::unique_ptr<Policy> inner_;
  std::string name_;
  EgressThrottleGroup group_;
  std::optional<EgressThrottleList> list_;
  std::array<std::deque<Held>, kMaxMessagePriority + 1> held_;
};

}  // namespace npac::dispatch
