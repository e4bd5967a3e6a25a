// BindDiagnostic: why the NPAC refused a bind — one value per BindGate check, and the
// refusals decided around the gate: a bind without (or with an undecodable) NPAC access
// control, and a database that cannot record the bind.
//
// The gate's values are listed in the order the BindGate checks them (docs/OPERATIONS.md
// "Admission"), so a bind failing several checks reports the first. Each value has a
// stable text name (the association log's reason code and the admin API's), a sentence
// for the operator, the ACSE diagnostic the AARE carries (X.227 §7.1.5.5,
// Associate-source-diagnostic acse-service-user) and the AARE's result (X.227 §7.1.5.4):
// rejected-permanent, except rejected-transient for storage-unavailable and
// owned-elsewhere — the cause is the NPAC's and passes, so the same bind may succeed later.
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
  // Decided before the gate: the AARQ's CMIPUserInfo has no accessControl at all (or
  // there is no CMIPUserInfo), or it has one that does not decode as LnpAccessControl.
  kNoAccessControl,
  kBadAccessControl,
  // Decided after the gate: the database could not record the bind (its sequence
  // number), or could not read the provisioning it needs.
  kStorageUnavailable,
  // Decided last: another npacd node sharing the database holds the provider's lease
  // (db/lease_store.h): its associations are served there. Transient: once that node is
  // gone and its lease expired, the same bind succeeds here.
  kOwnedElsewhere,
};

// X.227 Associate-source-diagnostic, acse-service-user values used by npacd.
enum class AcseUserDiagnostic : std::uint8_t {
  kNoReasonGiven = 1,
  kCallingApTitleNotRecognized = 3,
  kAuthenticationFailure = 13,
  kAuthenticationRequired = 14,
};

std::string_view toString(BindDiagnostic diagnostic);    // "unknown-spid", ...
std::string_view describe(BindDiagnostic diagnostic);    // a sentence for the operator
AcseUserDiagnostic acseDiagnostic(BindDiagnostic diagnostic);
// True when the AARE's result is rejected-transient (X.227 §7.1.5.4): retrying the same
// bind later can succeed without the provider changing anything.
bool isTransient(BindDiagnostic diagnostic);

}  // namespace npac::associations
