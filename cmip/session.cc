#include "cmip/session.h"

#include <string>

namespace npac::cmip::session {
namespace {

constexpr uint8_t kLongLength = 0xFF;  // §8.2.5: 0xFF then a two-octet length
constexpr uint8_t kGiveTokensSi = 1;   // GT, category 0, §8.3.15

Status err(ErrorCode c, size_t off, std::string m) { return Status::error(c, off, std::move(m)); }

// Reads an LI at t[pos] (§8.2.5); advances pos past it.
Result<size_t> readLength(Bytes t, size_t& pos) {
  if (pos >= t.size()) return err(ErrorCode::kSessionTruncated, pos, "missing length indicator");
  if (t[pos] != kLongLength) return size_t{t[pos++]};
  if (t.size() - pos < 3) return err(ErrorCode::kSessionTruncated, pos, "three-octet length indicator runs past the end");
  const size_t len = (size_t{t[pos + 1]} << 8) | t[pos + 2];
  pos += 3;
  return len;
}

struct Unit {
  uint8_t code;
  Bytes value;
  size_t offset;
};

// Walks PI/PGI units in t[pos, end).
template <typename F>
Status forEachUnit(Bytes t, size_t pos, size_t end, F&& f) {
  while (pos < end) {
    const size_t start = pos;
    const uint8_t code = t[pos++];
    NPAC_ASSIGN_OR_RETURN(size_t len, readLength(t.first(end), pos));
    if (end - pos < len) return err(ErrorCode::kSessionBadParameter, start, "parameter " + std::to_string(code) + " runs past its SPDU");
    NPAC_RETURN_IF_ERROR(f(Unit{code, t.subspan(pos, len), start}));
    pos += len;
  }
  return Status::ok();
}

Status expectLength(const Unit& u, size_t n) {
  if (u.value.size() != n)
    return err(ErrorCode::kSessionBadParameter, u.offset, "parameter " + std::to_string(u.code) + " must be " + std::to_string(n) + " octets");
  return Status::ok();
}

Status decodeSelector(const Unit& u, std::vector<uint8_t>& out) {
  if (u.value.size() > kMaxSelectorLength)
    return err(ErrorCode::kSessionBadParameter, u.offset, "session selector longer than 16 octets (X.225 §8.3.1.13)");
  out.assign(u.value.begin(), u.value.end());
  return Status::ok();
}

Status decodeConnect(Bytes t, size_t pos, size_t end, Spdu& s) {
  Connect& c = s.connect;
  c.version = kVersion1;  // §8.3.1.7: absent Version Number means version 1
  return forEachUnit(t, pos, end, [&](const Unit& u) -> Status {
    switch (u.code) {
      case kPgiConnectAcceptItem: {
        const size_t vpos = static_cast<size_t>(u.value.data() - t.data());
        return forEachUnit(t, vpos, vpos + u.value.size(), [&](const Unit& pi) -> Status {
          if (pi.code == kPiProtocolOptions) {
            NPAC_RETURN_IF_ERROR(expectLength(pi, 1));
            c.protocol_options = pi.value[0];
          } else if (pi.code == kPiVersionNumber) {
            NPAC_RETURN_IF_ERROR(expectLength(pi, 1));
            c.version = pi.value[0];
          }
          return Status::ok();  // TSDU maximum size, serial number, token setting: unused
        });
      }
      case kPiSessionUserRequirements:
        NPAC_RETURN_IF_ERROR(expectLength(u, 2));
        c.user_requirements = static_cast<uint16_t>((u.value[0] << 8) | u.value[1]);
        return Status::ok();
      case kPiCallingSessionSelector:
        return decodeSelector(u, c.calling_selector);
      case kPiCalledSessionSelector:
        return decodeSelector(u, c.called_selector);
      case kPgiUserData:
      case kPgiExtendedUserData:
        s.user_data = u.value;
        return Status::ok();
      default:
        return Status::ok();  // connection identifier, data overflow: not used
    }
  });
}

// Prepends a PI/PGI header (code + LI) for a value of `len` octets.
void prependUnitHeader(EncodeBuffer& buf, uint8_t code, size_t len) {
  if (len < kLongLength) {
    uint8_t* h = buf.prependUninitialized(2);
    h[0] = code;
    h[1] = static_cast<uint8_t>(len);
  } else {
    uint8_t* h = buf.prependUninitialized(4);
    h[0] = code;
    h[1] = kLongLength;
    h[2] = static_cast<uint8_t>(len >> 8);
    h[3] = static_cast<uint8_t>(len);
  }
}

constexpr size_t kMaxSpduLength = 65535;  // three-octet LI, §8.2.5

// Callers keep SPDUs within kMaxSpduLength: the presentation layer limits user data to
// the session's maximum (prependConnectLike/prependRefuse check, the others carry small
// PPDUs or DT user information whose LI is not affected).
void prependSpduHeader(EncodeBuffer& buf, SpduType si) { prependUnitHeader(buf, static_cast<uint8_t>(si), buf.size()); }

void appendPi(std::vector<uint8_t>& out, uint8_t code, Bytes v) {
  out.push_back(code);
  out.push_back(static_cast<uint8_t>(v.size()));
  out.insert(out.end(), v.begin(), v.end());
}

Status prependConnectLike(EncodeBuffer& buf, const Connect& c, SpduType si) {
  const size_t ud = buf.size();
  if (si == SpduType::kConnect && (ud > kMaxExtendedUserData || (ud > kMaxUserData && !(c.version & kVersion2))))
    return err(ErrorCode::kSessionBadParameter, 0, "CN user data of " + std::to_string(ud) + " octets exceeds X.225 §8.3.1.18-19");
  if (ud > 0) prependUnitHeader(buf, si == SpduType::kConnect && ud > kMaxUserData ? kPgiExtendedUserData : kPgiUserData, ud);
  if (c.calling_selector.size() > kMaxSelectorLength || c.called_selector.size() > kMaxSelectorLength)
    return err(ErrorCode::kSessionBadParameter, 0, "session selector longer than 16 octets");
  std::vector<uint8_t> front;
  front.reserve(48);
  const uint8_t item[] = {kPiProtocolOptions, 1, c.protocol_options, kPiVersionNumber, 1, c.version};
  appendPi(front, kPgiConnectAcceptItem, item);
  const uint8_t req[] = {static_cast<uint8_t>(c.user_requirements >> 8), static_cast<uint8_t>(c.user_requirements)};
  appendPi(front, kPiSessionUserRequirements, req);
  if (!c.calling_selector.empty()) appendPi(front, kPiCallingSessionSelector, c.calling_selector);
  if (!c.called_selector.empty()) appendPi(front, kPiCalledSessionSelector, c.called_selector);
  buf.prepend(front);
  if (buf.size() > kMaxSpduLength) return err(ErrorCode::kSessionBadParameter, 0, "SPDU longer than 65535 octets");
  prependSpduHeader(buf, si);
  return Status::ok();
}

}  // namespace

const char* spduName(SpduType t) {
  switch (t) {
    case SpduType::kDataTransfer: return "DT";
    case SpduType::kFinish: return "FN";
    case SpduType::kDisconnect: return "DN";
    case SpduType::kRefuse: return "RF";
    case SpduType::kConnect: return "CN";
    case SpduType::kAccept: return "AC";
    case SpduType::kAbort: return "AB";
    case SpduType::kAbortAccept: return "AA";
  }
  return "?";
}

Result<Spdu> decode(Bytes t) {
  if (t.empty()) return err(ErrorCode::kSessionTruncated, 0, "empty TSDU");
  size_t pos = 1;
  const uint8_t si = t[0];
  NPAC_ASSIGN_OR_RETURN(size_t li, readLength(t, pos));
  if (t.size() - pos < li) return err(ErrorCode::kSessionTruncated, pos, "SPDU length " + std::to_string(li) + " runs past the TSDU");
  const size_t end = pos + li;
  Spdu s;
  s.type = static_cast<SpduType>(si);
  auto noTrailing = [&]() -> Status {
    if (end != t.size()) return err(ErrorCode::kSessionUnexpectedSpdu, end, "octets after a " + std::string(spduName(s.type)) + " SPDU");
    return Status::ok();
  };
  switch (si) {
    case kGiveTokensSi: {
      // GT (token item ignored: duplex has no tokens to give) followed by DT, §6.3.7.
      NPAC_RETURN_IF_ERROR(forEachUnit(t, pos, end, [](const Unit&) { return Status::ok(); }));
      if (end >= t.size() || t[end] != static_cast<uint8_t>(SpduType::kDataTransfer))
        return err(ErrorCode::kSessionUnexpectedSpdu, end, "GT not followed by a DT SPDU (X.225 §6.3.7)");
      size_t p = end + 1;
      NPAC_ASSIGN_OR_RETURN(size_t dli, readLength(t, p));
      if (t.size() - p < dli) return err(ErrorCode::kSessionTruncated, p, "DT header runs past the TSDU");
      NPAC_RETURN_IF_ERROR(forEachUnit(t, p, p + dli, [](const Unit&) { return Status::ok(); }));
      s.type = SpduType::kDataTransfer;
      s.user_data = t.subspan(p + dli);
      return s;
    }
    case static_cast<uint8_t>(SpduType::kConnect):
    case static_cast<uint8_t>(SpduType::kAccept):
      NPAC_RETURN_IF_ERROR(decodeConnect(t, pos, end, s));
      if (s.connect.version == 0) return err(ErrorCode::kSessionBadParameter, pos, "Version Number proposes no version");
      NPAC_RETURN_IF_ERROR(noTrailing());
      return s;
    case static_cast<uint8_t>(SpduType::kRefuse): {
      bool have_reason = false;
      s.refuse.version = kVersion1;
      NPAC_RETURN_IF_ERROR(forEachUnit(t, pos, end, [&](const Unit& u) -> Status {
        if (u.code == kPiTransportDisconnect) {
          NPAC_RETURN_IF_ERROR(expectLength(u, 1));
          s.refuse.transport_disconnect = u.value[0];
        } else if (u.code == kPiSessionUserRequirements) {
          NPAC_RETURN_IF_ERROR(expectLength(u, 2));
          s.refuse.user_requirements = static_cast<uint16_t>((u.value[0] << 8) | u.value[1]);
        } else if (u.code == kPiVersionNumber) {
          NPAC_RETURN_IF_ERROR(expectLength(u, 1));
          s.refuse.version = u.value[0];
        } else if (u.code == kPiReasonCode) {
          if (u.value.empty()) return err(ErrorCode::kSessionBadParameter, u.offset, "empty Reason Code (X.225 §8.3.5.7)");
          s.refuse.reason = u.value[0];
          s.user_data = u.value.subspan(1);
          have_reason = true;
        }
        return Status::ok();
      }));
      if (!have_reason) return err(ErrorCode::kSessionMissingParameter, 0, "RF without a Reason Code (X.225 §8.3.5.7)");
      NPAC_RETURN_IF_ERROR(noTrailing());
      return s;
    }
    case static_cast<uint8_t>(SpduType::kFinish):
    case static_cast<uint8_t>(SpduType::kDisconnect):
    case static_cast<uint8_t>(SpduType::kAbort):
    case static_cast<uint8_t>(SpduType::kAbortAccept):
      s.transport_disconnect = si == static_cast<uint8_t>(SpduType::kAbort) ? (kReleaseTransport | kUserAbort) : kReleaseTransport;
      NPAC_RETURN_IF_ERROR(forEachUnit(t, pos, end, [&](const Unit& u) -> Status {
        if (u.code == kPiTransportDisconnect) {
          NPAC_RETURN_IF_ERROR(expectLength(u, 1));
          s.transport_disconnect = u.value[0];
        } else if (u.code == kPgiUserData) {
          s.user_data = u.value;
        }
        return Status::ok();  // AB reflect parameter values: informative only
      }));
      NPAC_RETURN_IF_ERROR(noTrailing());
      return s;
    default:
      return err(ErrorCode::kSessionUnknownSpdu, 0, "SPDU identifier " + std::to_string(si) + " is not supported (kernel + duplex, X.225 §8.3)");
  }
}

Status prependConnect(EncodeBuffer& buf, const Connect& cn) { return prependConnectLike(buf, cn, SpduType::kConnect); }
Status prependAccept(EncodeBuffer& buf, const Connect& ac) { return prependConnectLike(buf, ac, SpduType::kAccept); }

Status prependRefuse(EncodeBuffer& buf, const Refuse& rf) {
  if (buf.size() + 16 > kMaxSpduLength) return err(ErrorCode::kSessionBadParameter, 0, "RF user data too long");
  buf.prepend(rf.reason);
  prependUnitHeader(buf, kPiReasonCode, buf.size());
  const uint8_t front[] = {kPiTransportDisconnect, 1, rf.transport_disconnect,
                           kPiSessionUserRequirements, 2, static_cast<uint8_t>(rf.user_requirements >> 8), static_cast<uint8_t>(rf.user_requirements),
                           kPiVersionNumber, 1, rf.version};
  buf.prepend(front);
  prependSpduHeader(buf, SpduType::kRefuse);
  return Status::ok();
}

void prependFinish(EncodeBuffer& buf, uint8_t transport_disconnect) {
  if (!buf.empty()) prependUnitHeader(buf, kPgiUserData, buf.size());
  const uint8_t td[] = {kPiTransportDisconnect, 1, transport_disconnect};
  buf.prepend(td);
  prependSpduHeader(buf, SpduType::kFinish);
}

void prependDisconnect(EncodeBuffer& buf) {
  if (!buf.empty()) prependUnitHeader(buf, kPgiUserData, buf.size());
  prependSpduHeader(buf, SpduType::kDisconnect);
}

void prependAbort(EncodeBuffer& buf, uint8_t transport_disconnect) {
  if (!buf.empty()) prependUnitHeader(buf, kPgiUserData, buf.size());
  const uint8_t td[] = {kPiTransportDisconnect, 1, transport_disconnect};
  buf.prepend(td);
  prependSpduHeader(buf, SpduType::kAbort);
}

void prependAbortAccept(EncodeBuffer& buf) { prependSpduHeader(buf, SpduType::kAbortAccept); }

void prependData(EncodeBuffer& buf) {
  // GT with no parameters, then DT with no parameters; user information follows.
  const uint8_t gt_dt[] = {kGiveTokensSi, 0, static_cast<uint8_t>(SpduType::kDataTransfer), 0};
  buf.prepend(gt_dt);
}

ConnectDecision respondToConnect(const Connect& cn) {
  ConnectDecision d;
  if (!(cn.version & kVersion2)) {
    d.refuse_reason = kRefuseVersionNotSupported;
    d.reason = err(ErrorCode::kSessionUnsupportedVersion, 0, "CN does not propose session version 2");
    return d;
  }
  if (!(cn.user_requirements & kDuplex)) {
    d.refuse_reason = kRefuseBySpm;
    d.reason = err(ErrorCode::kSessionBadParameter, 0, "CN does not propose the duplex functional unit");
    return d;
  }
  d.accepted = true;
  d.accept.protocol_options = 0;
  d.accept.version = kVersion2;
  d.accept.user_requirements = kDuplex;
  d.accept.calling_selector = cn.calling_selector;
  d.accept.called_selector = cn.called_selector;
  return d;
}

}  // namespace npac::cmip::session
