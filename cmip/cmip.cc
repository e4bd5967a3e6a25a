// CMIP vocabulary codec: identifiers, object instances, attributes, CMIPUserInfo and
// CMIPAbortInfo (X.711 §7.2, §7.4).
#include "cmip/cmip.h"
#include "cmip/cmip_coding.h"

#include <string>

namespace npac::cmip {
namespace {

constexpr Tag kProtocolVersionTag = Tag::context(0);
constexpr Tag kFunctionalUnitsTag = Tag::context(1);
constexpr Tag kAccessControlTag = Tag::context(2, true);
constexpr Tag kUserInfoTag = Tag::context(3, true);
constexpr Tag kAbortSourceTag = Tag::context(0);
constexpr Tag kAbortUserInfoTag = Tag::context(1, true);

void writeRdnSequence(BerWriter& w, const RdnSequence& rdns, Tag tag) {
  size_t seq = w.beginConstructed(tag);
  for (const auto& rdn : rdns) {
    size_t set = w.beginConstructed(kTagSet);
    for (const auto& ava : rdn) {
      size_t a = w.beginConstructed(kTagSequence);
      w.writeOid(ava.id);
      w.writeOpaque(ava.value);
      w.endConstructed(a);
    }
    w.endConstructed(set);
  }
  w.endConstructed(seq);
}

Result<RdnSequence> decodeRdnSequence(const BerReader& parent, const Tlv& tlv) {
  RdnSequence out;
  NPAC_ASSIGN_OR_RETURN(BerReader seq, parent.enter(tlv));
  while (!seq.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv set_tlv, seq.expect(kTagSet));
    NPAC_ASSIGN_OR_RETURN(BerReader set, seq.enter(set_tlv));
    RelativeDistinguishedName rdn;
    while (!set.atEnd()) {
      NPAC_ASSIGN_OR_RETURN(Tlv ava_tlv, set.expect(kTagSequence));
      NPAC_ASSIGN_OR_RETURN(BerReader a, set.enter(ava_tlv));
      Ava ava;
      NPAC_ASSIGN_OR_RETURN(ava.id, a.readOid());
      NPAC_ASSIGN_OR_RETURN(Tlv value, a.next());
      NPAC_ASSIGN_OR_RETURN(ava.value, decodeOpaque(value));
      NPAC_RETURN_IF_ERROR(a.expectEnd());
      rdn.push_back(std::move(ava));
    }
    out.push_back(std::move(rdn));
  }
  return out;
}

}  // namespace

const char* cmipOpcodeName(CmipOpcode op) {
  static constexpr const char* kNames[] = {
      "m-EventReport", "m-EventReport-Confirmed", "m-Linked-Reply", "m-Get",
      "m-Set",         "m-Set-Confirmed",         "m-Action",       "m-Action-Confirmed",
      "m-Create",      "m-Delete",                "m-CancelGet"};
  int32_t i = static_cast<int32_t>(op);
  return isKnownCmipOpcode(i) ? kNames[i] : "unknown";
}

bool isKnownCmipOpcode(int32_t code) { return code >= 0 && code <= kMaxCmipOpcode; }

bool isConfirmedCmipOpcode(CmipOpcode op) {
  switch (op) {
    case CmipOpcode::kEventReport:
    case CmipOpcode::kSet:
    case CmipOpcode::kAction:
    case CmipOpcode::kLinkedReply:
      return false;
    default:
      return true;
  }
}

const char* cmipErrorName(CmipError e) {
  static constexpr const char* kNames[] = {
      "noSuchObjectClass",     "noSuchObjectInstance",  "accessDenied",
      "syncNotSupported",      "invalidFilter",         "noSuchAttribute",
      "invalidAttributeValue", "getListError",          "setListError",
      "noSuchAction",          "processingFailure",     "duplicateManagedObjectInstance",
      "noSuchReferenceObject", "noSuchEventType",       "noSuchArgument",
      "invalidArgumentValue",  "invalidScope",          "invalidObjectInstance",
      "missingAttributeValue", "classInstanceConflict", "complexityLimitation",
      "mistypedOperation",     "noSuchInvokeId",        "operationCancelled"};
  int32_t i = static_cast<int32_t>(e);
  return isKnownCmipError(i) ? kNames[i] : "unknown";
}

bool isKnownCmipError(int32_t code) { return code >= 0 && code <= kMaxCmipError; }

void writeId(BerWriter& w, const GlobalOrLocal& id, IdTags tags) {
  if (id.isGlobal()) {
    w.writeOid(id.oid(), Tag::context(tags.global));
  } else {
    w.writeInteger(id.localValue(), Tag::context(tags.local));
  }
}

bool nextIsId(const BerReader& r, IdTags tags) {
  return r.nextIs(Tag::context(tags.global)) || r.nextIs(Tag::context(tags.local));
}

Result<GlobalOrLocal> readId(BerReader& r, IdTags tags, const char* what) {
  if (r.nextIs(Tag::context(tags.global))) {
    NPAC_ASSIGN_OR_RETURN(Oid oid, r.readOid(Tag::context(tags.global)));
    return GlobalOrLocal::global(std::move(oid));
  }
  if (r.nextIs(Tag::context(tags.local))) {
    NPAC_ASSIGN_OR_RETURN(int64_t v, r.readInteger(Tag::context(tags.local)));
    return GlobalOrLocal::local(v);
  }
  if (r.atEnd()) {
    return Status::error(ErrorCode::kBerMissingElement, r.offset(),
                         std::string(what) + " is missing");
  }
  return Status::error(ErrorCode::kBerUnexpectedTag, r.offset(),
                       std::string(what) + " must be [" + std::to_string(tags.global) +
                           "] globalForm or [" + std::to_string(tags.local) + "] localForm");
}

ObjectInstance npacSmsInstance() {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  w.writeString(kNpacSmsCommonName, kTagPrintableString);
  ObjectInstance inst;
  inst.form = ObjectInstance::Form::kDistinguishedName;
  inst.rdns = {{Ava{Oid{2, 5, 4, 3}, OpaqueBer{buf.toVector()}}}};
  return inst;
}

void writeObjectInstance(BerWriter& w, const ObjectInstance& inst) {
  uint32_t tag = static_cast<uint32_t>(inst.form);
  if (inst.form == ObjectInstance::Form::kNonSpecific) {
    w.writeOctetString(inst.nonSpecific, Tag::context(tag));
  } else {
    writeRdnSequence(w, inst.rdns, Tag::context(tag, true));
  }
}

bool nextIsObjectInstance(const BerReader& r) {
  return r.nextIs(Tag::context(2, true)) || r.nextIs(Tag::context(3)) ||
         r.nextIs(Tag::context(4, true));
}

Result<ObjectInstance> readObjectInstance(BerReader& r) {
  ObjectInstance inst;
  if (r.atEnd()) {
    return Status::error(ErrorCode::kBerMissingElement, r.offset(),
                         "managed object instance is missing");
  }
  if (!nextIsObjectInstance(r)) {
    NPAC_ASSIGN_OR_RETURN(Tlv t, r.peek());
    return Status::error(ErrorCode::kBerUnexpectedTag, t.offset,
                         "ObjectInstance must be [2] distinguishedName, [3] nonSpecificForm "
                         "or [4] localDistinguishedName, got " + t.tag.toString());
  }
  NPAC_ASSIGN_OR_RETURN(Tlv t, r.next());
  inst.form = static_cast<ObjectInstance::Form>(t.tag.number);
  if (inst.form == ObjectInstance::Form::kNonSpecific) {
    NPAC_ASSIGN_OR_RETURN(Bytes v, decodeOctetStringView(t));
    inst.nonSpecific.assign(v.begin(), v.end());
  } else {
    NPAC_ASSIGN_OR_RETURN(inst.rdns, decodeRdnSequence(r, t));
  }
  return inst;
}

void writeAttribute(BerWriter& w, const Attribute& a, Tag tag) {
  size_t m = w.beginConstructed(tag);
  writeId(w, a.id, kAttributeIdTags);
  w.writeOpaque(a.value);
  w.endConstructed(m);
}

Result<Attribute> decodeAttribute(const BerReader& parent, const Tlv& tlv) {
  NPAC_ASSIGN_OR_RETURN(BerReader in, parent.enter(tlv));
  Attribute a;
  NPAC_ASSIGN_OR_RETURN(a.id, readId(in, kAttributeIdTags, "attribute id"));
  if (in.atEnd()) return badArgument(in.offset(), "attribute has no value");
  NPAC_ASSIGN_OR_RETURN(Tlv v, in.next());
  NPAC_ASSIGN_OR_RETURN(a.value, decodeOpaque(v));
  NPAC_RETURN_IF_ERROR(in.expectEnd());
  return a;
}

void writeAttributeList(BerWriter& w, const std::vector<Attribute>& list, Tag tag) {
  size_t m = w.beginConstructed(tag);
  for (const auto& a : list) writeAttribute(w, a);
  w.endConstructed(m);
}

Result<std::vector<Attribute>> readAttributeList(BerReader& r, Tag tag) {
  NPAC_ASSIGN_OR_RETURN(Tlv set, r.expect(tag));
  NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(set));
  std::vector<Attribute> out;
  while (!in.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv t, in.expect(kTagSequence));
    NPAC_ASSIGN_OR_RETURN(Attribute a, decodeAttribute(in, t));
    out.push_back(std::move(a));
  }
  return out;
}

bool CmipUserInfo::supportsVersion2() const {
  return protocolVersion && protocolVersion->bitCount() > kCmipVersion2Bit &&
         protocolVersion->bit(kCmipVersion2Bit);
}

void encodeCmipUserInfo(const CmipUserInfo& info, BerWriter& w) {
  size_t m = w.beginConstructed(kTagSequence);
  if (info.protocolVersion) w.writeBitString(*info.protocolVersion, kProtocolVersionTag);
  if (info.functionalUnits) w.writeBitString(*info.functionalUnits, kFunctionalUnitsTag);
  if (info.accessControl) writeExplicitExternal(w, kAccessControlTag, *info.accessControl);
  if (info.userInfo) writeExplicitExternal(w, kUserInfoTag, *info.userInfo);
  w.endConstructed(m);
}

std::vector<uint8_t> encodeCmipUserInfo(const CmipUserInfo& info) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  encodeCmipUserInfo(info, w);
  return buf.toVector();
}

Result<CmipUserInfo> decodeCmipUserInfo(std::span<const uint8_t> in,
                                        const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(in, limits));
  if (top.tag != kTagSequence) {
    return Status::error(ErrorCode::kAcseBadUserInformation, top.offset,
                         "CMIPUserInfo must be a SEQUENCE, got " + top.tag.toString());
  }
  BerReader outer(in, limits);
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(top));
  CmipUserInfo info;
  NPAC_ASSIGN_OR_RETURN(auto pv, r.optional(kProtocolVersionTag));
  if (pv) {
    NPAC_ASSIGN_OR_RETURN(info.protocolVersion, decodeBitString(*pv));
  }
  NPAC_ASSIGN_OR_RETURN(auto fu, r.optional(kFunctionalUnitsTag));
  if (fu) {
    NPAC_ASSIGN_OR_RETURN(info.functionalUnits, decodeBitString(*fu));
  }
  NPAC_ASSIGN_OR_RETURN(auto ac, r.optional(kAccessControlTag));
  if (ac) {
    NPAC_ASSIGN_OR_RETURN(info.accessControl, readExplicitExternal(r, *ac));
  }
  NPAC_ASSIGN_OR_RETURN(auto ui, r.optional(kUserInfoTag));
  if (ui) {
    NPAC_ASSIGN_OR_RETURN(info.userInfo, readExplicitExternal(r, *ui));
  }
  if (!r.atEnd()) {
    return Status::error(ErrorCode::kAcseBadUserInformation, r.offset(),
                         "unexpected element in CMIPUserInfo");
  }
  return info;
}

void encodeCmipAbortInfo(const CmipAbortInfo& info, BerWriter& w) {
  size_t m = w.beginConstructed(kTagSequence);
  w.writeEnumerated(static_cast<int64_t>(info.source), kAbortSourceTag);
  if (info.userInfo) writeExplicitExternal(w, kAbortUserInfoTag, *info.userInfo);
  w.endConstructed(m);
}

std::vector<uint8_t> encodeCmipAbortInfo(const CmipAbortInfo& info) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  encodeCmipAbortInfo(info, w);
  return buf.toVector();
}

Result<CmipAbortInfo> decodeCmipAbortInfo(std::span<const uint8_t> in,
                                          const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(in, limits));
  BerReader outer(in, limits);
  if (top.tag != kTagSequence) {
    return Status::error(ErrorCode::kAcseBadUserInformation, top.offset,
                         "CMIPAbortInfo must be a SEQUENCE, got " + top.tag.toString());
  }
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(top));
  CmipAbortInfo info;
  size_t at = r.offset();
  NPAC_ASSIGN_OR_RETURN(int64_t src, r.readEnumerated(kAbortSourceTag));
  if (src != 0 && src != 1) {
    return Status::error(ErrorCode::kAcseBadUserInformation, at,
                         "CMIPAbortSource must be 0 or 1, got " + std::to_string(src));
  }
  info.source = static_cast<CmipAbortSource>(src);
  NPAC_ASSIGN_OR_RETURN(auto ui, r.optional(kAbortUserInfoTag));
  if (ui) {
    NPAC_ASSIGN_OR_RETURN(info.userInfo, readExplicitExternal(r, *ui));
  }
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return info;
}

}  // namespace npac::cmip
