// ROSE APDUs as CMIP uses them: Invoke, ReturnResult, ReturnError and Reject (X.711
// §7.4 ROSEapdus, built on the X.880 ROS{} generic PDUs; tags as in X.219 / X.229 and
// Wireshark's CMIP dissector). Arguments, results and error parameters are carried as
// opaque BER values (their complete TLV octets); cmip/cmip_operations.h types them.
//
//   ROS ::= CHOICE { invoke [1] IMPLICIT Invoke, returnResult [2] IMPLICIT ReturnResult,
//                    returnError [3] IMPLICIT ReturnError, reject [4] IMPLICIT Reject }
//
// Threading: plain values and pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "cmip/ber.h"
#include "cmip/result.h"

namespace npac::cmip {

// X.880 InvokeId ::= CHOICE { present INTEGER, absent NULL }. CMIP's InvokeIDType
// excludes `absent` everywhere but in a Reject of an unparseable invoke.
struct InvokeId {
  std::optional<int32_t> present;  // nullopt = absent (NULL)
  bool operator==(const InvokeId&) const = default;
};

// X.880 Code ::= CHOICE { local INTEGER, global OBJECT IDENTIFIER }. CMIP uses local.
struct Code {
  std::variant<int32_t, Oid> value;
  static Code local(int32_t v) { return Code{v}; }
  bool isLocal() const { return std::holds_alternative<int32_t>(value); }
  int32_t localValue() const { return isLocal() ? std::get<int32_t>(value) : -1; }
  bool operator==(const Code&) const = default;
};

// Invoke ::= SEQUENCE { invokeId InvokeId, linkedId CHOICE { present [0] IMPLICIT
//   INTEGER, absent [1] IMPLICIT NULL } OPTIONAL, opcode Code, argument ANY OPTIONAL }
struct RoseInvoke {
  int32_t invokeId = 0;
  std::optional<int32_t> linkedId;
  Code opcode;
  std::optional<OpaqueBer> argument;
  bool operator==(const RoseInvoke&) const = default;
};

// ReturnResult ::= SEQUENCE { invokeId InvokeId,
//   result SEQUENCE { opcode Code, result ANY } OPTIONAL }
struct RoseReturnResult {
  InvokeId invokeId;
  struct Body {
    Code opcode;
    OpaqueBer result;
    bool operator==(const Body&) const = default;
  };
  std::optional<Body> result;
  bool operator==(const RoseReturnResult&) const = default;
};

// ReturnError ::= SEQUENCE { invokeId InvokeId, errcode Code, parameter ANY OPTIONAL }
struct RoseReturnError {
  InvokeId invokeId;
  Code errcode;
  std::optional<OpaqueBer> parameter;
  bool operator==(const RoseReturnError&) const = default;
};

// Reject problem families: X.880 module Remote-Operations-Generic-ROS-PDUs, Reject.problem
// CHOICE tags [0]..[3] (the same values as X.229 ROSE Reject).
enum class RejectProblemKind : uint8_t {
  kGeneral = 0,       // GeneralProblem
  kInvoke = 1,        // InvokeProblem
  kReturnResult = 2,  // ReturnResultProblem
  kReturnError = 3,   // ReturnErrorProblem
};
// GeneralProblem
inline constexpr int32_t kUnrecognizedPdu = 0, kMistypedPdu = 1, kBadlyStructuredPdu = 2;
// InvokeProblem
inline constexpr int32_t kDuplicateInvocation = 0, kUnrecognizedOperation = 1,
                         kMistypedArgument = 2, kResourceLimitation = 3,
                         kReleaseInProgress = 4, kUnrecognizedLinkedId = 5,
                         kLinkedResponseUnexpected = 6, kUnexpectedLinkedOperation = 7;
// ReturnResultProblem
inline constexpr int32_t kResultUnrecognizedInvocation = 0, kResultResponseUnexpected = 1,
                         kMistypedResult = 2;
// ReturnErrorProblem
inline constexpr int32_t kErrorUnrecognizedInvocation = 0, kErrorResponseUnexpected = 1,
                         kUnrecognizedError = 2, kUnexpectedError = 3,
                         kMistypedParameter = 4;

// "unrecognizedOperation", "mistypedArgument", … for the log; "unknown(n)" outside X.880.
std::string rejectProblemName(RejectProblemKind kind, int32_t problem);

struct RoseReject {
  InvokeId invokeId;
  RejectProblemKind kind = RejectProblemKind::kGeneral;
  int32_t problem = 0;
  bool operator==(const RoseReject&) const = default;
};

using RoseApdu = std::variant<RoseInvoke, RoseReturnResult, RoseReturnError, RoseReject>;

// "invoke", "returnResult", "returnError", "reject".
const char* roseApduName(const RoseApdu& apdu);

// Writes the BER encoding (definite, minimal lengths) of `apdu`.
void encodeRoseApdu(const RoseApdu& apdu, BerWriter& w);
std::vector<uint8_t> encodeRoseApdu(const RoseApdu& apdu);

// Decodes exactly one ROSE APDU filling `in`. Errors: kRoseUnknownApdu for a tag
// other than [1]..[4]; kRoseBadApdu for a structurally wrong APDU (missing invoke id,
// bad linked id, unknown problem family); BER errors pass through.
Result<RoseApdu> decodeRoseApdu(std::span<const uint8_t> in,
                                const DecodeLimits& limits = DecodeLimits{});

// The Invoke APDU `invoke_apdu` with its invokeId replaced by `invoke_id`, without
// decoding the rest: the first element of the [1] IMPLICIT SEQUENCE (X.880 Invoke) must
// be the INTEGER invokeId (X.711 InvokeIDType: never absent in an Invoke); it becomes
// the minimal two's-complement encoding of `invoke_id` (X.690 §8.3) and the outer length
// is re-encoded in the minimal definite form (X.690 §8.1.3). Every byte after the
// INTEGER is copied as is. For an APDU encodeRoseApdu() wrote, the result equals
// decode + set invokeId + encode. Errors: kRoseUnknownApdu (not a ROSE APDU),
// kRoseBadApdu (a ROSE APDU other than an Invoke, an indefinite length, no INTEGER
// first), kBerIntegerOverflow (an invokeId INTEGER wider than 32 bits), kBerTruncated /
// kBerLengthPastBuffer / kBerTrailingData / kBerBadInteger / kBerOverlongLength.
Result<std::vector<uint8_t>> spliceInvokeId(std::span<const uint8_t> invoke_apdu, int32_t invoke_id);

}  // namespace npac::cmip
