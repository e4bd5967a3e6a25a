// BindDiagnostic: why the NPAC refused a bind, one value per BindGate check.
//
// The values are listed in the order the BindGate checks them (issue 5 "Admission"), so a
// bind failing several checks reports the first. Each has a stable text name (the
// association log's reason code and the admin API's), a sentence for the operator, and
// the ACSE diagnostic the AARE carries (X.227 §7.1.5.5, Associate-source-diagnostic
// acse-service-user; the result itself is always rejected-permanent).
//
// Threading: constants only.
#pragma once

#include <cstdint>
#include <string_view>

namespace npac::associations {

enum class BindDiagnostic : std::uint8_t {
  kUnknownSpid,
  kSpidDisabled,
  kSystemTypeMismatch,
  kFunctionMaskNotAllowed,
  kUnknownKey,
  kKeyRevoked,
  kKeyExpired,
  kKeyNotYetValid,
  kSignatureInvalid,
  kDepartureTimeOutOfWindow,
  kSequenceReplayed,
  kNsapNotProvisioned,
  kTooManyAssociations,
  kRecoveryModeWhileUp,
  kDuplicateBindRejected,
};

// X.227 Associate-source-diagnostic, acse-service-user values used by npacd.
enum class AcseUserDiagnostic : std::uint8_t {
  kNoReasonGiven = 1,
  kCallingApTitleNotRecognized = 3,
  kAuthenticationFailure = 13,
};

std::string_view toString(BindDiagnostic diagnostic);    // "unknown-spid", ...
std::string_view describe(BindDiagnostic diagnostic);    // a sentence for the operator
AcseUserDiagnostic acseDiagnostic(BindDiagnostic diagnostic);

}  // namespace npac::associations
