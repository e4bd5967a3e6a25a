#include "cmip/presentation.h"

#include <algorithm>
#include <string>

#include "cmip/oids.h"

namespace npac::cmip::presentation {
namespace {

// Tags of X.226 §8.2 (ISO 8823 ASN.1 module).
constexpr Tag kTagModeSelector = Tag::context(0, true);       // [0] IMPLICIT SET
constexpr Tag kTagModeValue = Tag::context(0);                // [0] IMPLICIT INTEGER
constexpr Tag kTagNormalModeParameters = Tag::context(2, true);
constexpr Tag kTagProtocolVersion = Tag::context(0);          // [0] IMPLICIT BIT STRING
constexpr Tag kTagCallingSelector = Tag::context(1);
constexpr Tag kTagCalledSelector = Tag::context(2);
constexpr Tag kTagRespondingSelector = Tag::context(3);
constexpr Tag kTagContextDefinitionList = Tag::context(4, true);
constexpr Tag kTagContextResultList = Tag::context(5, true);
constexpr Tag kTagCprProviderReason = Tag::context(10);
constexpr Tag kTagResult = Tag::context(0);                   // in Result-list items
constexpr Tag kTagResultTransferSyntax = Tag::context(1);
constexpr Tag kTagResultProviderReason = Tag::context(2);
constexpr Tag kTagAruNormalMode = Tag::context(0, true);      // ARU [0] IMPLICIT SEQUENCE
constexpr Tag kTagAruContextList = Tag::context(0, true);
constexpr Tag kTagArpReason = Tag::context(0);
constexpr Tag kTagArpEvent = Tag::context(1);
constexpr Tag kTagSimplyEncodedData = Tag::application(0);
constexpr Tag kTagFullyEncodedData = Tag::application(1, true);
constexpr Tag kTagSingleAsn1Type = Tag::context(0, true);
constexpr Tag kTagOctetAligned = Tag::context(1);
constexpr uint8_t kVersion1Bit = 0x80;  // Protocol-version { version-1 (0) }

Status bad(size_t off, std::string m) { return Status::error(ErrorCode::kPresentationBadPpdu, off, std::move(m)); }

// Maps BER errors to presentation errors while keeping the detail.
Status asPpduError(const Status& s) {
  if (s.isOk() || s.code() == ErrorCode::kBerDepthExceeded || s.code() == ErrorCode::kBerPduTooLarge) return s;
  return bad(s.offset(), s.toString());
}

Result<std::vector<uint8_t>> selector(const Tlv& t) {
  NPAC_ASSIGN_OR_RETURN(Bytes v, decodeOctetStringView(t));
  return std::vector<uint8_t>(v.begin(), v.end());
}

Status decodePdv(BerReader& outer, const Tlv& item, UserData& out) {
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(item));
  Pdv pdv;
  if (r.nextIs(kTagOid)) {
    NPAC_ASSIGN_OR_RETURN(pdv.transfer_syntax, r.readOid());
  }
  NPAC_ASSIGN_OR_RETURN(pdv.context_id, r.readInteger());
  NPAC_ASSIGN_OR_RETURN(Tlv v, r.next());
  if (v.tag == kTagSingleAsn1Type) {
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(v));
    NPAC_ASSIGN_OR_RETURN(Tlv apdu, in.next());
    NPAC_RETURN_IF_ERROR(in.expectEnd());
    pdv.value = apdu.encoded;
  } else if (v.tag == kTagOctetAligned) {
    pdv.value = v.content;
  } else {
    return bad(v.offset, "presentation-data-values " + v.tag.toString() + " not supported (single-ASN1-type or octet-aligned)");
  }
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  out.push_back(pdv);
  return Status::ok();
}

Status decodeUserDataTlv(BerReader& outer, const Tlv& t, UserData& out) {
  if (t.tag == kTagSimplyEncodedData) return bad(t.offset, "simply-encoded-data is not used in normal mode with contexts (X.226 §8.4.1)");
  if (!(t.tag == kTagFullyEncodedData)) return bad(t.offset, "expected User-data [APPLICATION 1], found " + t.tag.toString());
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(t));
  if (r.atEnd()) return bad(t.offset, "fully-encoded-data needs at least one PDV-list");
  while (!r.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv item, r.expect(kTagSequence));
    NPAC_RETURN_IF_ERROR(decodePdv(r, item, out));
  }
  return Status::ok();
}

Result<bool> decodeVersion(const Tlv& t) {
  NPAC_ASSIGN_OR_RETURN(BitString b, decodeBitString(t));
  return b.bit(0);
}

Status decodeResultList(BerReader& outer, const Tlv& t, std::vector<ContextResult>& out) {
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(t));
  while (!r.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv item, r.expect(kTagSequence));
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(item));
    ContextResult cr;
    NPAC_ASSIGN_OR_RETURN(cr.result, in.readInteger(kTagResult));
    if (in.nextIs(kTagResultTransferSyntax)) {
      NPAC_ASSIGN_OR_RETURN(cr.transfer_syntax, in.readOid(kTagResultTransferSyntax));
    }
    if (in.nextIs(kTagResultProviderReason)) {
      NPAC_ASSIGN_OR_RETURN(cr.provider_reason, in.readInteger(kTagResultProviderReason));
    }
    NPAC_RETURN_IF_ERROR(in.expectEnd());
    out.push_back(std::move(cr));
  }
  return Status::ok();
}

Status decodeDefinitionList(BerReader& outer, const Tlv& t, std::vector<ContextProposal>& out) {
  NPAC_ASSIGN_OR_RETURN(BerReader r, outer.enter(t));
  while (!r.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv item, r.expect(kTagSequence));
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(item));
    ContextProposal p;
    NPAC_ASSIGN_OR_RETURN(p.id, in.readInteger());
    NPAC_ASSIGN_OR_RETURN(p.abstract_syntax, in.readOid());
    NPAC_ASSIGN_OR_RETURN(Tlv list, in.expect(kTagSequence));
    NPAC_ASSIGN_OR_RETURN(BerReader ts, in.enter(list));
    while (!ts.atEnd()) {
      NPAC_ASSIGN_OR_RETURN(Oid o, ts.readOid());
      p.transfer_syntaxes.push_back(std::move(o));
    }
    NPAC_RETURN_IF_ERROR(in.expectEnd());
    for (const ContextProposal& q : out)
      if (q.id == p.id) return bad(item.offset, "presentation context identifier " + std::to_string(p.id) + " proposed twice");
    out.push_back(std::move(p));
  }
  return Status::ok();
}

// The single top-level TLV of a PPDU.
Result<Tlv> topLevel(Bytes ppdu, const DecodeLimits& limits) {
  Result<Tlv> t = decodeSingleTlv(ppdu, limits);
  if (!t.isOk()) return asPpduError(t.status());
  return t;
}

// ---- encoding helpers ----
void writeVersion(BerWriter& w) {
  w.writeBitString(BitString{{kVersion1Bit}, 7}, kTagProtocolVersion);
}

void writeResults(BerWriter& w, const std::vector<ContextResult>& results) {
  if (results.empty()) return;
  const size_t list = w.beginConstructed(kTagContextResultList);
  for (const ContextResult& r : results) {
    const size_t item = w.beginConstructed(kTagSequence);
    w.writeInteger(r.result, kTagResult);
    if (r.transfer_syntax) w.writeOid(*r.transfer_syntax, kTagResultTransferSyntax);
    if (r.provider_reason) w.writeInteger(*r.provider_reason, kTagResultProviderReason);
    w.endConstructed(item);
  }
  w.endConstructed(list);
}

// Wraps `buf` (front fields already prepended) as [tag] around everything.
void wrap(EncodeBuffer& buf, Tag tag) { prependTlvHeader(buf, tag, buf.size()); }

void prependFront(EncodeBuffer& buf, const EncodeBuffer& front) { buf.prepend(front.view()); }

const uint8_t kModeSelectorNormal[] = {0xA0, 0x03, 0x80, 0x01, 0x01};  // [0] { [0] 1 }

}  // namespace

Result<UserData> decodeUserData(Bytes ppdu, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, topLevel(ppdu, limits));
  BerReader top(ppdu, limits);
  UserData ud;
  Status s = decodeUserDataTlv(top, t, ud);
  if (!s.isOk()) return asPpduError(s);
  return ud;
}

Result<ConnectRequest> decodeConnectRequest(Bytes ppdu, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, topLevel(ppdu, limits));
  if (!(t.tag == kTagSet)) return bad(t.offset, "CP-type must be a SET, found " + t.tag.toString());
  ConnectRequest cp;
  bool have_mode = false;
  BerReader top(ppdu, limits);
  auto body = [&]() -> Status {
    NPAC_ASSIGN_OR_RETURN(BerReader set, top.enter(t));
    while (!set.atEnd()) {
      NPAC_ASSIGN_OR_RETURN(Tlv e, set.next());
      if (e.tag == kTagModeSelector) {
        NPAC_ASSIGN_OR_RETURN(BerReader m, set.enter(e));
        NPAC_ASSIGN_OR_RETURN(cp.mode, m.readInteger(kTagModeValue));
        NPAC_RETURN_IF_ERROR(m.expectEnd());
        have_mode = true;
      } else if (e.tag == kTagNormalModeParameters) {
        NPAC_ASSIGN_OR_RETURN(BerReader n, set.enter(e));
        while (!n.atEnd()) {
          NPAC_ASSIGN_OR_RETURN(Tlv p, n.next());
          if (p.tag == kTagProtocolVersion) {
            NPAC_ASSIGN_OR_RETURN(cp.version1, decodeVersion(p));
          } else if (p.tag == kTagCallingSelector) {
            NPAC_ASSIGN_OR_RETURN(cp.calling_selector, selector(p));
          } else if (p.tag == kTagCalledSelector) {
            NPAC_ASSIGN_OR_RETURN(cp.called_selector, selector(p));
          } else if (p.tag == kTagContextDefinitionList) {
            NPAC_RETURN_IF_ERROR(decodeDefinitionList(n, p, cp.contexts));
          } else if (p.tag.cls == TagClass::kApplication) {
            NPAC_RETURN_IF_ERROR(decodeUserDataTlv(n, p, cp.user_data));
          }  // default context, requirements, options: not used by this profile
        }
      }  // x410-mode-parameters [1]: the mode check below refuses that mode
    }
    return Status::ok();
  };
  Status s = body();
  if (!s.isOk()) return asPpduError(s);
  if (!have_mode) return bad(t.offset, "CP without mode-selector");
  return cp;
}

Result<ConnectAccept> decodeConnectAccept(Bytes ppdu, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, topLevel(ppdu, limits));
  if (!(t.tag == kTagSet)) return bad(t.offset, "CPA-PPDU must be a SET, found " + t.tag.toString());
  ConnectAccept cpa;
  BerReader top(ppdu, limits);
  auto body = [&]() -> Status {
    NPAC_ASSIGN_OR_RETURN(BerReader set, top.enter(t));
    while (!set.atEnd()) {
      NPAC_ASSIGN_OR_RETURN(Tlv e, set.next());
      if (e.tag == kTagModeSelector) {
        NPAC_ASSIGN_OR_RETURN(BerReader m, set.enter(e));
        NPAC_ASSIGN_OR_RETURN(int64_t mode, m.readInteger(kTagModeValue));
        if (mode != kNormalMode) return Status::error(ErrorCode::kPresentationUnsupportedMode, e.offset, "CPA in a mode other than normal");
      } else if (e.tag == kTagNormalModeParameters) {
        NPAC_ASSIGN_OR_RETURN(BerReader n, set.enter(e));
        while (!n.atEnd()) {
          NPAC_ASSIGN_OR_RETURN(Tlv p, n.next());
          if (p.tag == kTagRespondingSelector) {
            NPAC_ASSIGN_OR_RETURN(cpa.responding_selector, selector(p));
          } else if (p.tag == kTagContextResultList) {
            NPAC_RETURN_IF_ERROR(decodeResultList(n, p, cpa.results));
          } else if (p.tag.cls == TagClass::kApplication) {
            NPAC_RETURN_IF_ERROR(decodeUserDataTlv(n, p, cpa.user_data));
          }
        }
      }
    }
    return Status::ok();
  };
  Status s = body();
  if (!s.isOk()) return s.code() == ErrorCode::kPresentationUnsupportedMode ? s : asPpduError(s);
  return cpa;
}

Result<ConnectReject> decodeConnectReject(Bytes ppdu, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, topLevel(ppdu, limits));
  if (!(t.tag == kTagSequence)) return bad(t.offset, "normal-mode CPR-PPDU must be a SEQUENCE, found " + t.tag.toString());
  ConnectReject cpr;
  BerReader top(ppdu, limits);
  auto body = [&]() -> Status {
    NPAC_ASSIGN_OR_RETURN(BerReader n, top.enter(t));
    while (!n.atEnd()) {
      NPAC_ASSIGN_OR_RETURN(Tlv p, n.next());
      if (p.tag == kTagRespondingSelector) {
        NPAC_ASSIGN_OR_RETURN(cpr.responding_selector, selector(p));
      } else if (p.tag == kTagContextResultList) {
        NPAC_RETURN_IF_ERROR(decodeResultList(n, p, cpr.results));
      } else if (p.tag == kTagCprProviderReason) {
        NPAC_ASSIGN_OR_RETURN(cpr.provider_reason, decodeInteger(p));
      } else if (p.tag.cls == TagClass::kApplication) {
        NPAC_RETURN_IF_ERROR(decodeUserDataTlv(n, p, cpr.user_data));
      }
    }
    return Status::ok();
  };
  Status s = body();
  if (!s.isOk()) return asPpduError(s);
  return cpr;
}

Result<Abort> decodeAbort(Bytes ppdu, const DecodeLimits& limits) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, topLevel(ppdu, limits));
  Abort a;
  BerReader top(ppdu, limits);
  auto body = [&]() -> Status {
    NPAC_ASSIGN_OR_RETURN(BerReader r, top.enter(t));
    if (t.tag == kTagAruNormalMode) {
      a.user_abort = true;
      if (r.nextIs(kTagAruContextList)) {
        NPAC_RETURN_IF_ERROR(r.next().status());
      }
      if (!r.atEnd()) {
        NPAC_ASSIGN_OR_RETURN(Tlv ud, r.next());
        NPAC_RETURN_IF_ERROR(decodeUserDataTlv(r, ud, a.user_data));
      }
    } else if (t.tag == kTagSequence) {
      a.user_abort = false;
      if (r.nextIs(kTagArpReason)) {
        NPAC_ASSIGN_OR_RETURN(a.provider_reason, r.readInteger(kTagArpReason));
      }
      if (r.nextIs(kTagArpEvent)) {
        NPAC_ASSIGN_OR_RETURN(a.event_identifier, r.readInteger(kTagArpEvent));
      }
    } else {
      return bad(t.offset, "Abort-type must be ARU [0] or ARP SEQUENCE, found " + t.tag.toString());
    }
    return r.expectEnd();
  };
  Status s = body();
  if (!s.isOk()) return asPpduError(s);
  return a;
}

void prependUserData(EncodeBuffer& buf, int64_t context_id) {
  // User-data ::= [APPLICATION 1] SEQUENCE OF PDV-list { pci, [0] single-ASN1-type }.
  const size_t apdu = buf.size();
  prependTlvHeader(buf, kTagSingleAsn1Type, apdu);
  uint8_t pci[2 + 8] = {0x02, 0};
  const size_t n = integerContent(context_id, pci + 2);
  pci[1] = static_cast<uint8_t>(n);
  buf.prepend(Bytes(pci, 2 + n));
  wrap(buf, kTagSequence);
  wrap(buf, kTagFullyEncodedData);
}

void prependConnectRequest(EncodeBuffer& buf, const ConnectRequest& cp, int64_t context_id) {
  if (!buf.empty()) prependUserData(buf, context_id);
  EncodeBuffer front(0, 128);
  BerWriter w(front);
  if (cp.version1) writeVersion(w);
  if (!cp.calling_selector.empty()) w.writeOctetString(cp.calling_selector, kTagCallingSelector);
  if (!cp.called_selector.empty()) w.writeOctetString(cp.called_selector, kTagCalledSelector);
  if (!cp.contexts.empty()) {
    const size_t list = w.beginConstructed(kTagContextDefinitionList);
    for (const ContextProposal& p : cp.contexts) {
      const size_t item = w.beginConstructed(kTagSequence);
      w.writeInteger(p.id);
      w.writeOid(p.abstract_syntax);
      const size_t ts = w.beginConstructed(kTagSequence);
      for (const Oid& o : p.transfer_syntaxes) w.writeOid(o);
      w.endConstructed(ts);
      w.endConstructed(item);
    }
    w.endConstructed(list);
  }
  prependFront(buf, front);
  wrap(buf, kTagNormalModeParameters);
  uint8_t mode[] = {0xA0, 0x03, 0x80, 0x01, static_cast<uint8_t>(cp.mode)};
  buf.prepend(mode);
  wrap(buf, kTagSet);
}

void prependConnectAccept(EncodeBuffer& buf, const ConnectAccept& cpa, int64_t context_id) {
  if (!buf.empty()) prependUserData(buf, context_id);
  EncodeBuffer front(0, 128);
  BerWriter w(front);
  writeVersion(w);
  if (!cpa.responding_selector.empty()) w.writeOctetString(cpa.responding_selector, kTagRespondingSelector);
  writeResults(w, cpa.results);
  prependFront(buf, front);
  wrap(buf, kTagNormalModeParameters);
  buf.prepend(kModeSelectorNormal);
  wrap(buf, kTagSet);
}

void prependConnectReject(EncodeBuffer& buf, const ConnectReject& cpr, int64_t context_id) {
  if (!buf.empty()) prependUserData(buf, context_id);
  EncodeBuffer front(0, 128);
  BerWriter w(front);
  writeVersion(w);
  if (!cpr.responding_selector.empty()) w.writeOctetString(cpr.responding_selector, kTagRespondingSelector);
  writeResults(w, cpr.results);
  if (cpr.provider_reason) w.writeInteger(*cpr.provider_reason, kTagCprProviderReason);
  prependFront(buf, front);
  wrap(buf, kTagSequence);
}

void prependUserAbort(EncodeBuffer& buf, int64_t context_id) {
  if (!buf.empty()) prependUserData(buf, context_id);
  wrap(buf, kTagAruNormalMode);
}

void encodeProviderAbort(EncodeBuffer& buf, int64_t reason) {
  BerWriter w(buf);
  const size_t s = w.beginConstructed(kTagSequence);
  w.writeInteger(reason, kTagArpReason);
  w.endConstructed(s);
}

void DefinedContexts::add(int64_t id, const Oid& abstract_syntax) { contexts_.emplace_back(id, abstract_syntax); }

const Oid* DefinedContexts::abstractSyntaxOf(int64_t id) const {
  for (const auto& [cid, oid] : contexts_)
    if (cid == id) return &oid;
  return nullptr;
}

std::optional<int64_t> DefinedContexts::idFor(const Oid& abstract_syntax) const {
  for (const auto& [cid, oid] : contexts_)
    if (oid == abstract_syntax) return cid;
  return std::nullopt;
}

Status DefinedContexts::check(const UserData& ud) const {
  for (const Pdv& p : ud)
    if (!abstractSyntaxOf(p.context_id))
      return Status::error(ErrorCode::kPresentationContextNotNegotiated, 0,
                           "user data on presentation context " + std::to_string(p.context_id) + ", which was not negotiated");
  return Status::ok();
}

ConnectDecision respondToConnect(const ConnectRequest& cp) {
  ConnectDecision d;
  for (const ContextProposal& p : cp.contexts) {
    ContextResult r;
    const bool known = p.abstract_syntax == oids::kAcseAbstractSyntax || p.abstract_syntax == oids::kCmipAbstractSyntax;
    const bool ber = std::find(p.transfer_syntaxes.begin(), p.transfer_syntaxes.end(), oids::kBerTransferSyntax) != p.transfer_syntaxes.end();
    if (!known) {
      r.result = kProviderRejection;
      r.provider_reason = kAbstractSyntaxNotSupported;
    } else if (!ber) {
      r.result = kProviderRejection;
      r.provider_reason = kTransferSyntaxesNotSupported;
    } else {
      r.result = kAcceptance;
      r.transfer_syntax = oids::kBerTransferSyntax;
      d.contexts.add(p.id, p.abstract_syntax);
    }
    d.accept.results.push_back(r);
  }
  d.reject.results = d.accept.results;
  d.accept.responding_selector = cp.called_selector;
  d.reject.responding_selector = cp.called_selector;
  if (cp.mode != kNormalMode) {
    d.reject.provider_reason = kCprReasonNotSpecified;
    d.reason = Status::error(ErrorCode::kPresentationUnsupportedMode, 0, "CP in mode " + std::to_string(cp.mode) + "; only normal mode (1) is supported");
  } else if (!cp.version1) {
    d.reject.provider_reason = kCprProtocolVersionNotSupported;
    d.reason = Status::error(ErrorCode::kPresentationBadPpdu, 0, "CP does not offer presentation protocol version 1");
  } else if (!d.contexts.idFor(oids::kAcseAbstractSyntax)) {
    d.reject.provider_reason = kCprLocalLimitExceeded;
    d.reason = Status::error(ErrorCode::kPresentationNoAcceptableContext, 0, "CP defines no acceptable ACSE presentation context");
  } else if (Status s = d.contexts.check(cp.user_data); !s.isOk()) {
    d.reject.provider_reason = kCprReasonNotSpecified;
    d.reason = s;
  } else {
    d.accepted = true;
  }
  return d;
}

Result<DefinedContexts> contextsFromAccept(const ConnectRequest& cp, const ConnectAccept& cpa) {
  if (cpa.results.size() != cp.contexts.size())
    return bad(0, "CPA result list has " + std::to_string(cpa.results.size()) + " entries for " + std::to_string(cp.contexts.size()) + " proposed contexts");
  DefinedContexts d;
  for (size_t i = 0; i < cp.contexts.size(); ++i)
    if (cpa.results[i].result == kAcceptance) d.add(cp.contexts[i].id, cp.contexts[i].abstract_syntax);
  if (!d.idFor(oids::kAcseAbstractSyntax))
    return Status::error(ErrorCode::kPresentationNoAcceptableContext, 0, "CPA accepted no ACSE context");
  return d;
}

}  // namespace npac::cmip::presentation
