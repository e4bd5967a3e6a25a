// CoreService: what the admin API (npac/npacd/api/admin_api.h) needs from the running
// association core — the part of npacd only the core can do. Provisioning, tunables and
// message status are answered by the API itself from SQLite; everything that touches live
// associations or the outbound queue's group commit goes through this interface.
//
//   submit            messages for providers; completes with their ids only once the rows
//                     are committed (the core uses db::QueueWriter group commit); a
//                     message whose idempotency key is already stored is a duplicate.
//   pollInbound       long-poll for requests the providers sent to the NPAC.
//   respond           the NPAC application's answer to one of those requests (completes
//                     with the queued answer's message id); the core
//                     sends it through the provider's egress policy (round robin), so it
//                     may leave on another association than the request came in on
//                     (NANC 353 7.b.iv).
//   listAssociations  the live associations with their counters.
//   abortAssociation  an operator abort of one association.
//   metrics           a snapshot of the core's counters and state (GET /metrics, /ready).
//
// Threading contract:
//  - The admin API calls every method from its own io_context thread (the "API thread"),
//    never from a core thread. A method must not block: queue the work and return.
//  - Each call's completion must be invoked EXACTLY ONCE, from any thread (the core's
//    thread, the QueueWriter's writer thread...). The admin API re-posts every completion
//    onto its own io_context before touching HTTP state, so the core need not know about
//    the API's executor. A completion does no work beyond that post: it never blocks.
//  - After the API's io_context stopped, completions may still be invoked; they are
//    harmless (the post is dropped with the io_context).
//  - The CoreService must outlive the AdminApi it is attached to.
//
// The stored PDU: a submitted message is stored in the durable queue (db::NewMessage::pdu)
// as the BER of its ROSE Invoke APDU (X.880 / X.711 §7.4) with invoke id 0 as a
// placeholder: encodeQueuedInvoke(). When the core sends it, it gives it the real invoke
// id, unique across the provider's logical association: withInvokeId().
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "cmip/cmip_operations.h"
#include "cmip/rose.h"
#include "db/clock.h"
#include "db/outbound_queue.h"
#include "db/status.h"
#include "npac/npacd/core/core_metrics.h"

namespace npac::npacd {

// The invoke id a queued PDU carries until the core assigns the real one at send time.
inline constexpr std::int32_t kPlaceholderInvokeId = 0;

// One message submitted by the NPAC application.
struct OutboundMessage {
  // spid, function_mask (the association functions it needs, NANC 111; bits as in
  // associations::AssociationFunction), priority (higher first), pdu (encodeQueuedInvoke).
  db::NewMessage message;
  // Optional ordering key given by the application (e.g. a TN or an MSU key): messages of
  // one provider with the same key should leave in submission order. The queue already
  // delivers FIFO per priority; the key is passed on for policies that use one.
  std::optional<std::string> key;
  cmip::CmipOpcode opcode = cmip::CmipOpcode::kEventReport;
  bool confirmed = false;  // a response is expected (isConfirmedCmipOpcode(opcode))
};

// A request a provider sent to the NPAC, handed to the application.
using InboundRequestId = std::uint64_t;
struct InboundRequest {
  InboundRequestId id = 0;      // unique in this npacd run; names it in respond()
  std::string spid;
  db::AssociationId association_id = 0;  // where it arrived
  std::uint32_t function_mask = 0;        // that association's functions
  std::string nsap_hex;         // that association's NSAP
  std::int32_t invoke_id = 0;   // the provider's invoke id
  cmip::CmipOpcode opcode = cmip::CmipOpcode::kEventReport;
  std::vector<std::uint8_t> pdu;  // the ROSE Invoke APDU as received (BER)
  db::TimeMs received_at = 0;
};

struct InboundPoll {
  std::string spid;                    // "" = every provider
  std::size_t max = 100;               // at most this many requests
  std::chrono::milliseconds wait{0};   // 0 = answer at once
};

// The application's answer to an inbound request.
struct InboundResponse {
  enum class Kind { kResult, kError };
  Kind kind = Kind::kResult;
  // kResult: the complete BER of the operation's result value (e.g. an ActionResult
  // SEQUENCE); nullopt = a ReturnResult without a result body.
  std::optional<cmip::OpaqueBer> result;
  // kError: the CMIP error and its optional parameter.
  cmip::CmipError error = cmip::CmipError::kProcessingFailure;
  std::optional<cmip::OpaqueBer> error_parameter;
  std::string actor;  // who answered, for the log
};

// One live association, as listed to operators.
struct AssociationInfo {
  db::AssociationId id = 0;
  std::string spid;
  std::string nsap_hex;
  std::string peer_address;       // "127.0.0.2:40312"
  std::uint32_t function_mask = 0;
  std::string functions;          // associations::FunctionMask::toString()
  std::string state;              // "bound", "congested", "releasing", "recovering", ...
  bool recovery_mode = false;
  db::TimeMs bound_at = 0;
  std::uint64_t sent = 0;          // PDUs sent on it
  std::uint64_t received = 0;      // PDUs received on it
  std::uint64_t outstanding = 0;   // NPAC requests awaiting their response
  std::uint64_t retransmissions = 0;
  // The latest heartbeat round trip on it (NANC 404); none until one was answered.
  std::optional<double> heartbeat_rtt_seconds;
  // What the egress policy computes about it; none while it is releasing (in no policy).
  std::optional<EgressFigures> egress;
  // The core thread its provider lives on (npacd --threads N: 0..N-1; always 0 with one).
  std::size_t core_thread = 0;
};

// The provider's egress as operators look at it (GET /v1/providers/{spid}/egress): its
// policy and the latest PDUs written, each with the association the policy put it on —
// the round robin made visible (NANC 353 7.b.ii: one PDU on exactly one association).
struct ProviderEgressView {
  std::string spid;
  std::string policy;  // the egress_policy in force ("round-robin", "lrtm", ...)
  struct Pick {
    db::AssociationId association = 0;
    std::string function;  // the association function it was routed by (NANC 111)
    db::TimeMs at = 0;     // when it was written
    bool retransmission = false;
  };
  std::vector<Pick> recent;  // oldest first, at most kRecentPicks
};
inline constexpr std::size_t kRecentPicks = 64;

// Why a provider's queued messages of one association function are not leaving now: the
// first obstacle the core met placing the oldest of them (docs/OPERATIONS.md "Why a
// message waits"). Names are the API's and npacctl's (waitReasonName).
enum class WaitReason : std::uint8_t {
  kNotBound,                  // the provider has no bound association
  kNoAssociationForFunction,  // none of its associations has the message's functions
  kAllCongested,              // each one that has them is at congestion_window
  kSilent,                    // each one that has them is silent past response_timeout
  kRecovering,                // recovery mode: the provider asked to be sent nothing new
  kThrottled,                 // throttle_* tunables, or the provider's throttle group (DSR ETG/ETL)
  kReleasing,                 // SRR off, provider disabled or npacd stopping
  kStorageUnavailable,        // the database does not take the writes delivery needs
  kLeaseNotValid,             // this node's lease on the provider is not renewed (two sites)
  kInvokeIdsExhausted,        // every invoke id is outstanding
};
const char* waitReasonName(WaitReason reason);

// What the core knows live about one provider's queue (GET /v1/providers/{spid}/queue;
// the counts by state and function come from SQLite, not from here).
struct ProviderQueueView {
  std::string spid;
  bool bound = false;  // at least one association bound now
  struct FunctionWait {
    std::string function;  // associations::toString(AssociationFunction)
    WaitReason reason = WaitReason::kNotBound;
    std::size_t waiting = 0;  // messages of that function the core saw waiting
  };
  std::vector<FunctionWait> waits;  // only functions with messages waiting
  int throttle_level = 0;           // 0 none, 1..3 the egress throttle level in force
  std::string throttle_detail;      // e.g. "rate 21/20 msg/s", "" when level 0
  // The provisioned throttle group the provider is a member of ("" none), and the level
  // it holds the provider's messages with (0: it does not hold them now).
  std::string throttle_group;
  int throttle_group_level = 0;
  bool storage_ok = true;
  struct AssociationLoad {
    db::AssociationId id = 0;
    std::uint32_t outstanding = 0;
    bool congested = false;
    bool silent = false;  // a request on it passed response_timeout unanswered
  };
  std::vector<AssociationLoad> associations;
};

class CoreService {
 public:
  using SubmitDone = std::function<void(db::Result<std::vector<db::AppendOutcome>>)>;
  using RespondDone = std::function<void(db::Result<db::MessageId>)>;
  using PollDone = std::function<void(db::Result<std::vector<InboundRequest>>)>;
  using StatusDone = std::function<void(db::Status)>;
  using ListDone = std::function<void(db::Result<std::vector<AssociationInfo>>)>;
  using QueueViewDone = std::function<void(db::Result<ProviderQueueView>)>;
  using EgressViewDone = std::function<void(db::Result<ProviderEgressView>)>;

  virtual ~CoreService() = default;

  // Appends `messages` to the durable queue as ONE all-or-nothing submission and completes
  // with their ids (input order) after the COMMIT, never before. A message whose
  // idempotency key is already stored for its provider with the same content adds no row:
  // its outcome is the original id, marked duplicate (db::OutboundQueue). Errors:
  // kConstraint (unknown provider, a key stored with different content),
  // kInvalidArgument (a malformed or repeated key), kOverloaded (writer queue full: the API answers 503, retry later),
  // kShutdown, storage errors. Accepted messages are then delivered by the core.
  virtual void submit(std::vector<OutboundMessage> messages, SubmitDone done) = 0;

  // Completes with up to poll.max inbound requests not yet handed out (of poll.spid, or
  // of every provider), oldest first, as soon as at least one is available, or with an
  // empty list once poll.wait has elapsed (the core owns the timer). Each request is
  // handed out to one poll only. kShutdown while stopping.
  virtual void pollInbound(InboundPoll poll, PollDone done) = 0;

  // Answers inbound request `id` (ReturnResult or ReturnError with the request's invoke id
  // and opcode: encodeInboundResponse()): the answer is committed to the durable queue
  // ahead of the provider's messages and leaves through its egress policy, at once or at
  // its next bind. Completes after the COMMIT with the answer's outbound message id (GET
  // /v1/messages/{id} shows its delivery). kNotFound: unknown id or already answered; a
  // storage error leaves the request open, so it may be answered again.
  virtual void respond(InboundRequestId id, InboundResponse response, RespondDone done) = 0;

  // Every live association, by id.
  virtual void listAssociations(ListDone done) = 0;

  // The live part of one provider's queue view: wait reasons per function, throttle
  // level, outstanding per association, storage state. A provider that never bound in
  // this run answers bound=false and no waits (the API reports its queued messages as
  // waiting for not-bound).
  virtual void queueView(std::string spid, QueueViewDone done) = 0;

  // One provider's egress view. kNotFound for a provider that never bound in this run
  // (the API then shows its egress_policy tunable and no picks). Default (a core that
  // keeps no view, a test double): kInternal.
  virtual void egressView(std::string spid, EgressViewDone done) {
    (void)spid;
    done(db::Status::internal("this core keeps no egress view"));
  }

  // Aborts association `id` (ABRT, source service user) and moves its in-flight messages
  // to the surviving associations as the core does on any loss. kNotFound if not live.
  // `actor` goes to the log.
  virtual void abortAssociation(db::AssociationId id, std::string actor, StatusDone done) = 0;

  // The provider was disabled: each of its associations takes no new PDU and is released
  // (RLRQ) once nothing is outstanding on it; what it had not delivered stays queued.
  // Completes with how many associations are being released. `reason` goes to the log.
  using CountDone = std::function<void(std::size_t)>;
  virtual void releaseProvider(std::string spid, std::string reason, CountDone done) = 0;

  // A snapshot of the core's counters, taken on the core thread (core_metrics.h): every
  // provider's when `providers`, else only the core's own state (listener, drain,
  // storage), which is what a readiness probe needs. A core that keeps no metrics (a
  // test double) answers kInternal.
  using MetricsDone = std::function<void(db::Result<CoreMetrics>)>;
  virtual void metrics(bool providers, MetricsDone done) {
    (void)providers;
    done(db::Status::internal("this core keeps no metrics"));
  }
};

// The bytes a submitted operation is queued as: its ROSE Invoke with the placeholder
// invoke id (X.711 §7.4 ROSEapdus; encoders in cmip/).
inline std::vector<std::uint8_t> encodeQueuedInvoke(cmip::CmipInvoke invoke) {
  invoke.invokeId = kPlaceholderInvokeId;
  invoke.linkedId.reset();
  return cmip::encodeRoseApdu(cmip::toRose(invoke));
}

// A queued PDU re-encoded with the invoke id it is sent with. Errors: the stored bytes are
// not a ROSE Invoke (kRoseUnknownApdu / BER errors).
inline cmip::Result<std::vector<std::uint8_t>> withInvokeId(std::span<const std::uint8_t> pdu,
                                                            std::int32_t invoke_id) {
  cmip::Result<cmip::RoseApdu> apdu = cmip::decodeRoseApdu(pdu);
  if (!apdu.isOk()) return std::move(apdu).status();
  auto* invoke = std::get_if<cmip::RoseInvoke>(&apdu.value());
  if (invoke == nullptr) {
    return cmip::Status::error(cmip::ErrorCode::kRoseBadApdu, 0, "queued PDU is not a ROSE Invoke");
  }
  invoke->invokeId = invoke_id;
  return cmip::encodeRoseApdu(apdu.value());
}

// The ROSE APDU answering `request` with `response`: a ReturnResult (opcode and result
// body when given) or a ReturnError (X.711 §7.4 error code, parameter when given).
inline std::vector<std::uint8_t> encodeInboundResponse(const InboundRequest& request,
                                                       const InboundResponse& response) {
  cmip::InvokeId id{request.invoke_id};
  if (response.kind == InboundResponse::Kind::kError) {
    cmip::RoseReturnError error{id, cmip::Code::local(static_cast<std::int32_t>(response.error)),
                                response.error_parameter};
    return cmip::encodeRoseApdu(error);
  }
  cmip::RoseReturnResult result{id, std::nullopt};
  if (response.result) {
    result.result = cmip::RoseReturnResult::Body{
        cmip::Code::local(static_cast<std::int32_t>(request.opcode)), *response.result};
  }
  return cmip::encodeRoseApdu(result);
}

}  // namespace npac::npacd
