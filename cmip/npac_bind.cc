// NPACD-BIND-PROFILE codec (docs/npac-bind.asn1; IMPLICIT TAGS).
#include "cmip/npac_bind.h"

#include <string>

#include "cmip/oids.h"

namespace npac::cmip {
namespace {

// LnpAccessControl component tags [0]..[9].
constexpr Tag kSystemId = Tag::context(0);
constexpr Tag kSystemType = Tag::context(1);
constexpr Tag kUserId = Tag::context(2);
constexpr Tag kListId = Tag::context(3);
constexpr Tag kKeyId = Tag::context(4);
constexpr Tag kDepartureTime = Tag::context(5);
constexpr Tag kSequenceNumber = Tag::context(6);
constexpr Tag kFunctions = Tag::context(7);
constexpr Tag kRecoveryMode = Tag::context(8);
constexpr Tag kSignature = Tag::context(9);

constexpr int64_t kMaxKeyNumber = 2147483647;    // listId, keyId: INTEGER (0..2^31-1)
constexpr int64_t kMaxSequenceNumber = 4294967295;  // INTEGER (0..2^32-1)

Status badAccessControl(size_t offset, std::string what) {
  return Status::error(ErrorCode::kBindBadAccessControl, offset, std::move(what));
}

// Components [0]..[8]: the content of both LnpAccessControl and SignedAccessControl.
void writeSignedFields(BerWriter& w, const LnpAccessControl& ac) {
  w.writeString(ac.systemId, kSystemId);
  w.writeEnumerated(static_cast<int64_t>(ac.systemType), kSystemType);
  w.writeString(ac.userId, kUserId);
  w.writeInteger(ac.listId, kListId);
  w.writeInteger(ac.keyId, kKeyId);
  w.writeGeneralizedTime(ac.departureTime, kDepartureTime);
  w.writeInteger(ac.sequenceNumber, kSequenceNumber);
  w.writeBitString(ac.functions.toBitString(), kFunctions);
  w.writeBoolean(ac.recoveryMode, kRecoveryMode);
}

Result<Tlv> expectField(BerReader& r, Tag tag, const char* name) {
  if (r.atEnd()) return badAccessControl(r.offset(), std::string("LnpAccessControl lacks ") + name);
  if (!r.nextIs(tag)) {
    NPAC_ASSIGN_OR_RETURN(Tlv t, r.peek());
    return badAccessControl(t.offset, std::string("expected ") + name + " " + tag.toString() + ", got " +
                             t.tag.toString());
  }
  return r.next();
}

Result<int64_t> readRanged(BerReader& r, Tag tag, const char* name, int64_t max) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, expectField(r, tag, name));
  NPAC_ASSIGN_OR_RETURN(int64_t v, decodeInteger(t));
  if (v < 0 || v > max) {
    return badAccessControl(t.offset, std::string(name) + " " + std::to_string(v) + " is outside 0.." +
                             std::to_string(max));
  }
  return v;
}

Result<LnpAccessControl> decodeFields(BerReader& r) {
  LnpAccessControl ac;
  NPAC_ASSIGN_OR_RETURN(Tlv sid, expectField(r, kSystemId, "systemId"));
  NPAC_ASSIGN_OR_RETURN(ac.systemId, decodeString(sid, StringKind::kPrintable, r.limits()));
  if (ac.systemId.size() != kSystemIdLength) {
    return badAccessControl(sid.offset, "systemId (SPID) must be exactly 4 characters, got " +
                               std::to_string(ac.systemId.size()));
  }
  NPAC_ASSIGN_OR_RETURN(int64_t type, readRanged(r, kSystemType, "systemType", 3));
  ac.systemType = static_cast<SystemType>(type);
  NPAC_ASSIGN_OR_RETURN(Tlv uid, expectField(r, kUserId, "userId"));
  NPAC_ASSIGN_OR_RETURN(ac.userId, decodeString(uid, StringKind::kVisible, r.limits()));
  if (ac.userId.empty() || ac.userId.size() > kMaxUserIdLength) {
    return badAccessControl(uid.offset, "userId must be 1..64 characters, got " +
                               std::to_string(ac.userId.size()));
  }
  NPAC_ASSIGN_OR_RETURN(ac.listId, readRanged(r, kListId, "listId", kMaxKeyNumber));
  NPAC_ASSIGN_OR_RETURN(ac.keyId, readRanged(r, kKeyId, "keyId", kMaxKeyNumber));
  NPAC_ASSIGN_OR_RETURN(Tlv dt, expectField(r, kDepartureTime, "cmipDepartureTime"));
  NPAC_ASSIGN_OR_RETURN(ac.departureTime, decodeGeneralizedTime(dt));
  if (!ac.departureTime.utc) return badAccessControl(dt.offset, "cmipDepartureTime must be UTC ('Z')");
  NPAC_ASSIGN_OR_RETURN(
      ac.sequenceNumber, readRanged(r, kSequenceNumber, "sequenceNumber", kMaxSequenceNumber));
  NPAC_ASSIGN_OR_RETURN(Tlv fn, expectField(r, kFunctions, "associationFunctions"));
  NPAC_ASSIGN_OR_RETURN(BitString bits, decodeBitString(fn));
  NPAC_ASSIGN_OR_RETURN(ac.functions, AssociationFunctionMask::fromBitString(bits, fn.offset));
  NPAC_ASSIGN_OR_RETURN(Tlv rm, expectField(r, kRecoveryMode, "recoveryMode"));
  NPAC_ASSIGN_OR_RETURN(ac.recoveryMode, decodeBoolean(rm));
  NPAC_ASSIGN_OR_RETURN(Tlv sg, expectField(r, kSignature, "signature"));
  NPAC_ASSIGN_OR_RETURN(BitString sig, decodeBitString(sg));
  if (sig.unused_bits != 0) return badAccessControl(sg.offset, "signature must have 0 unused bits");
  ac.signature = std::move(sig.bytes);
  if (!r.atEnd()) return badAccessControl(r.offset(), "unexpected element after signature");
  return ac;
}

Result<BerReader> enterSequence(std::span<const uint8_t> tlv, const DecodeLimits& limits,
                                BerReader& outer, const char* what,
                                ErrorCode code = ErrorCode::kBindBadAccessControl) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(tlv, limits));
  if (top.tag != kTagSequence) {
    return Status::error(code, top.offset,
                         std::string(what) + " must be a SEQUENCE, got " + top.tag.toString());
  }
  return outer.enter(top);
}

}  // namespace

BitString AssociationFunctionMask::toBitString() const {
  int highest = -1;
  for (int i = 0; i < 32; ++i) {
    if (bits & (1u << i)) highest = i;
  }
  BitString b = BitString::withBits(static_cast<size_t>(highest + 1));
  for (int i = 0; i <= highest; ++i) b.setBit(static_cast<size_t>(i), (bits >> i) & 1u);
  return b;
}

Result<AssociationFunctionMask> AssociationFunctionMask::fromBitString(const BitString& b,
                                                                       size_t offset) {
  AssociationFunctionMask m;
  for (size_t i = 0; i < b.bitCount(); ++i) {
    if (!b.bit(i)) continue;
    if (i >= kAssociationFunctionCount) {
      return badAccessControl(offset, "associationFunctions bit " + std::to_string(i) +
                             " is not a defined function (0..4)");
    }
    m.bits |= 1u << i;
  }
  return m;
}

Status validateAccessControl(const LnpAccessControl& ac) {
  if (ac.systemId.size() != kSystemIdLength || !isValidString(ac.systemId, StringKind::kPrintable)) {
    return badAccessControl(0, "systemId (SPID) must be exactly 4 PrintableString characters, got \"" +
                      ac.systemId + "\"");
  }
  if (static_cast<int32_t>(ac.systemType) < 0 || static_cast<int32_t>(ac.systemType) > 3) {
    return badAccessControl(0, "systemType is not soa, lsms, soa-and-lsms or npac");
  }
  if (ac.userId.empty() || ac.userId.size() > kMaxUserIdLength ||
      !isValidString(ac.userId, StringKind::kVisible)) {
    return badAccessControl(0, "userId must be 1..64 VisibleString characters");
  }
  if (ac.listId < 0 || ac.listId > kMaxKeyNumber) return badAccessControl(0, "listId out of range");
  if (ac.keyId < 0 || ac.keyId > kMaxKeyNumber) return badAccessControl(0, "keyId out of range");
  if (ac.sequenceNumber < 0 || ac.sequenceNumber > kMaxSequenceNumber) {
    return badAccessControl(0, "sequenceNumber out of range");
  }
  if (ac.functions.bits >> kAssociationFunctionCount) {
    return badAccessControl(0, "associationFunctions has a bit beyond the five defined functions");
  }
  if (!ac.departureTime.utc) return badAccessControl(0, "cmipDepartureTime must be UTC");
  return Status::ok();
}

void encodeAccessControl(const LnpAccessControl& ac, BerWriter& w) {
  size_t m = w.beginConstructed(kTagSequence);
  writeSignedFields(w, ac);
  BitString sig;
  sig.bytes = ac.signature;
  w.writeBitString(sig, kSignature);
  w.endConstructed(m);
}

std::vector<uint8_t> encodeAccessControl(const LnpAccessControl& ac) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  encodeAccessControl(ac, w);
  return buf.toVector();
}

Result<LnpAccessControl> decodeAccessControl(std::span<const uint8_t> tlv,
                                             const DecodeLimits& limits) {
  BerReader outer(tlv, limits);
  NPAC_ASSIGN_OR_RETURN(BerReader r, enterSequence(tlv, limits, outer, "LnpAccessControl"));
  return decodeFields(r);
}

std::vector<uint8_t> signedContent(const LnpAccessControl& ac) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  size_t m = w.beginConstructed(kTagSequence);
  writeSignedFields(w, ac);
  w.endConstructed(m);
  return buf.toVector();
}

External toExternal(const LnpAccessControl& ac) {
  External ext;
  ext.direct_reference = oids::kLnpAccessControlSyntax;
  ext.encoding = External::Encoding::kSingleAsn1Type;
  ext.data = encodeAccessControl(ac);
  return ext;
}

Result<LnpAccessControl> accessControlFromExternal(const External& ext,
                                                   const DecodeLimits& limits) {
  if (ext.direct_reference != oids::kLnpAccessControlSyntax) {
    return badAccessControl(0, "accessControl EXTERNAL direct-reference must be " +
                      oids::kLnpAccessControlSyntax.toString() + ", got " +
                      (ext.direct_reference ? ext.direct_reference->toString() : "none"));
  }
  if (ext.encoding != External::Encoding::kSingleAsn1Type) {
    return badAccessControl(0, "accessControl EXTERNAL must use single-ASN1-type encoding");
  }
  return decodeAccessControl(ext.data, limits);
}

Result<LnpAccessControl> accessControlFromUserInfo(const CmipUserInfo& info,
                                                   const DecodeLimits& limits) {
  if (!info.accessControl) return badAccessControl(0, "CMIPUserInfo carries no accessControl");
  return accessControlFromExternal(*info.accessControl, limits);
}

void attachCmipUserInfo(Aare& aare, CmipUserInfo info, const External* aarq_cmip) {
  info.protocolVersion = BitString::withBits(2);
  info.protocolVersion->setBit(kCmipVersion2Bit);
  External outer;
  // X.227 user-information answers in the presentation context the AARQ used for CMIP.
  if (aarq_cmip != nullptr) {
    outer.direct_reference = aarq_cmip->direct_reference;
    outer.indirect_reference = aarq_cmip->indirect_reference;
  }
  if (!outer.direct_reference && !outer.indirect_reference) outer.direct_reference = oids::kCmipAbstractSyntax;
  outer.data = encodeCmipUserInfo(info);
  aare.userInformation.push_back(std::move(outer));
}

void attachNpacAccessControl(Aare& aare, const LnpAccessControl& npac, const External* aarq_cmip) {
  CmipUserInfo info;
  info.accessControl = toExternal(npac);
  attachCmipUserInfo(aare, std::move(info), aarq_cmip);
}

Result<std::optional<LnpAccessControl>> npacAccessControlFrom(const Aare& aare, const DecodeLimits& limits) {
  for (const External& ext : aare.userInformation) {
    Result<CmipUserInfo> info = decodeCmipUserInfo(ext.data, limits);
    if (!info.isOk() || !info->accessControl) continue;  // not a CMIPUserInfo, or no accessControl
    NPAC_ASSIGN_OR_RETURN(LnpAccessControl ac, accessControlFromExternal(*info->accessControl, limits));
    return std::optional<LnpAccessControl>(std::move(ac));
  }
  return std::optional<LnpAccessControl>();
}

OpaqueBer encodeRecoveryRequest(const RecoveryRequest& req) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  if (req.allUnacknowledged) {
    w.writeNull(Tag::context(1));
  } else {
    size_t m = w.beginConstructed(Tag::context(0, true));
    w.writeGeneralizedTime(req.startTime, Tag::context(0));
    w.writeGeneralizedTime(req.stopTime, Tag::context(1));
    w.endConstructed(m);
  }
  return OpaqueBer{buf.toVector()};
}

Result<RecoveryRequest> decodeRecoveryRequest(std::span<const uint8_t> tlv,
                                              const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(tlv, limits));
  RecoveryRequest req;
  if (top.tag == Tag::context(1)) {
    NPAC_RETURN_IF_ERROR(decodeNull(top));
    req.allUnacknowledged = true;
    return req;
  }
  if (top.tag != Tag::context(0, true)) {
    return Status::error(ErrorCode::kCmipBadArgument, top.offset,
                         "RecoveryRequest must be [0] timeRange or [1] allUnacknowledged");
  }
  BerReader outer(tlv, limits);
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(top));
  NPAC_ASSIGN_OR_RETURN(Tlv start, r.expect(Tag::context(0)));
  NPAC_ASSIGN_OR_RETURN(req.startTime, decodeGeneralizedTime(start));
  NPAC_ASSIGN_OR_RETURN(Tlv stop, r.expect(Tag::context(1)));
  NPAC_ASSIGN_OR_RETURN(req.stopTime, decodeGeneralizedTime(stop));
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  if (req.stopTime.toUnixMillis() < req.startTime.toUnixMillis()) {
    return Status::error(ErrorCode::kCmipBadArgument, top.offset,
                         "RecoveryRequest stopTime is before startTime");
  }
  return req;
}

OpaqueBer encodeRecoveryReply(int64_t messageCount) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  size_t m = w.beginConstructed(kTagSequence);
  w.writeInteger(messageCount, Tag::context(0));
  w.endConstructed(m);
  return OpaqueBer{buf.toVector()};
}

Result<int64_t> decodeRecoveryReply(std::span<const uint8_t> tlv, const DecodeLimits& limits) {
  BerReader outer(tlv, limits);
  NPAC_ASSIGN_OR_RETURN(BerReader r, enterSequence(tlv, limits, outer, "RecoveryReply", ErrorCode::kCmipBadArgument));
  NPAC_ASSIGN_OR_RETURN(int64_t n, r.readInteger(Tag::context(0)));
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return n;
}

OpaqueBer encodeHeartbeat(const GeneralizedTime& sentAt) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  size_t m = w.beginConstructed(kTagSequence);
  w.writeGeneralizedTime(sentAt, Tag::context(0));
  w.endConstructed(m);
  return OpaqueBer{buf.toVector()};
}

Result<GeneralizedTime> decodeHeartbeat(std::span<const uint8_t> tlv,
                                        const DecodeLimits& limits) {
  BerReader outer(tlv, limits);
  NPAC_ASSIGN_OR_RETURN(BerReader r, enterSequence(tlv, limits, outer, "Heartbeat", ErrorCode::kCmipBadArgument));
  NPAC_ASSIGN_OR_RETURN(Tlv t, r.expect(Tag::context(0)));
  NPAC_ASSIGN_OR_RETURN(GeneralizedTime g, decodeGeneralizedTime(t));
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return g;
}

}  // namespace npac::cmip
