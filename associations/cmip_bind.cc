#include "associations/cmip_bind.h"

#include <limits>

#include "cmip/upper_layers.h"

namespace npac::associations {

SystemType systemTypeFrom(cmip::SystemType type) {
  switch (type) {
    case cmip::SystemType::kSoa: return SystemType::kSoa;
    case cmip::SystemType::kLsms: return SystemType::kLsms;
    case cmip::SystemType::kSoaAndLsms: return SystemType::kSoaAndLsms;
    case cmip::SystemType::kNpac: return SystemType::kNpac;
  }
  return SystemType::kNpac;  // never a provider's: the gate refuses it
}

cmip::SystemType toCmip(SystemType type) {
  switch (type) {
    case SystemType::kSoa: return cmip::SystemType::kSoa;
    case SystemType::kLsms: return cmip::SystemType::kLsms;
    case SystemType::kSoaAndLsms: return cmip::SystemType::kSoaAndLsms;
    case SystemType::kNpac: return cmip::SystemType::kNpac;
  }
  return cmip::SystemType::kNpac;
}

// Both number the functions as docs/npac-bind.asn1 does (bit 0 SOA management … bit 4
// queries); bits beyond are kept so the gate refuses them.
FunctionMask functionMaskFrom(const cmip::AssociationFunctionMask& mask) {
  return FunctionMask(static_cast<std::uint8_t>(mask.bits > 0xFF ? 0xFF : mask.bits));
}

cmip::AssociationFunctionMask toCmip(FunctionMask mask) {
  cmip::AssociationFunctionMask result;
  result.bits = mask.bits();
  return result;
}

WallTime wallTimeFrom(const cmip::GeneralizedTime& time) {
  return WallTime(std::chrono::milliseconds(time.toUnixMillis()));
}

cmip::GeneralizedTime toCmip(WallTime time) {
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  return cmip::GeneralizedTime::fromUnixMillis(millis);
}

std::optional<BindRequest> bindRequestFrom(const cmip::LnpAccessControl& ac) {
  constexpr auto kMaxU32 = static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max());
  if (ac.listId < 0 || ac.listId > kMaxU32 || ac.keyId < 0 || ac.keyId > kMaxU32 ||
      ac.sequenceNumber < 0) {
    return std::nullopt;
  }
  BindRequest request;
  request.spid = ac.systemId;
  request.system_type = systemTypeFrom(ac.systemType);
  request.user_id = ac.userId;
  request.key_list_id = static_cast<std::uint32_t>(ac.listId);
  request.key_id = static_cast<std::uint32_t>(ac.keyId);
  request.departure_time = wallTimeFrom(ac.departureTime);
  request.sequence_number = static_cast<std::uint64_t>(ac.sequenceNumber);
  request.functions = functionMaskFrom(ac.functions);
  request.recovery_mode = ac.recoveryMode;
  request.signature = ac.signature;
  request.signed_bytes = cmip::signedContent(ac);
  return request;
}

RecoveryRequest recoveryRequestFrom(const cmip::RecoveryRequest& request) {
  RecoveryRequest result;
  if (request.allUnacknowledged) {
    result.kind = RecoveryRequest::Kind::kUnacknowledged;
    return result;
  }
  result.kind = RecoveryRequest::Kind::kTimeRange;
  result.from = wallTimeFrom(request.startTime);
  result.to = wallTimeFrom(request.stopTime);
  return result;
}

Result<cmip::LnpAccessControl> signedNpacAccessControl(
    const NpacAccessControlFields& fields, const SignatureSigner& signer) {
  cmip::LnpAccessControl ac;
  ac.systemId = fields.system_id;
  ac.systemType = cmip::SystemType::kNpac;
  ac.userId = kNpacUserId;
  ac.listId = fields.key_list_id;
  ac.keyId = fields.key_id;
  // cmipDepartureTime goes in whole seconds, as a provider's does.
  ac.departureTime = toCmip(std::chrono::floor<std::chrono::seconds>(fields.departure_time));
  ac.sequenceNumber = fields.sequence_number;
  ac.functions = toCmip(fields.functions);
  ac.recoveryMode = fields.recovery_mode;
  ac.signature.assign(1, 0);  // placeholder so validation sees a complete value
  cmip::Status valid = cmip::validateAccessControl(ac);
  if (!valid.isOk()) {
    return Status::error(StatusCode::kSignatureInternal, "the NPAC's access control is invalid: " + valid.message());
  }
  auto signature = signer.sign(cmip::signedContent(ac));
  if (!signature.isOk()) return signature.status();
  ac.signature = std::move(signature).value();
  return ac;
}

Status verifyNpacAccessControl(const cmip::LnpAccessControl& npac,
                               const SignatureVerifier& verifier) {
  if (npac.systemType != cmip::SystemType::kNpac) {
    return Status::error(StatusCode::kBadSignature, std::string("the access control's systemType is ") +
                                                        common::toString(npac.systemType) + ", not npac");
  }
  return verifier.verify(cmip::signedContent(npac), npac.signature);
}

BindDiagnostic missingAccessControlDiagnostic(const cmip::ConnectIndication& indication) {
  if (indication.cmip_user_info) {
    return indication.cmip_user_info->accessControl ? BindDiagnostic::kBadAccessControl
                                                    : BindDiagnostic::kNoAccessControl;
  }
  // No CMIPUserInfo decoded: either the AARQ has none (the upper layers say
  // kBindBadAccessControl for that) or it has one that is malformed.
  if (indication.aarq.userInformation.empty() ||
      indication.bind_status.code() == cmip::ErrorCode::kBindBadAccessControl) {
    return BindDiagnostic::kNoAccessControl;
  }
  return BindDiagnostic::kBadAccessControl;
}

}  // namespace npac::associations
