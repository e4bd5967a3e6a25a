// The seam between cmip/'s NPAC bind profile and the association layer's own structs.
//
// cmip/npac_bind.h decodes the LnpAccessControl of a bind and defines which bytes its
// signature covers (signedContent: the DER of components [0]..[8]); the BindGate works
// on a BindRequest. bindRequestFrom() copies one into the other, taking the signed bytes
// from cmip/ so the gate verifies exactly what the profile says is signed. The recovery
// action's argument is mapped the same way.
//
// Threading: pure functions.
#pragma once

#include <optional>

#include "associations/bind_diagnostic.h"
#include "associations/bind_facts.h"
#include "associations/recovery.h"
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

}  // namespace npac::associations
