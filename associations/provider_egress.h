// ProviderEgress: one provider's outbound side — which association each message leaves
// on, what a response, a timeout or a lost association does — as pure decisions.
//
// It joins the three pieces a provider's strand drives: the LogicalAssociation (which
// association, NANC 353 / NANC 111), the OutstandingRequests (invoke ids, congestion,
// timeouts) and the RecoveryState (normal / recovering). Congestion changes reported by
// the outstanding table are applied to the logical association here, so the caller never
// has to. The caller owns the durable queue and the sockets: it asks send() for each
// queued message in FIFO order and writes the Transmission it gets; a Wait means "leave
// it queued and try again after the next event".
//
// Nothing lost (docs/OPERATIONS.md, "Outstanding requests, congestion and timeouts"): a
// message is acknowledged only by onResponse() (confirmed) or by the caller once written
// (unconfirmed). When an association is lost, onAssociationLost() re-sends its in-flight
// requests on survivors as retransmissions, same invoke ids, and returns those it could
// not place so the caller puts them back to queued.
//
// Silent associations: once a request on an association passes response_timeout
// unanswered, that association is silent — it leaves the rotation (member state
// Prohibited, so no new PDU goes to it) until something is answered ON it. Every such
// timeout counts against the association where the request was waiting, wherever its
// retry then goes, and so does every further response_timeout it stays silent (its
// retries may all have gone, and been answered, elsewhere); at `retry_attempts` timeouts
// the association is to be aborted
// (TimerOutcome::abort), and its in-flight messages move as on any loss. A retry goes to
// another association with the function when one is available (the silent one is
// avoided), else it is sent again on the same association.
//
// Threading: none; the provider's strand. Time: passed in. No I/O.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "associations/logical_association.h"
#include "associations/outstanding.h"
#include "associations/recovery.h"

namespace npac::associations {

struct OutboundMessage {
  // Why the message goes out. Recovery mode stops only kPush: the response to a
  // provider's own request (its recovery actions included) and the messages a recovery
  // request selected (RecoveryState::answer) still leave.
  enum class Purpose : std::uint8_t { kPush, kResponse, kRecoveryAnswer };

  MessageId id = 0;
  AssociationFunction function = AssociationFunction::kNotifications;
  bool confirmed = true;  // an NPAC request that needs a response; never for kResponse
  std::uint8_t priority = 0;
  Purpose purpose = Purpose::kPush;
};

struct Transmission {
  MessageId message = 0;
  AssociationId association = 0;
  std::optional<InvokeId> invoke_id;  // confirmed requests only
  bool retransmission = false;
};

enum class WaitReason : std::uint8_t {
  kRecovering,                // recovery mode: nothing is pushed
  kNoAssociationForFunction,  // no bound association has the function (or none at all)
  kAllCongested,              // every association with the function is at its window
  kInvokeIdsExhausted,
};
std::string_view toString(WaitReason reason);

struct SendOutcome {
  std::optional<Transmission> transmission;
  WaitReason wait = WaitReason::kNoAssociationForFunction;  // when !transmission
  bool ok() const { return transmission.has_value(); }
};

struct LossOutcome {
  std::vector<Transmission> retransmissions;  // write these on the survivors
  std::vector<MessageId> requeue;             // back to queued in the durable queue
};

struct SrrOffOutcome {
  std::vector<SrrOffRelease> plan;            // what planSrrOff() decided
  std::vector<Transmission> retransmissions;  // moved requests, on the associations that stay
  std::vector<MessageId> requeue;             // could not be placed (keeper congested)
};

struct TimerOutcome {
  std::vector<Transmission> retries;   // write these (retransmissions, same invoke id)
  std::vector<AssociationId> abort;    // abort these, then call onAssociationLost()
  std::vector<AssociationId> silenced; // became silent at this call (for the log)
};

class ProviderEgress {
 public:
  static Result<std::unique_ptr<ProviderEgress>> create(
      std::string spid, const dispatch::PolicyConfig& policy, OutstandingLimits limits);

  // An admitted bind. For a replacing bind, call onBound() for the new association first,
  // then onAssociationLost() for the replaced one, so its messages move to the new one.
  void onBound(const AssociationSpec& spec, bool recovery_mode);

  SendOutcome send(const OutboundMessage& message, TimePoint now);

  // A response arrived: the acknowledged message, or none for an unknown invoke id.
  std::optional<MessageId> onResponse(InvokeId invoke_id, AssociationId arrived_on,
                                      TimePoint now);

  LossOutcome onAssociationLost(AssociationId association, TimePoint now);

  TimerOutcome onTimer(TimePoint now);

  // SRR was turned off (srr_rules.h planSrrOff): per mask the earliest-bound association
  // stays; each other one leaves the rotation at once and its outstanding requests move to
  // the one that stays (retransmissions, same invoke ids; a late response on the old
  // association still completes them). The released ones then have nothing outstanding:
  // readyToRelease() lists them for a graceful release (RLRQ).
  SrrOffOutcome onSrrTurnedOff(TimePoint now);

  // Graceful release (operator, shutdown, SRR off): the association takes no new PDU;
  // once nothing is outstanding on it, readyToRelease() lists it.
  void startRelease(AssociationId association);
  std::vector<AssociationId> readyToRelease() const;

  // Silent: a request on it passed response_timeout and nothing was answered on it since.
  bool silent(AssociationId association) const { return silent_.count(association) != 0; }
  std::uint32_t timeouts(AssociationId association) const;

  LogicalAssociation& logical() { return *logical_; }
  OutstandingRequests& outstanding() { return outstanding_; }
  RecoveryState& recovery() { return recovery_; }

 private:
  ProviderEgress(std::unique_ptr<LogicalAssociation> logical, OutstandingLimits limits)
      : logical_(std::move(logical)), outstanding_(limits) {}
  void apply(const std::optional<MemberStateChange>& change);
  void apply(const std::vector<MemberStateChange>& changes);

  std::unique_ptr<LogicalAssociation> logical_;
  OutstandingRequests outstanding_;
  RecoveryState recovery_;
  std::set<AssociationId> silent_;
  std::map<AssociationId, std::uint32_t> timeouts_;  // response timeouts on it, cumulative
  std::map<AssociationId, TimePoint> last_timeout_;  // when the latest one counted
};

}  // namespace npac::associations
