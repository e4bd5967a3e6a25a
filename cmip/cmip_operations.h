// X.711 CMIP operations: the typed arguments and results of M-EVENT-REPORT, M-GET,
// M-SET, M-ACTION, M-CREATE, M-DELETE, M-CANCEL-GET and the linked reply, and the
// mapping between them and ROSE APDUs (cmip/rose.h).
//
//   CmipInvoke inv{.invokeId = 7, .opcode = CmipOpcode::kActionConfirmed,
//                  .argument = ActionArgument{...}};
//   RoseApdu apdu = toRose(inv);                        // encode side
//   Result<CmipInvoke> back = fromRose(std::get<RoseInvoke>(apdu));  // decode side
//
// The DEFAULT components (synchronization, scope, filter, modifyOperator) are kept as
// optionals: absent on the wire stays absent, so decode→encode reproduces the bytes.
// CMISFilter is carried opaque. Errors: kCmipUnknownOperation for an opcode X.711 does
// not define, kCmipBadArgument for an argument or result that does not match its
// operation's type. decodeArgument()/decodeResult() let BER errors pass through;
// fromRose(RoseInvoke) folds them into kCmipBadArgument, so a received Invoke fails in
// exactly one of two ways, the two a ROSE Reject tells apart (rejectInvoke()).
//
// Threading: plain values and pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "cmip/ber.h"
#include "cmip/cmip.h"
#include "cmip/result.h"
#include "cmip/rose.h"

namespace npac::cmip {

// CMISSync ::= ENUMERATED { bestEffort(0), atomic(1) }
enum class CmisSync : int32_t { kBestEffort = 0, kAtomic = 1 };

// Scope ::= CHOICE { namedNumbers INTEGER { baseObject(0), firstLevelOnly(1),
//   wholeSubtree(2) }, individualLevels [1] IMPLICIT INTEGER, baseToNthLevel [2] IMPLICIT
//   INTEGER }, carried under [7] (explicit).
struct Scope {
  enum class Kind : uint8_t { kNamedNumbers = 0, kIndividualLevels = 1, kBaseToNthLevel = 2 };
  Kind kind = Kind::kNamedNumbers;
  int64_t value = 0;
  bool operator==(const Scope&) const = default;
};

// The object-selection part shared by Get, Set, Action and Delete arguments:
// COMPONENTS OF BaseManagedObjectId, accessControl [5], synchronization [6] IMPLICIT,
// scope [7], filter CMISFilter ([8]..[11]).
struct Selection {
  ObjectClass baseClass;
  ObjectInstance baseInstance;
  std::optional<External> accessControl;
  std::optional<CmisSync> synchronization;
  std::optional<Scope> scope;
  std::optional<OpaqueBer> filter;
  bool operator==(const Selection&) const = default;
};

// managedObjectClass OPTIONAL, managedObjectInstance OPTIONAL, currentTime [5] IMPLICIT
// GeneralizedTime OPTIONAL — the head of every CMIP result.
struct ReplyHeader {
  std::optional<ObjectClass> managedObjectClass;
  std::optional<ObjectInstance> managedObjectInstance;
  std::optional<GeneralizedTime> currentTime;
  bool operator==(const ReplyHeader&) const = default;
};

struct EventReportArgument {
  ObjectClass managedObjectClass;
  ObjectInstance managedObjectInstance;
  std::optional<GeneralizedTime> eventTime;  // [5] IMPLICIT
  EventTypeId eventType;                     // [6] global / [7] local
  std::optional<OpaqueBer> eventInfo;        // [8]
  bool operator==(const EventReportArgument&) const = default;
};

struct EventReportResult {
  ReplyHeader header;
  struct EventReply {
    EventTypeId eventType;
    std::optional<OpaqueBer> eventReplyInfo;  // [8]
    bool operator==(const EventReply&) const = default;
  };
  std::optional<EventReply> eventReply;
  bool operator==(const EventReportResult&) const = default;
};

struct GetArgument {
  Selection selection;
  std::optional<std::vector<AttributeId>> attributeIdList;  // [12] IMPLICIT SET OF
  bool operator==(const GetArgument&) const = default;
};

// GetResult, SetResult and CreateResult share this shape (attributeList [6] IMPLICIT).
struct AttributeListResult {
  ReplyHeader header;
  std::optional<std::vector<Attribute>> attributeList;
  bool operator==(const AttributeListResult&) const = default;
};
using GetResult = AttributeListResult;
using SetResult = AttributeListResult;
using CreateResult = AttributeListResult;

// ModifyOperator ::= INTEGER { replace(0), addValues(1), removeValues(2), setToDefault(3) }
struct Modification {
  std::optional<int64_t> modifyOperator;  // [2] IMPLICIT, DEFAULT replace
  AttributeId attributeId;
  std::optional<OpaqueBer> attributeValue;  // absent for setToDefault
  bool operator==(const Modification&) const = default;
};

struct SetArgument {
  Selection selection;
  std::vector<Modification> modificationList;  // [12] IMPLICIT SET OF
  bool operator==(const SetArgument&) const = default;
};

struct ActionArgument {
  Selection selection;
  ActionTypeId actionType;                 // in actionInfo [12] IMPLICIT SEQUENCE
  std::optional<OpaqueBer> actionInfoArg;  // [4]
  bool operator==(const ActionArgument&) const = default;
};

struct ActionResult {
  ReplyHeader header;
  struct ActionReply {
    ActionTypeId actionType;
    OpaqueBer actionReplyInfo;  // [4]
    bool operator==(const ActionReply&) const = default;
  };
  std::optional<ActionReply> actionReply;  // [6] IMPLICIT
  bool operator==(const ActionResult&) const = default;
};

struct CreateArgument {
  ObjectClass managedObjectClass;
  std::optional<ObjectInstance> managedObjectInstance;
  bool instanceIsSuperior = false;  // superiorObjectInstance [8] instead of the instance
  std::optional<External> accessControl;                  // [5]
  std::optional<ObjectInstance> referenceObjectInstance;  // [6]
  std::optional<std::vector<Attribute>> attributeList;    // [7] IMPLICIT
  bool operator==(const CreateArgument&) const = default;
};

struct DeleteArgument {
  Selection selection;
  bool operator==(const DeleteArgument&) const = default;
};

struct DeleteResult {
  ReplyHeader header;
  bool operator==(const DeleteResult&) const = default;
};

// LinkedReplyArgument ::= CHOICE { getResult [0], getListError [1], setResult [2],
//   setListError [3], actionResult [4], processingFailure [5], deleteResult [6],
//   actionError [7], deleteError [8] } (all IMPLICIT). The error alternatives are kept
// as the opaque content of their SEQUENCE.
enum class LinkedReplyKind : uint8_t {
  kGetResult = 0, kGetListError = 1, kSetResult = 2, kSetListError = 3,
  kActionResult = 4, kProcessingFailure = 5, kDeleteResult = 6, kActionError = 7,
  kDeleteError = 8,
};
struct LinkedReplyArgument {
  LinkedReplyKind kind = LinkedReplyKind::kGetResult;
  std::variant<AttributeListResult, ActionResult, DeleteResult, std::vector<uint8_t>> body;
  bool operator==(const LinkedReplyArgument&) const = default;
};

// M-CANCEL-GET's argument is the invoke id of the M-GET to cancel.
struct CancelGetArgument {
  int32_t getInvokeId = 0;
  bool operator==(const CancelGetArgument&) const = default;
};

using CmipArgument = std::variant<EventReportArgument, GetArgument, SetArgument,
                                  ActionArgument, CreateArgument, DeleteArgument,
                                  LinkedReplyArgument, CancelGetArgument>;

struct CmipInvoke {
  int32_t invokeId = 0;
  std::optional<int32_t> linkedId;
  CmipOpcode opcode = CmipOpcode::kEventReport;
  CmipArgument argument;
  bool operator==(const CmipInvoke&) const = default;
};

// The result of a confirmed operation; std::monostate for the ReturnResult that
// carries no result (X.880 result OPTIONAL, e.g. M-CANCEL-GET).
using CmipResultValue = std::variant<std::monostate, EventReportResult,
                                     AttributeListResult, ActionResult, DeleteResult>;
struct CmipResult {
  int32_t invokeId = 0;
  std::optional<CmipOpcode> opcode;  // absent iff value is monostate
  CmipResultValue value;
  bool operator==(const CmipResult&) const = default;
};

struct CmipErrorReply {
  InvokeId invokeId;
  CmipError error = CmipError::kProcessingFailure;
  std::optional<OpaqueBer> parameter;  // the error's PARAMETER type, opaque
  bool operator==(const CmipErrorReply&) const = default;
};

// The argument alternative each opcode requires (kCmipBadArgument on mismatch).
Status checkArgumentMatchesOpcode(CmipOpcode op, const CmipArgument& arg);

RoseInvoke toRose(const CmipInvoke& inv);
RoseReturnResult toRose(const CmipResult& res);
RoseReturnError toRose(const CmipErrorReply& err);

// kCmipUnknownOperation (opcode not 0..10, or a global opcode) or kCmipBadArgument
// (argument missing or not of the operation's type; a BER fault inside it is named in
// the message) — never another code.
Result<CmipInvoke> fromRose(const RoseInvoke& inv, const DecodeLimits& limits = DecodeLimits{});

// The ROSE Reject that answers an Invoke fromRose() refused with `why` (X.880 module
// Remote-Operations-Generic-ROS-PDUs, Reject.problem invoke [1] InvokeProblem; X.219
// RO-REJECT-U): unrecognizedOperation(1) for kCmipUnknownOperation, mistypedArgument(2)
// for everything else. The Reject carries the Invoke's id.
RoseReject rejectInvoke(const RoseInvoke& inv, const Status& why);
Result<CmipResult> fromRose(const RoseReturnResult& res,
                            const DecodeLimits& limits = DecodeLimits{});
Result<CmipErrorReply> fromRose(const RoseReturnError& err);

// The opaque ROSE argument / result octets of each type, for callers that need them.
OpaqueBer encodeArgument(const CmipArgument& arg);
Result<CmipArgument> decodeArgument(CmipOpcode op, std::span<const uint8_t> tlv,
                                    const DecodeLimits& limits = DecodeLimits{});
OpaqueBer encodeResult(const CmipResultValue& value);
Result<CmipResultValue> decodeResult(CmipOpcode op, std::span<const uint8_t> tlv,
                                     const DecodeLimits& limits = DecodeLimits{});

}  // namespace npac::cmip
