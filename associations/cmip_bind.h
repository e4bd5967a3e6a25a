// The seam between cmip/'s NPAC bind profile and the association layer's own structs.
//
// cmip/npac_bind.h decodes the LnpAccessControl of a bind and defines which bytes its
// signature covers (signedContent: the DER of components [0]..[8]); the BindGate works
// on a BindRequest. bindRequestFrom() copies one into the other, taking the signed bytes
// from cmip/ so the gate verifies exactly what the profile says is signed. The recovery
// action's argument is mapped the same way.
//
// The NPAC's side of mutual authentication goes the other way: signedNpacAccessControl()
// builds and signs the LnpAccessControl an accepting AARE carries (systemType npac), and
// verifyNpacAccessControl() is the provider's check of it (npac-soa-sim, tests).
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "associations/bind_diagnostic.h"
#include "associations/bind_facts.h"
#include "associations/recovery.h"
#include "associations/signature.h"
#include "cmip/npac_bind.h"

namespace npac::cmip {
struct ConnectIndication;
}

namespace npac::associations {

SystemType systemTypeFrom(cmip::SystemType type);
cmip::SystemType toCmip(SystemType type);
FunctionMask functionMaskFrom(const cmip::AssociationFunctionMask& mask);
cmip::AssociationFunctionMask toCmip(FunctionMask mask);

WallTime wallTimeFrom(const cmip::GeneralizedTime& time);
cmip::GeneralizedTime toCmip(WallTime time);

// None when a number does not fit (cmip::validateAccessControl rejects those already).
std::optional<BindRequest> bindRequestFrom(const cmip::LnpAccessControl& access_control);

RecoveryRequest recoveryRequestFrom(const cmip::RecoveryRequest& request);

// Why a bind whose NPAC access control did not decode is refused: kNoAccessControl when
// the AARQ carries none — no CMIPUserInfo, or one without accessControl (X.227
// authentication-required) — and kBadAccessControl when it carries one that does not
// decode (authentication-failure).
BindDiagnostic missingAccessControlDiagnostic(const cmip::ConnectIndication& indication);

// userId of the NPAC's access control: the profile requires 1..64 characters and the NPAC
// has no operator behind a bind response.
inline constexpr const char* kNpacUserId = "npacd";

// What the NPAC's access control in an accepting AARE says.
struct NpacAccessControlFields {
  std::string system_id;        // the npac_system_id tunable: exactly 4 PrintableString characters
  std::int64_t key_list_id = 0;  // the NPAC key that signs
  std::int64_t key_id = 0;
  std::int64_t sequence_number = 0;  // strictly increasing per NPAC key
  WallTime departure_time;      // now, from the NPAC's clock (whole seconds on the wire)
  FunctionMask functions;       // the functions granted: the mask accepted
  bool recovery_mode = false;   // as accepted
};

// Validated (kBadPem-free: the failure is kInternal for a field the profile refuses, with
// the field named) and signed over cmip::signedContent().
Result<cmip::LnpAccessControl> signedNpacAccessControl(
    const NpacAccessControlFields& fields, const SignatureSigner& signer);

// The provider's check: systemType must be npac and the signature must verify with
// `verifier` over cmip::signedContent(). kBadSignature with the reason otherwise.
Status verifyNpacAccessControl(const cmip::LnpAccessControl& npac, const SignatureVerifier& verifier);

}  // namespace npac::associations
