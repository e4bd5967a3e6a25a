#include "associations/bind_diagnostic.h"

namespace npac::associations {

std::string_view toString(BindDiagnostic diagnostic) {
  using D = BindDiagnostic;
  switch (diagnostic) {
    case D::kUnknownSpid: return "unknown-spid";
    case D::kSpidDisabled: return "spid-disabled";
    case D::kSystemTypeMismatch: return "system-type-mismatch";
    case D::kFunctionMaskNotAllowed: return "function-mask-not-allowed";
    case D::kUnknownKey: return "unknown-key";
    case D::kKeyNotYetValid: return "key-not-yet-valid";
    case D::kKeyExpired: return "key-expired";
    case D::kKeyRevoked: return "key-revoked";
    case D::kSignatureInvalid: return "signature-invalid";
    case D::kDepartureTimeOutOfWindow: return "departure-time-out-of-window";
    case D::kSequenceReplayed: return "sequence-replayed";
    case D::kNsapNotProvisioned: return "nsap-not-provisioned";
    case D::kTooManyAssociations: return "too-many-associations";
    case D::kDuplicateBindRejected: return "duplicate-bind-rejected";
    case D::kRecoveryModeWhileUp: return "recovery-mode-while-up";
    case D::kNoAccessControl: return "no-access-control";
    case D::kBadAccessControl: return "bad-access-control";
    case D::kStorageUnavailable: return "storage-unavailable";
    case D::kOwnedElsewhere: return "owned-elsewhere";
  }
  return "unknown";
}

std::string_view describe(BindDiagnostic diagnostic) {
  using D = BindDiagnostic;
  switch (diagnostic) {
    case D::kUnknownSpid: return "no service provider with this SPID is provisioned";
    case D::kSpidDisabled: return "the service provider is disabled";
    case D::kSystemTypeMismatch: return "the bind's system type is not the provider's";
    case D::kFunctionMaskNotAllowed:
      return "the function mask is empty or holds functions this system type may not use";
    case D::kUnknownKey: return "no such key list id / key id for this provider";
    case D::kKeyNotYetValid: return "the key is not valid yet (before its not-before time)";
    case D::kKeyExpired: return "the key has expired";
    case D::kKeyRevoked: return "the key has been revoked";
    case D::kSignatureInvalid: return "the bind's signature does not verify with the key";
    case D::kDepartureTimeOutOfWindow:
      return "the departure time is outside departure_time_window of the NPAC clock";
    case D::kSequenceReplayed:
      return "the sequence number is not greater than the last one seen for this key";
    case D::kNsapNotProvisioned: return "the peer's NSAP is not provisioned for the provider";
    case D::kTooManyAssociations: return "the provider already holds max_associations_per_sp";
    case D::kDuplicateBindRejected:
      return "an association with this function mask is up from another NSAP, SRR is off "
             "and duplicate_bind is reject";
    case D::kRecoveryModeWhileUp:
      return "recovery mode not allowed while an association is up (NANC 353 7.b.vi)";
    case D::kNoAccessControl:
      return "the bind carries no NPAC access control (CMIPUserInfo accessControl is absent)";
    case D::kBadAccessControl: return "the bind's NPAC access control does not decode";
    case D::kStorageUnavailable:
      return "the NPAC cannot use its database right now (the bind was not recorded): "
             "retry later";
    case D::kOwnedElsewhere:
      return "another NPAC node serves this provider's associations: bind there";
  }
  return "unknown";
}

AcseUserDiagnostic acseDiagnostic(BindDiagnostic diagnostic) {
  using D = BindDiagnostic;
  switch (diagnostic) {
    case D::kUnknownSpid:
    case D::kSpidDisabled:
      return AcseUserDiagnostic::kCallingApTitleNotRecognized;
    case D::kUnknownKey:
    case D::kKeyNotYetValid:
    case D::kKeyExpired:
    case D::kKeyRevoked:
    case D::kSignatureInvalid:
    case D::kDepartureTimeOutOfWindow:
    case D::kSequenceReplayed:
    // Present but unusable: the authentication value is there and it fails.
    case D::kBadAccessControl:
      return AcseUserDiagnostic::kAuthenticationFailure;
    // X.227 §7.1.5.5 has a value for exactly this: the responder requires authentication
    // and the AARQ carries none.
    case D::kNoAccessControl:
      return AcseUserDiagnostic::kAuthenticationRequired;
    // storage-unavailable: X.227 has no diagnostic for a responder's own trouble;
    // no-reason-given with result rejected-transient says "not you, try again".
    default:
      return AcseUserDiagnostic::kNoReasonGiven;
  }
}

bool isTransient(BindDiagnostic diagnostic) {
  return diagnostic == BindDiagnostic::kStorageUnavailable ||
         diagnostic == BindDiagnostic::kOwnedElsewhere;
}

}  // namespace npac::associations
