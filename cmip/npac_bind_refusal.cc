#include "cmip/npac_bind_refusal.h"

#include "cmip/cmip.h"
#include "cmip/npac_bind.h"
#include "cmip/oids.h"

namespace npac::cmip {
namespace {

constexpr Tag kRefusalReason = Tag::context(0);
constexpr Tag kText = Tag::context(1);

Status badRefusal(size_t offset, std::string what) {
  return Status::error(ErrorCode::kBindBadRefusal, offset, std::move(what));
}

// At most `max` octets of `text`, not splitting a UTF-8 sequence.
std::string cutUtf8(const std::string& text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

}  // namespace

std::vector<uint8_t> encodeBindRefusal(const LnpBindRefusal& refusal) {
  std::string reason = refusal.reason.substr(0, kMaxRefusalReason);
  if (reason.empty() || !isValidString(reason, StringKind::kVisible)) reason = "unspecified";
  std::string text = cutUtf8(refusal.text, kMaxRefusalText);
  if (!isValidString(text, StringKind::kUtf8)) text.clear();
  EncodeBuffer buf(0);
  BerWriter w(buf);
  size_t m = w.beginConstructed(kTagSequence);
  w.writeString(reason, kRefusalReason);
  if (!text.empty()) w.writeString(text, kText);
  w.endConstructed(m);
  return buf.toVector();
}

Result<LnpBindRefusal> decodeBindRefusal(std::span<const uint8_t> tlv, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(tlv, limits));
  if (top.tag != kTagSequence)
    return badRefusal(top.offset, "LnpBindRefusal must be a SEQUENCE, got " + top.tag.toString());
  BerReader outer(tlv, limits);
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(top));
  LnpBindRefusal refusal;
  if (r.atEnd() || !r.nextIs(kRefusalReason)) return badRefusal(top.offset, "LnpBindRefusal lacks reason [0]");
  NPAC_ASSIGN_OR_RETURN(Tlv reason, r.next());
  NPAC_ASSIGN_OR_RETURN(refusal.reason, decodeString(reason, StringKind::kVisible, limits));
  if (refusal.reason.empty() || refusal.reason.size() > kMaxRefusalReason) {
    return badRefusal(reason.offset, "LnpBindRefusal reason must be 1.." + std::to_string(kMaxRefusalReason) +
                                  " characters, got " + std::to_string(refusal.reason.size()));
  }
  if (!r.atEnd() && r.nextIs(kText)) {
    NPAC_ASSIGN_OR_RETURN(Tlv text, r.next());
    NPAC_ASSIGN_OR_RETURN(refusal.text, decodeString(text, StringKind::kUtf8, limits));
    if (refusal.text.size() > kMaxRefusalText) {
      return badRefusal(text.offset, "LnpBindRefusal text is over " + std::to_string(kMaxRefusalText) + " octets");
    }
  }
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return refusal;
}

void attachBindRefusal(Aare& aare, const LnpBindRefusal& refusal, const External* aarq_cmip) {
  External inner;
  inner.direct_reference = oids::kLnpBindRefusalSyntax;
  inner.encoding = External::Encoding::kSingleAsn1Type;
  inner.data = encodeBindRefusal(refusal);
  CmipUserInfo info;
  info.userInfo = std::move(inner);
  attachCmipUserInfo(aare, std::move(info), aarq_cmip);
}

Result<std::optional<LnpBindRefusal>> bindRefusalFrom(const Aare& aare, const DecodeLimits& limits) {
  for (const External& ext : aare.userInformation) {
    Result<CmipUserInfo> info = decodeCmipUserInfo(ext.data, limits);
    if (!info.isOk() || !info->userInfo) continue;  // not a CMIPUserInfo, or no userInfo
    const External& inner = *info->userInfo;
    if (inner.direct_reference != oids::kLnpBindRefusalSyntax) continue;
    if (inner.encoding != External::Encoding::kSingleAsn1Type) {
      return badRefusal(0, "LnpBindRefusal EXTERNAL must use single-ASN1-type encoding");
    }
    NPAC_ASSIGN_OR_RETURN(LnpBindRefusal refusal, decodeBindRefusal(inner.data, limits));
    return std::optional<LnpBindRefusal>(std::move(refusal));
  }
  return std::optional<LnpBindRefusal>();
}

}  // namespace npac::cmip
