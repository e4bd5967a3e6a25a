// ACSE APDUs (ITU-T X.227, module ACSE-1): AARQ, AARE, RLRQ, RLRE and ABRT, with AP
// titles (form 2, OBJECT IDENTIFIER), AE qualifiers (form 2, INTEGER) and
// user-information as a list of EXTERNALs — for CMIP, one EXTERNAL holding X.711's
// CMIPUserInfo (cmip/cmip.h).
//
// The decoder accepts any application context name; whether the association can be
// accepted is a separate question answered by checkAarq(), which returns the exact AARE
// diagnostic X.227 §7.1.4.2 prescribes (application-context-name-not-supported for a
// context other than systems-management 2.9.0.0.2, no-common-acse-version when the
// protocol-version lacks version1). The façade sends the AARE built by refusalFor().
//
// Threading: plain values and pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "cmip/ber.h"
#include "cmip/result.h"

namespace npac::cmip {

// X.227 Associate-result.
enum class AssociateResult : int32_t {
  kAccepted = 0,
  kRejectedPermanent = 1,
  kRejectedTransient = 2,
};

// X.227 Associate-source-diagnostic CHOICE alternatives.
enum class DiagnosticSource : uint8_t {
  kServiceUser = 1,      // acse-service-user [1]
  kServiceProvider = 2,  // acse-service-provider [2]
};

// acse-service-user diagnostic values.
namespace user_diagnostic {
inline constexpr int32_t kNull = 0;
inline constexpr int32_t kNoReasonGiven = 1;
inline constexpr int32_t kApplicationContextNameNotSupported = 2;
inline constexpr int32_t kCallingApTitleNotRecognized = 3;
inline constexpr int32_t kCallingApInvocationIdentifierNotRecognized = 4;
inline constexpr int32_t kCallingAeQualifierNotRecognized = 5;
inline constexpr int32_t kCallingAeInvocationIdentifierNotRecognized = 6;
inline constexpr int32_t kCalledApTitleNotRecognized = 7;
inline constexpr int32_t kCalledApInvocationIdentifierNotRecognized = 8;
inline constexpr int32_t kCalledAeQualifierNotRecognized = 9;
inline constexpr int32_t kCalledAeInvocationIdentifierNotRecognized = 10;
inline constexpr int32_t kAuthenticationMechanismNameNotRecognized = 11;
inline constexpr int32_t kAuthenticationMechanismNameRequired = 12;
inline constexpr int32_t kAuthenticationFailure = 13;
inline constexpr int32_t kAuthenticationRequired = 14;
inline constexpr int32_t kMax = 14;
}  // namespace user_diagnostic

// acse-service-provider diagnostic values.
namespace provider_diagnostic {
inline constexpr int32_t kNull = 0;
inline constexpr int32_t kNoReasonGiven = 1;
inline constexpr int32_t kNoCommonAcseVersion = 2;
inline constexpr int32_t kMax = 2;
}  // namespace provider_diagnostic

struct SourceDiagnostic {
  DiagnosticSource source = DiagnosticSource::kServiceUser;
  int32_t value = user_diagnostic::kNull;
  bool operator==(const SourceDiagnostic&) const = default;
};

// Release-request-reason / Release-response-reason.
enum class ReleaseRequestReason : int32_t { kNormal = 0, kUrgent = 1, kUserDefined = 30 };
enum class ReleaseResponseReason : int32_t { kNormal = 0, kNotFinished = 1, kUserDefined = 30 };

// ABRT-source and ABRT-diagnostic.
enum class AbortSource : int32_t { kServiceUser = 0, kServiceProvider = 1 };
enum class AbortDiagnostic : int32_t {
  kNoReasonGiven = 1,
  kProtocolError = 2,
  kAuthenticationMechanismNameNotRecognized = 3,
  kAuthenticationMechanismNameRequired = 4,
  kAuthenticationFailure = 5,
  kAuthenticationRequired = 6,
};

// The application-entity title parts npacd uses: AP-title form 2 and AE-qualifier form 2.
struct AeTitle {
  std::optional<Oid> apTitle;
  std::optional<int64_t> aeQualifier;
  bool operator==(const AeTitle&) const = default;
};

struct Aarq {
  // protocol-version [0] IMPLICIT BIT STRING { version1(0) } DEFAULT { version1 };
  // nullopt = absent (the default).
  std::optional<BitString> protocolVersion;
  Oid applicationContext;
  AeTitle called;
  AeTitle calling;
  std::vector<External> userInformation;  // [30] IMPLICIT SEQUENCE OF EXTERNAL
  bool operator==(const Aarq&) const = default;
};

struct Aare {
  std::optional<BitString> protocolVersion;
  Oid applicationContext;
  AssociateResult result = AssociateResult::kAccepted;
  SourceDiagnostic diagnostic;
  AeTitle responding;
  std::vector<External> userInformation;
  bool operator==(const Aare&) const = default;
};

struct Rlrq {
  std::optional<ReleaseRequestReason> reason;
  std::vector<External> userInformation;
  bool operator==(const Rlrq&) const = default;
};

struct Rlre {
  std::optional<ReleaseResponseReason> reason;
  std::vector<External> userInformation;
  bool operator==(const Rlre&) const = default;
};

struct Abrt {
  AbortSource source = AbortSource::kServiceUser;
  std::optional<AbortDiagnostic> diagnostic;
  std::vector<External> userInformation;
  bool operator==(const Abrt&) const = default;
};

using AcseApdu = std::variant<Aarq, Aare, Rlrq, Rlre, Abrt>;

const char* acseApduName(const AcseApdu& apdu);  // "aarq", "aare", ...

void encodeAcseApdu(const AcseApdu& apdu, BerWriter& w);
std::vector<uint8_t> encodeAcseApdu(const AcseApdu& apdu);

// Decodes exactly one ACSE APDU. kAcseBadApdu for an unknown APDU tag, a missing
// mandatory component or an out-of-range enumerated value; kAcseBadUserInformation for
// user-information that is not a SEQUENCE OF EXTERNAL. An unknown application context
// is NOT an error here (see checkAarq).
Result<AcseApdu> decodeAcseApdu(std::span<const uint8_t> in,
                                const DecodeLimits& limits = DecodeLimits{});

// nullopt if npacd can accept this AARQ; otherwise the diagnostic for the rejecting
// AARE (X.227 §7.1.4.2): provider/no-common-acse-version if version1 is not offered,
// user/application-context-name-not-supported if the context is not 2.9.0.0.2.
std::optional<SourceDiagnostic> checkAarq(const Aarq& aarq);
// The same check as a Status (kAcseUnknownApplicationContext or kAcseBadApdu).
Status validateAarq(const Aarq& aarq);
// The rejecting AARE for `aarq` with `diagnostic` (the requested context echoed back as
// X.227 requires). `result` is rejected-permanent unless the responder's refusal is one
// that passes (rejected-transient, X.227 §7.1.5.4: e.g. the responder's storage fails).
Aare refusalFor(const Aarq& aarq, SourceDiagnostic diagnostic,
                AssociateResult result = AssociateResult::kRejectedPermanent);

// The CMIPUserInfo EXTERNAL of an AARQ/AARE user-information list: the one whose
// indirect-reference is `cmipContextId` (the presentation context of 2.9.1.1.4) or whose
// direct-reference is 2.9.1.1.4. nullptr if there is none.
const External* findCmipUserInfo(const std::vector<External>& userInformation,
                                 std::optional<int64_t> cmipContextId);

}  // namespace npac::cmip
