// ACSE APDU codec (X.227 ACSE-1; explicit tagging unless IMPLICIT is written).
#include "cmip/acse.h"

#include <string>

#include "cmip/oids.h"

namespace npac::cmip {
namespace {

// X.227 §7.1 APDU tags: [APPLICATION n] IMPLICIT SEQUENCE.
constexpr uint32_t kAarqTag = 0, kAareTag = 1, kRlrqTag = 2, kRlreTag = 3, kAbrtTag = 4;
constexpr Tag kProtocolVersion = Tag::context(0);          // [0] IMPLICIT BIT STRING
constexpr Tag kContextName = Tag::context(1, true);        // [1] Application-context-name
constexpr Tag kUserInformation = Tag::context(30, true);   // [30] IMPLICIT Association-info
// AARQ: called [2]/[3], calling [6]/[7]. AARE: result [2], diagnostic [3], responding [4]/[5].
constexpr uint32_t kCalledApTitle = 2, kCalledAeQualifier = 3;
constexpr uint32_t kCallingApTitle = 6, kCallingAeQualifier = 7;
constexpr Tag kResult = Tag::context(2, true);
constexpr Tag kResultSourceDiagnostic = Tag::context(3, true);
constexpr uint32_t kRespondingApTitle = 4, kRespondingAeQualifier = 5;
// RLRQ/RLRE reason [0] IMPLICIT; ABRT source [0] IMPLICIT, diagnostic [1] IMPLICIT.
constexpr Tag kReason = Tag::context(0);
constexpr Tag kAbortSource = Tag::context(0);
constexpr Tag kAbortDiagnostic = Tag::context(1);
constexpr size_t kVersion1Bit = 0;

Status badAcse(size_t offset, std::string what) {
  return Status::error(ErrorCode::kAcseBadApdu, offset, std::move(what));
}

// Writes [tag] { inner } where inner is written by f.
template <typename F>
void explicitly(BerWriter& w, uint32_t tag, F&& f) {
  size_t m = w.beginConstructed(Tag::context(tag, true));
  f();
  w.endConstructed(m);
}

void writeAeTitle(BerWriter& w, const AeTitle& t, uint32_t apTag, uint32_t aeTag) {
  if (t.apTitle) explicitly(w, apTag, [&] { w.writeOid(*t.apTitle); });
  if (t.aeQualifier) explicitly(w, aeTag, [&] { w.writeInteger(*t.aeQualifier); });
}

void writeUserInformation(BerWriter& w, const std::vector<External>& info) {
  if (info.empty()) return;
  size_t m = w.beginConstructed(kUserInformation);
  for (const auto& ext : info) w.writeExternal(ext);
  w.endConstructed(m);
}

// Reads the single element inside an explicit [n] wrapper.
Result<Tlv> unwrap(const BerReader& r, const Tlv& wrapper, BerReader& inner) {
  NPAC_ASSIGN_OR_RETURN(inner, r.enter(wrapper));
  NPAC_ASSIGN_OR_RETURN(Tlv t, inner.next());
  NPAC_RETURN_IF_ERROR(inner.expectEnd());
  return t;
}

Status readAeTitlePart(BerReader& r, uint32_t apTag, uint32_t aeTag, AeTitle& out) {
  NPAC_ASSIGN_OR_RETURN(auto ap, r.optional(Tag::context(apTag, true)));
  if (ap) {
    BerReader in(Bytes{});
    NPAC_ASSIGN_OR_RETURN(Tlv t, unwrap(r, *ap, in));
    if (t.tag != kTagOid) {
      return badAcse(t.offset, "only AP-title form 2 (OBJECT IDENTIFIER) is supported, got " +
                               t.tag.toString());
    }
    NPAC_ASSIGN_OR_RETURN(out.apTitle, decodeOid(t));
  }
  NPAC_ASSIGN_OR_RETURN(auto ae, r.optional(Tag::context(aeTag, true)));
  if (ae) {
    BerReader in(Bytes{});
    NPAC_ASSIGN_OR_RETURN(Tlv t, unwrap(r, *ae, in));
    if (t.tag != kTagInteger) {
      return badAcse(t.offset, "only AE-qualifier form 2 (INTEGER) is supported, got " +
                               t.tag.toString());
    }
    NPAC_ASSIGN_OR_RETURN(out.aeQualifier, decodeInteger(t));
  }
  return Status::ok();
}

// Skips optional components npacd does not use (invocation identifiers, ACSE
// requirements, authentication, context lists, implementation data) up to [30].
Status skipUnusedComponents(BerReader& r) {
  while (!r.atEnd() && !r.nextIs(kUserInformation)) {
    NPAC_ASSIGN_OR_RETURN(Tlv t, r.next());
    if (t.tag.cls != TagClass::kContextSpecific) {
      return badAcse(t.offset, "unexpected component " + t.tag.toString());
    }
  }
  return Status::ok();
}

Result<std::vector<External>> readUserInformation(BerReader& r) {
  std::vector<External> out;
  NPAC_ASSIGN_OR_RETURN(auto ui, r.optional(kUserInformation));
  if (!ui) return out;
  NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(*ui));
  while (!in.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv t, in.next());
    if (t.tag != kTagExternal) {
      return Status::error(ErrorCode::kAcseBadUserInformation, t.offset,
                           "user-information holds " + t.tag.toString() + ", not EXTERNAL");
    }
    NPAC_ASSIGN_OR_RETURN(External ext, decodeExternal(t, r.limits()));
    out.push_back(std::move(ext));
  }
  return out;
}

Result<std::optional<BitString>> readProtocolVersion(BerReader& r) {
  NPAC_ASSIGN_OR_RETURN(auto pv, r.optional(kProtocolVersion));
  if (!pv) return std::optional<BitString>{};
  NPAC_ASSIGN_OR_RETURN(BitString bits, decodeBitString(*pv));
  return std::optional<BitString>{std::move(bits)};
}

Result<Oid> readContextName(BerReader& r, const char* apdu) {
  if (!r.nextIs(kContextName)) {
    return badAcse(r.offset(), std::string(apdu) + " lacks the mandatory aSO-context-name [1]");
  }
  NPAC_ASSIGN_OR_RETURN(Tlv w, r.next());
  BerReader in(Bytes{});
  NPAC_ASSIGN_OR_RETURN(Tlv t, unwrap(r, w, in));
  if (t.tag != kTagOid) return badAcse(t.offset, "aSO-context-name must be an OBJECT IDENTIFIER");
  return decodeOid(t);
}

Result<AcseApdu> decodeAarq(BerReader& r) {
  Aarq a;
  NPAC_ASSIGN_OR_RETURN(a.protocolVersion, readProtocolVersion(r));
  NPAC_ASSIGN_OR_RETURN(a.applicationContext, readContextName(r, "AARQ"));
  NPAC_RETURN_IF_ERROR(readAeTitlePart(r, kCalledApTitle, kCalledAeQualifier, a.called));
  // [4], [5]: called invocation identifiers (unused).
  while (r.nextIs(Tag::context(4, true)) || r.nextIs(Tag::context(5, true))) {
    NPAC_RETURN_IF_ERROR(r.next());
  }
  NPAC_RETURN_IF_ERROR(readAeTitlePart(r, kCallingApTitle, kCallingAeQualifier, a.calling));
  NPAC_RETURN_IF_ERROR(skipUnusedComponents(r));
  NPAC_ASSIGN_OR_RETURN(a.userInformation, readUserInformation(r));
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return AcseApdu{std::move(a)};
}

Result<AcseApdu> decodeAare(BerReader& r) {
  Aare a;
  NPAC_ASSIGN_OR_RETURN(a.protocolVersion, readProtocolVersion(r));
  NPAC_ASSIGN_OR_RETURN(a.applicationContext, readContextName(r, "AARE"));
  if (!r.nextIs(kResult)) return badAcse(r.offset(), "AARE lacks the mandatory result [2]");
  NPAC_ASSIGN_OR_RETURN(Tlv rw, r.next());
  BerReader in(Bytes{});
  NPAC_ASSIGN_OR_RETURN(Tlv rt, unwrap(r, rw, in));
  NPAC_ASSIGN_OR_RETURN(int64_t result, decodeInteger(rt));
  if (result < 0 || result > 2) {
    return badAcse(rt.offset, "Associate-result " + std::to_string(result) + " is not 0..2");
  }
  a.result = static_cast<AssociateResult>(result);
  if (!r.nextIs(kResultSourceDiagnostic)) {
    return badAcse(r.offset(), "AARE lacks the mandatory result-source-diagnostic [3]");
  }
  NPAC_ASSIGN_OR_RETURN(Tlv dw, r.next());
  NPAC_ASSIGN_OR_RETURN(Tlv choice, unwrap(r, dw, in));
  if (choice.tag != Tag::context(1, true) && choice.tag != Tag::context(2, true)) {
    return badAcse(choice.offset, "result-source-diagnostic must be [1] acse-service-user or "
                              "[2] acse-service-provider, got " + choice.tag.toString());
  }
  BerReader in2(Bytes{});
  NPAC_ASSIGN_OR_RETURN(Tlv dv, unwrap(in, choice, in2));
  NPAC_ASSIGN_OR_RETURN(int64_t diag, decodeInteger(dv));
  a.diagnostic.source = static_cast<DiagnosticSource>(choice.tag.number);
  int64_t max = a.diagnostic.source == DiagnosticSource::kServiceUser ? user_diagnostic::kMax
                                                                      : provider_diagnostic::kMax;
  if (diag < 0 || diag > max) {
    return badAcse(dv.offset, "diagnostic value " + std::to_string(diag) + " is out of range");
  }
  a.diagnostic.value = static_cast<int32_t>(diag);
  NPAC_RETURN_IF_ERROR(
      readAeTitlePart(r, kRespondingApTitle, kRespondingAeQualifier, a.responding));
  NPAC_RETURN_IF_ERROR(skipUnusedComponents(r));
  NPAC_ASSIGN_OR_RETURN(a.userInformation, readUserInformation(r));
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return AcseApdu{std::move(a)};
}

template <typename Apdu, typename Reason>
Result<AcseApdu> decodeRelease(BerReader& r) {
  Apdu a;
  if (r.nextIs(kReason)) {
    size_t at = r.offset();
    NPAC_ASSIGN_OR_RETURN(int64_t v, r.readInteger(kReason));
    if (v != 0 && v != 1 && v != 30) {
      return badAcse(at, "release reason " + std::to_string(v) + " is not 0, 1 or 30");
    }
    a.reason = static_cast<Reason>(v);
  }
  NPAC_RETURN_IF_ERROR(skipUnusedComponents(r));
  NPAC_ASSIGN_OR_RETURN(a.userInformation, readUserInformation(r));
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return AcseApdu{std::move(a)};
}

Result<AcseApdu> decodeAbrt(BerReader& r) {
  Abrt a;
  size_t at = r.offset();
  if (!r.nextIs(kAbortSource)) return badAcse(at, "ABRT lacks the mandatory abort-source [0]");
  NPAC_ASSIGN_OR_RETURN(int64_t src, r.readInteger(kAbortSource));
  if (src != 0 && src != 1) return badAcse(at, "abort-source must be 0 or 1");
  a.source = static_cast<AbortSource>(src);
  if (r.nextIs(kAbortDiagnostic)) {
    at = r.offset();
    NPAC_ASSIGN_OR_RETURN(int64_t d, r.readEnumerated(kAbortDiagnostic));
    if (d < 1 || d > 6) return badAcse(at, "abort-diagnostic " + std::to_string(d) + " is not 1..6");
    a.diagnostic = static_cast<AbortDiagnostic>(d);
  }
  NPAC_RETURN_IF_ERROR(skipUnusedComponents(r));
  NPAC_ASSIGN_OR_RETURN(a.userInformation, readUserInformation(r));
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return AcseApdu{std::move(a)};
}

}  // namespace

const char* acseApduName(const AcseApdu& apdu) {
  static constexpr const char* kNames[] = {"aarq", "aare", "rlrq", "rlre", "abrt"};
  return kNames[apdu.index()];
}

void encodeAcseApdu(const AcseApdu& apdu, BerWriter& w) {
  if (const auto* a = std::get_if<Aarq>(&apdu)) {
    size_t m = w.beginConstructed(Tag::application(kAarqTag, true));
    if (a->protocolVersion) w.writeBitString(*a->protocolVersion, kProtocolVersion);
    explicitly(w, 1, [&] { w.writeOid(a->applicationContext); });
    writeAeTitle(w, a->called, kCalledApTitle, kCalledAeQualifier);
    writeAeTitle(w, a->calling, kCallingApTitle, kCallingAeQualifier);
    writeUserInformation(w, a->userInformation);
    w.endConstructed(m);
  } else if (const auto* a = std::get_if<Aare>(&apdu)) {
    size_t m = w.beginConstructed(Tag::application(kAareTag, true));
    if (a->protocolVersion) w.writeBitString(*a->protocolVersion, kProtocolVersion);
    explicitly(w, 1, [&] { w.writeOid(a->applicationContext); });
    explicitly(w, 2, [&] { w.writeInteger(static_cast<int64_t>(a->result)); });
    explicitly(w, 3, [&] {
      explicitly(w, static_cast<uint32_t>(a->diagnostic.source),
                 [&] { w.writeInteger(a->diagnostic.value); });
    });
    writeAeTitle(w, a->responding, kRespondingApTitle, kRespondingAeQualifier);
    writeUserInformation(w, a->userInformation);
    w.endConstructed(m);
  } else if (const auto* a = std::get_if<Rlrq>(&apdu)) {
    size_t m = w.beginConstructed(Tag::application(kRlrqTag, true));
    if (a->reason) w.writeInteger(static_cast<int64_t>(*a->reason), kReason);
    writeUserInformation(w, a->userInformation);
    w.endConstructed(m);
  } else if (const auto* a = std::get_if<Rlre>(&apdu)) {
    size_t m = w.beginConstructed(Tag::application(kRlreTag, true));
    if (a->reason) w.writeInteger(static_cast<int64_t>(*a->reason), kReason);
    writeUserInformation(w, a->userInformation);
    w.endConstructed(m);
  } else {
    const auto& b = std::get<Abrt>(apdu);
    size_t m = w.beginConstructed(Tag::application(kAbrtTag, true));
    w.writeInteger(static_cast<int64_t>(b.source), kAbortSource);
    if (b.diagnostic) w.writeEnumerated(static_cast<int64_t>(*b.diagnostic), kAbortDiagnostic);
    writeUserInformation(w, b.userInformation);
    w.endConstructed(m);
  }
}

std::vector<uint8_t> encodeAcseApdu(const AcseApdu& apdu) {
  EncodeBuffer buf(0);
  BerWriter w(buf);
  encodeAcseApdu(apdu, w);
  return buf.toVector();
}

Result<AcseApdu> decodeAcseApdu(std::span<const uint8_t> in, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv top, decodeSingleTlv(in, limits));
  if (top.tag.cls != TagClass::kApplication || !top.tag.constructed || top.tag.number > kAbrtTag) {
    return badAcse(top.offset, "not an ACSE APDU ([APPLICATION 0..4] constructed): " +
                               top.tag.toString());
  }
  BerReader outer(in, limits);
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(top));
  switch (top.tag.number) {
    case kAarqTag: return decodeAarq(r);
    case kAareTag: return decodeAare(r);
    case kRlrqTag: return decodeRelease<Rlrq, ReleaseRequestReason>(r);
    case kRlreTag: return decodeRelease<Rlre, ReleaseResponseReason>(r);
    default: return decodeAbrt(r);
  }
}

std::optional<SourceDiagnostic> checkAarq(const Aarq& aarq) {
  if (aarq.protocolVersion && !(aarq.protocolVersion->bitCount() > kVersion1Bit &&
                                aarq.protocolVersion->bit(kVersion1Bit))) {
    return SourceDiagnostic{DiagnosticSource::kServiceProvider,
                            provider_diagnostic::kNoCommonAcseVersion};
  }
  if (aarq.applicationContext != oids::kSystemsManagementContext) {
    return SourceDiagnostic{DiagnosticSource::kServiceUser,
                            user_diagnostic::kApplicationContextNameNotSupported};
  }
  return std::nullopt;
}

Status validateAarq(const Aarq& aarq) {
  auto d = checkAarq(aarq);
  if (!d) return Status::ok();
  if (d->source == DiagnosticSource::kServiceProvider) {
    return badAcse(0, "AARQ protocol-version does not include version1");
  }
  return Status::error(ErrorCode::kAcseUnknownApplicationContext, 0,
                       "application context " + aarq.applicationContext.toString() +
                           " is not systems-management 2.9.0.0.2");
}

Aare refusalFor(const Aarq& aarq, SourceDiagnostic diagnostic, AssociateResult result) {
  Aare a;
  a.applicationContext = aarq.applicationContext;
  a.result = result == AssociateResult::kAccepted ? AssociateResult::kRejectedPermanent : result;
  a.diagnostic = diagnostic;
  return a;
}

const External* findCmipUserInfo(const std::vector<External>& userInformation,
                                 std::optional<int64_t> cmipContextId) {
  for (const auto& ext : userInformation) {
    if (cmipContextId && ext.indirect_reference == cmipContextId) return &ext;
    if (ext.direct_reference == oids::kCmipAbstractSyntax) return &ext;
  }
  return nullptr;
}

}  // namespace npac::cmip
