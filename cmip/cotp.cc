#include "cmip/cotp.h"

#include <algorithm>
#include <string>

#include "cmip/tpkt.h"

namespace npac::cmip::cotp {
namespace {

// X.224 §13.2.1: LI octet; 255 is reserved. The fixed part sizes (after LI) per TPDU.
constexpr uint8_t kReservedLi = 0xFF;
constexpr size_t kConnectFixedLength = 6;     // code, DST-REF(2), SRC-REF(2), class
constexpr size_t kDisconnectFixedLength = 6;  // code, DST-REF(2), SRC-REF(2), reason
constexpr size_t kErrorFixedLength = 4;       // code, DST-REF(2), cause
constexpr size_t kDataFixedLength = 2;        // code, EOT|TPDU-NR (class 0, §13.7.3)
constexpr uint8_t kClass0 = 0;

Status err(ErrorCode c, size_t off, std::string m) { return Status::error(c, off, std::move(m)); }

uint16_t be16(Bytes b, size_t p) { return static_cast<uint16_t>((b[p] << 8) | b[p + 1]); }

void putBe16(EncodeBuffer& out, uint16_t v) {
  out.append(static_cast<uint8_t>(v >> 8));
  out.append(static_cast<uint8_t>(v));
}

void putParam(EncodeBuffer& out, uint8_t code, Bytes value) {
  out.append(code);
  out.append(static_cast<uint8_t>(value.size()));
  out.append(value);
}

// Walks the variable part [pos, end) calling f(code, value, offset).
template <typename F>
Status forEachParameter(Bytes t, size_t pos, size_t end, F&& f) {
  while (pos < end) {
    if (end - pos < 2) return err(ErrorCode::kCotpBadParameter, pos, "parameter header runs past the TPDU header");
    const uint8_t code = t[pos];
    const size_t len = t[pos + 1];
    if (end - pos - 2 < len) return err(ErrorCode::kCotpBadParameter, pos, "parameter length " + std::to_string(len) + " runs past the TPDU header");
    NPAC_RETURN_IF_ERROR(f(code, t.subspan(pos + 2, len), pos));
    pos += 2 + len;
  }
  return Status::ok();
}

Result<Connect> decodeConnect(Bytes t, size_t end) {
  Connect c;
  c.dst_ref = be16(t, 2);
  c.src_ref = be16(t, 4);
  c.protocol_class = t[6] >> 4;
  c.options = t[6] & 0x0F;
  NPAC_RETURN_IF_ERROR(forEachParameter(t, 7, end, [&](uint8_t code, Bytes v, size_t off) -> Status {
    switch (code) {
      case kParamTpduSize:
        if (v.size() != 1 || v[0] < kMinTpduSizeCode || v[0] > kMaxTpduSizeCodeAny)
          return err(ErrorCode::kCotpBadTpduSize, off, "invalid TPDU size parameter (X.224 §13.3.4 b)");
        c.tpdu_size_code = v[0];
        break;
      case kParamCallingTsap:
        c.calling_tsap.assign(v.begin(), v.end());
        break;
      case kParamCalledTsap:
        c.called_tsap.assign(v.begin(), v.end());
        break;
      case kParamAlternativeClasses:
        for (uint8_t b : v) c.alternative_classes.push_back(b >> 4);
        break;
      default:
        break;  // §13.2.3: parameters not understood are ignored
    }
    return Status::ok();
  }));
  if (end != t.size())
    return err(ErrorCode::kCotpBadParameter, end, "user data in a CR/CC is not permitted in class 0 (X.224 §13.3.5)");
  return c;
}

}  // namespace

Result<Tpdu> decode(Bytes t) {
  if (t.size() < 2) return err(ErrorCode::kCotpTruncated, t.size(), "TPDU shorter than LI and code");
  const uint8_t li = t[0];
  if (li == kReservedLi) return err(ErrorCode::kCotpBadLengthIndicator, 0, "LI 255 is reserved (X.224 §13.2.1)");
  if (size_t{li} + 1 > t.size())
    return err(ErrorCode::kCotpBadLengthIndicator, 0, "LI " + std::to_string(li) + " exceeds the TPDU of " + std::to_string(t.size()) + " octets");
  const size_t end = size_t{li} + 1;  // end of header
  Tpdu out;
  const uint8_t code = t[1] & 0xF0;
  switch (code) {
    case static_cast<uint8_t>(TpduCode::kConnectionRequest):
    case static_cast<uint8_t>(TpduCode::kConnectionConfirm): {
      if (li < kConnectFixedLength) return err(ErrorCode::kCotpBadLengthIndicator, 0, "CR/CC header shorter than its fixed part");
      out.code = static_cast<TpduCode>(code);
      NPAC_ASSIGN_OR_RETURN(out.connect, decodeConnect(t, end));
      return out;
    }
    case static_cast<uint8_t>(TpduCode::kDisconnectRequest): {
      if (li < kDisconnectFixedLength) return err(ErrorCode::kCotpBadLengthIndicator, 0, "DR header shorter than its fixed part");
      out.code = TpduCode::kDisconnectRequest;
      out.disconnect = Disconnect{be16(t, 2), be16(t, 4), t[6]};
      NPAC_RETURN_IF_ERROR(forEachParameter(t, 7, end, [](uint8_t, Bytes, size_t) { return Status::ok(); }));
      return out;
    }
    case static_cast<uint8_t>(TpduCode::kData): {
      if (li != kDataFixedLength) return err(ErrorCode::kCotpBadLengthIndicator, 0, "class 0 DT must have LI 2 (X.224 §13.7)");
      if (t[1] != static_cast<uint8_t>(TpduCode::kData)) return err(ErrorCode::kCotpUnknownTpdu, 1, "DT with a credit nibble is not class 0");
      out.code = TpduCode::kData;
      out.data.eot = (t[2] & kEotBit) != 0;
      out.data.user_data = t.subspan(end);
      return out;
    }
    case static_cast<uint8_t>(TpduCode::kError): {
      if (li < kErrorFixedLength) return err(ErrorCode::kCotpBadLengthIndicator, 0, "ER header shorter than its fixed part");
      out.code = TpduCode::kError;
      out.error.dst_ref = be16(t, 2);
      out.error.cause = t[4];
      NPAC_RETURN_IF_ERROR(forEachParameter(t, 5, end, [&](uint8_t c, Bytes v, size_t) {
        if (c == kParamInvalidTpdu) out.error.invalid_tpdu.assign(v.begin(), v.end());
        return Status::ok();
      }));
      return out;
    }
    default:
      return err(ErrorCode::kCotpUnknownTpdu, 1, "TPDU code 0x" + [&] {
        static const char* kHex = "0123456789ABCDEF";
        return std::string{kHex[code >> 4], kHex[code & 15]};
      }() + " is not a class 0 TPDU");
  }
}

void encodeConnect(TpduCode code, const Connect& c, EncodeBuffer& out) {
  const size_t li_pos = out.size();
  out.append(0);  // LI, patched below
  out.append(static_cast<uint8_t>(code));
  putBe16(out, c.dst_ref);
  putBe16(out, c.src_ref);
  out.append(static_cast<uint8_t>((c.protocol_class << 4) | (c.options & 0x0F)));
  if (!c.calling_tsap.empty()) putParam(out, kParamCallingTsap, c.calling_tsap);
  if (!c.called_tsap.empty()) putParam(out, kParamCalledTsap, c.called_tsap);
  if (c.tpdu_size_code) putParam(out, kParamTpduSize, Bytes(&*c.tpdu_size_code, 1));
  if (!c.alternative_classes.empty()) {
    std::vector<uint8_t> v;
    for (uint8_t k : c.alternative_classes) v.push_back(static_cast<uint8_t>(k << 4));
    putParam(out, kParamAlternativeClasses, v);
  }
  out.data()[li_pos] = static_cast<uint8_t>(out.size() - li_pos - 1);
}

void encodeDisconnect(const Disconnect& d, EncodeBuffer& out) {
  out.append(static_cast<uint8_t>(kDisconnectFixedLength));
  out.append(static_cast<uint8_t>(TpduCode::kDisconnectRequest));
  putBe16(out, d.dst_ref);
  putBe16(out, d.src_ref);
  out.append(d.reason);
}

void encodeError(const Error& e, EncodeBuffer& out) {
  const size_t li_pos = out.size();
  out.append(0);
  out.append(static_cast<uint8_t>(TpduCode::kError));
  putBe16(out, e.dst_ref);
  out.append(e.cause);
  if (!e.invalid_tpdu.empty()) putParam(out, kParamInvalidTpdu, Bytes(e.invalid_tpdu).first(std::min<size_t>(e.invalid_tpdu.size(), 200)));
  out.data()[li_pos] = static_cast<uint8_t>(out.size() - li_pos - 1);
}

void prependDataHeader(EncodeBuffer& out, bool eot) {
  uint8_t* h = out.prependUninitialized(kDtHeaderLength);
  h[0] = static_cast<uint8_t>(kDataFixedLength);
  h[1] = static_cast<uint8_t>(TpduCode::kData);
  h[2] = eot ? kEotBit : 0;
}

ConnectResponse respondToConnect(const Connect& cr, uint16_t local_ref, size_t max_tpdu_size) {
  ConnectResponse r;
  const bool class0_offered = cr.protocol_class == kClass0 ||
      std::find(cr.alternative_classes.begin(), cr.alternative_classes.end(), kClass0) != cr.alternative_classes.end();
  if (!class0_offered) {
    // §6.5.4: a responder that cannot accept any offered class refuses with a DR.
    r.refusal = Disconnect{cr.src_ref, local_ref, kReasonNegotiationFailed};
    r.reason = err(ErrorCode::kCotpClassNotSupported, 0, "CR proposes class " + std::to_string(cr.protocol_class) + "; only class 0 is supported");
    return r;
  }
  uint8_t max_code = kMinTpduSizeCode;
  while (max_code < kMaxTpduSizeCodeClass0 && tpduSizeFromCode(max_code + 1) <= max_tpdu_size) ++max_code;
  const uint8_t proposed = cr.tpdu_size_code.value_or(kMinTpduSizeCode);
  const uint8_t chosen = std::min(proposed, max_code);
  r.accepted = true;
  r.tpdu_size = tpduSizeFromCode(chosen);
  r.confirm.dst_ref = cr.src_ref;
  r.confirm.src_ref = local_ref;
  r.confirm.protocol_class = kClass0;
  r.confirm.tpdu_size_code = chosen;
  r.confirm.calling_tsap = cr.calling_tsap;
  r.confirm.called_tsap = cr.called_tsap;
  return r;
}

Result<size_t> confirmedTpduSize(const Connect& cr, const Connect& cc) {
  if (cc.protocol_class != kClass0)
    return err(ErrorCode::kCotpClassNotSupported, 0, "CC selects class " + std::to_string(cc.protocol_class) + "; only class 0 is supported");
  const uint8_t proposed = cr.tpdu_size_code.value_or(kMinTpduSizeCode);
  const uint8_t chosen = cc.tpdu_size_code.value_or(kMinTpduSizeCode);
  if (chosen > proposed || chosen > kMaxTpduSizeCodeClass0)
    return err(ErrorCode::kCotpBadTpduSize, 0, "CC TPDU size " + std::to_string(tpduSizeFromCode(chosen)) + " exceeds the proposal");
  return tpduSizeFromCode(chosen);
}

Status frameUserData(EncodeBuffer& sdu, size_t tpdu_size) {
  if (tpdu_size <= kDtHeaderLength || tpdu_size > tpkt::kMaxTpduLength)
    return err(ErrorCode::kCotpBadTpduSize, 0, "cannot segment into TPDUs of " + std::to_string(tpdu_size) + " octets");
  const size_t chunk = tpdu_size - kDtHeaderLength;
  if (sdu.size() <= chunk) {
    prependDataHeader(sdu, true);
    return tpkt::prependHeader(sdu);
  }
  const size_t segments = (sdu.size() + chunk - 1) / chunk;
  EncodeBuffer out(0, sdu.size() + segments * (tpkt::kHeaderLength + kDtHeaderLength));
  const Bytes all = sdu.view();
  for (size_t i = 0; i < segments; ++i) {
    const Bytes part = all.subspan(i * chunk, std::min(chunk, all.size() - i * chunk));
    const size_t len = tpkt::kHeaderLength + kDtHeaderLength + part.size();
    const uint8_t hdr[] = {tpkt::kVersion, tpkt::kReserved, static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len),
                           static_cast<uint8_t>(kDataFixedLength), static_cast<uint8_t>(TpduCode::kData),
                           static_cast<uint8_t>(i + 1 == segments ? kEotBit : 0)};
    out.append(hdr);
    out.append(part);
  }
  sdu = std::move(out);
  return Status::ok();
}

Result<std::optional<Bytes>> DtReassembler::add(const Data& dt) {
  if (pending_.size() + dt.user_data.size() > max_sdu_size_) {
    const size_t total = pending_.size() + dt.user_data.size();
    pending_.clear();
    return err(ErrorCode::kCotpReassemblyTooLarge, 0, "reassembled TSDU of " + std::to_string(total) + " octets exceeds the cap of " + std::to_string(max_sdu_size_));
  }
  if (pending_.empty() && dt.eot) return std::optional<Bytes>(dt.user_data);
  pending_.insert(pending_.end(), dt.user_data.begin(), dt.user_data.end());
  if (!dt.eot) return std::optional<Bytes>();
  complete_.swap(pending_);
  pending_.clear();
  return std::optional<Bytes>(Bytes(complete_));
}

}  // namespace npac::cmip::cotp
