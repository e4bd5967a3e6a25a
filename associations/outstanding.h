// OutstandingRequests: the NPAC's unanswered requests to one provider, across its whole
// logical association, with invoke ids, congestion, timeouts and loss handling.
//
// - Invoke ids (ROSE InvokeId, X.880) are allocated per provider, not per association
//   (InvokeIdAllocator), so a response is matched wherever it arrives: a request sent on
//   association A and answered on B completes (NANC 353 7.b.iv).
// - Congestion: each association has at most `congestion_window` unanswered NPAC
//   requests. Reaching the window returns a change to Congested; dropping below it, a
//   change to Available — the caller passes these to LogicalAssociation::setMemberState.
// - Timeouts, from the caller's clock: a request unanswered `response_timeout` after it
//   was sent is due. If it has been sent fewer than `retry_attempts` times (the tunable
//   counts every send, so 1 is the historical "1 × 15") it is handed back for a retry
//   (resend(), same invoke id, marked as a retransmission); otherwise its association
//   is to be aborted.
// - Loss: when an association is lost, detach() hands back its in-flight requests,
//   oldest first. They keep their invoke ids (a response may still arrive on a survivor)
//   and are re-sent on survivors with reassign(), marked as retransmissions — or, when no
//   association survives, dropped from the table with drop(): the durable queue still
//   holds them (a message leaves the queue only when acknowledged).
//
// Threading: none; driven from the provider's strand. Time: passed in. No I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "associations/bind_facts.h"
#include "common/status.h"
#include "associations/srr_rules.h"
#include "dispatch/member.h"

namespace npac::associations {

using InvokeId = std::int32_t;    // ROSE InvokeId ::= INTEGER; npacd uses 1..kMaxInvokeId
using MessageId = std::uint64_t;  // the durable queue's message id
using TimePoint = dispatch::TimePoint;
using Duration = dispatch::Duration;

// Four-octet BER INTEGER range, positive only: every peer stack can hold it.
inline constexpr InvokeId kMaxInvokeId = 0x7FFFFFFF;

// The invoke id a message is sent with while it is free: derived from its queue id (1 for
// message 1, wrapping after `max`), so a message carries the same invoke id every time it
// is sent — a retry, a re-send after a loss, and a re-send after npacd restarted — and a
// provider recognises a re-send by an invoke id it has already seen, ROSE (X.880) having
// no retransmission flag (docs/OPERATIONS.md "Outstanding requests"). Only when another
// outstanding operation holds it (a heartbeat, ids wrapped) does the message get another.
InvokeId preferredInvokeId(MessageId message, InvokeId max = kMaxInvokeId);

// Hands out invoke ids: the preferred one when it is free, else in increasing order,
// wrapping after `max`, skipping ids still in use.
class InvokeIdAllocator {
 public:
  explicit InvokeIdAllocator(InvokeId max = kMaxInvokeId) : max_(max) {}
  // None only when every id 1..max is in use.
  std::optional<InvokeId> allocate(std::optional<InvokeId> preferred = std::nullopt);
  void release(InvokeId id) { in_use_.erase(id); }
  bool inUse(InvokeId id) const { return in_use_.count(id) != 0; }
  InvokeId max() const { return max_; }
  std::size_t size() const { return in_use_.size(); }

 private:
  InvokeId max_;
  InvokeId next_ = 1;
  std::unordered_set<InvokeId> in_use_;
};

struct OutstandingLimits {
  std::uint32_t congestion_window = 100;                 // tunable congestion_window
  Duration response_timeout = std::chrono::minutes(15);  // tunable response_timeout
  std::uint32_t retry_attempts = 1;                      // tunable retry_attempts (sends)
};

struct OutstandingRequest {
  InvokeId invoke_id = 0;
  MessageId message_id = 0;
  AssociationFunction function = AssociationFunction::kSoaManagement;
  std::optional<AssociationId> association;  // none while detached (its association lost)
  TimePoint first_sent_at{};
  TimePoint sent_at{};  // the latest send
  std::uint32_t sends = 1;     // every send, for the log
  std::uint32_t attempts = 1;  // sends on the current association (the retry budget)
  bool retransmission = false;  // sent more than once (retry or re-send after a loss)
};

struct MemberStateChange {
  AssociationId association = 0;
  dispatch::MemberState state = dispatch::MemberState::kAvailable;
  bool operator==(const MemberStateChange&) const = default;
};

// A send, resend or reassign refused is a Status of the association group
// (common/status.h): kInvokeIdsExhausted (every invoke id is outstanding),
// kAssociationCongested (the association already holds congestion_window requests),
// kUnknownInvokeId (a resend or reassign of an id that is not outstanding).

class OutstandingRequests {
 public:
  explicit OutstandingRequests(OutstandingLimits limits, InvokeId max_invoke_id = kMaxInvokeId)
      : limits_(limits), ids_(max_invoke_id) {}

  // New limits (tunables changed live); returns the congestion changes they cause.
  std::vector<MemberStateChange> setLimits(OutstandingLimits limits);

  struct Sent {
    InvokeId invoke_id = 0;
    std::optional<MemberStateChange> change;  // the association became Congested
  };
  Result<Sent> send(MessageId message, AssociationFunction function, AssociationId association, TimePoint now);

  struct Completed {
    OutstandingRequest request;               // `association`: where it was last sent
    std::optional<AssociationId> arrived_on;  // where the response came (may differ)
    Duration latency{};                       // from the latest send
    std::optional<MemberStateChange> change;  // its association became Available
  };
  // The response for `invoke_id` arrived (on any association). None: not outstanding —
  // a late duplicate after a retransmission, or an id we never used.
  std::optional<Completed> complete(InvokeId invoke_id, AssociationId arrived_on,
                                    TimePoint now);

  struct Expiry {
    std::vector<OutstandingRequest> retry;  // resend() each, oldest first
    std::vector<AssociationId> abort;       // abort these associations (each once)
  };
  // Requests due at `now`. Each due request is reported once; a retry is due again only
  // after its resend().
  Expiry expired(TimePoint now);
  // When the earliest attached request falls due (for the caller's timer); none if idle.
  std::optional<TimePoint> nextDeadline() const;

  // Send a request again (a retry, possibly on another association): same invoke id,
  // one more send, marked as a retransmission.
  Result<std::vector<MemberStateChange>> resend(InvokeId invoke_id, AssociationId association, TimePoint now);
  // The association is gone: its requests, oldest first, now detached.
  std::vector<OutstandingRequest> detach(AssociationId association);
  // Re-send a detached request on a survivor, marked as a retransmission, with a fresh
  // retry budget on that association.
  Result<std::vector<MemberStateChange>> reassign(InvokeId invoke_id, AssociationId association, TimePoint now);
  // Forget a request (no survivor: it waits in the durable queue for the next bind; or
  // the caller gave up on it). If it was still attached, `change` may report its
  // association becoming Available; latency is not meaningful.
  std::optional<Completed> drop(InvokeId invoke_id);

  // Invoke ids for PDUs that are not outstanding requests — unconfirmed operations (held
  // until written) and heartbeats (held until answered) — from the same allocator, so no
  // two PDUs of the provider's logical association ever share an id while either is in use.
  // For an operation that is not a request (a heartbeat, an unconfirmed PDU until it is
  // written); with `message`, its preferred invoke id when free.
  std::optional<InvokeId> reserveInvokeId(std::optional<MessageId> message = std::nullopt) {
    return ids_.allocate(message ? std::optional<InvokeId>(preferredInvokeId(*message, ids_.max())) : std::nullopt);
  }
  void releaseInvokeId(InvokeId id) { ids_.release(id); }

  std::uint32_t outstanding(AssociationId association) const;
  const OutstandingLimits& limits() const { return limits_; }
  std::size_t size() const { return requests_.size(); }
  std::optional<OutstandingRequest> find(InvokeId invoke_id) const;
  // Requests with no association (detached and not yet reassigned or dropped).
  std::vector<OutstandingRequest> detached() const;

 private:
  struct Entry {
    OutstandingRequest request;
    bool reported = false;  // expired() has handed it out; waiting for resend/abort
  };
  struct Load {
    std::uint32_t count = 0;
    bool congested = false;
  };

  std::optional<MemberStateChange> attach(Entry& entry, AssociationId association);
  std::optional<MemberStateChange> unattach(Entry& entry);
  std::optional<MemberStateChange> settle(AssociationId association, Load& load);
  Result<std::vector<MemberStateChange>> moveTo(InvokeId invoke_id, AssociationId association, TimePoint now,
                                                bool is_retry);

  OutstandingLimits limits_;
  InvokeIdAllocator ids_;
  std::unordered_map<InvokeId, Entry> requests_;
  std::map<AssociationId, Load> loads_;
};

}  // namespace npac::associations
