// BER value types and primitive decoders: INTEGER, BOOLEAN, NULL, OBJECT IDENTIFIER,
// BIT STRING, OCTET STRING, character strings, GeneralizedTime, EXTERNAL (X.690 §8).
#include <cassert>
#include <chrono>
#include <cstring>

#include "cmip/ber.h"

namespace npac::cmip {
namespace {

Status requirePrimitive(const Tlv& t, ErrorCode code, const char* what) {
  if (t.tag.constructed)
    return Status::error(code, t.offset, std::string(what) + " must use the primitive encoding");
  return Status::ok();
}

void appendArc(std::vector<uint8_t>& out, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<uint8_t>(v & 0x7F);
    v >>= 7;
  } while (v);
  while (n > 1) out.push_back(tmp[--n] | 0x80);
  out.push_back(tmp[0]);
}

int digits(std::string_view s, size_t pos, size_t n) {
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

// ---- OBJECT IDENTIFIER, X.690 §8.19 ----------------------------------------

Oid::Oid(std::initializer_list<uint64_t> arcs) {
  Result<Oid> r = fromArcs(std::span<const uint64_t>(arcs.begin(), arcs.size()));
  assert(r.isOk());
  if (r.isOk()) content_ = std::move(r->content_);
}

Result<Oid> Oid::fromArcs(std::span<const uint64_t> arcs) {
  // §8.19.4: the first two arcs X.Y are combined as 40X + Y, X in 0..2, Y < 40 if X < 2.
  if (arcs.size() < 2) return Status::error(ErrorCode::kBerBadOid, 0, "an OBJECT IDENTIFIER needs at least two arcs");
  if (arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40) || arcs[1] > UINT64_MAX - 80)
    return Status::error(ErrorCode::kBerBadOid, 0, "invalid first two arcs");
  Oid o;
  appendArc(o.content_, arcs[0] * 40 + arcs[1]);
  for (size_t i = 2; i < arcs.size(); ++i) appendArc(o.content_, arcs[i]);
  return o;
}

Result<Oid> Oid::parse(std::string_view s) {
  std::vector<uint64_t> arcs;
  size_t i = 0;
  while (i <= s.size()) {
    uint64_t v = 0;
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      const uint64_t d = static_cast<uint64_t>(s[i] - '0');
      if (v > (UINT64_MAX - d) / 10) return Status::error(ErrorCode::kBerBadOid, i, "arc too large");
      v = v * 10 + d;
      ++i;
    }
    if (i == start) return Status::error(ErrorCode::kBerBadOid, i, "expected a digit in \"" + std::string(s) + "\"");
    arcs.push_back(v);
    if (i == s.size()) break;
    if (s[i] != '.') return Status::error(ErrorCode::kBerBadOid, i, "expected '.' in \"" + std::string(s) + "\"");
    ++i;
  }
  return fromArcs(arcs);
}

Result<Oid> Oid::fromContent(Bytes c, size_t offset) {
  if (c.empty()) return Status::error(ErrorCode::kBerBadOid, offset, "empty OBJECT IDENTIFIER");
  if (c.back() & 0x80)
    return Status::error(ErrorCode::kBerBadOid, offset + c.size() - 1, "last subidentifier is unterminated");
  size_t len = 0;  // octets in the current subidentifier
  for (size_t i = 0; i < c.size(); ++i) {
    if (len == 0 && c[i] == 0x80)
      return Status::error(ErrorCode::kBerBadOid, offset + i, "subidentifier has a leading 0x80 (X.690 §8.19.2)");
    if (++len > 9 && !(len == 10 && c[i - 9] == 0x81))
      return Status::error(ErrorCode::kBerBadOid, offset + i, "subidentifier exceeds 64 bits");
    if (!(c[i] & 0x80)) len = 0;
  }
  Oid o;
  o.content_.assign(c.begin(), c.end());
  return o;
}

std::vector<uint64_t> Oid::arcs() const {
  std::vector<uint64_t> out;
  uint64_t v = 0;
  for (uint8_t b : content_) {
    v = (v << 7) | (b & 0x7F);
    if (b & 0x80) continue;
    if (out.empty()) {
      const uint64_t x = v < 40 ? 0 : v < 80 ? 1 : 2;
      out.push_back(x);
      out.push_back(v - 40 * x);
    } else {
      out.push_back(v);
    }
    v = 0;
  }
  return out;
}

std::string Oid::toString() const {
  std::string s;
  for (uint64_t a : arcs()) {
    if (!s.empty()) s += '.';
    s += std::to_string(a);
  }
  return s;
}

// ---- BIT STRING -------------------------------------------------------------

BitString BitString::withBits(size_t n) {
  BitString b;
  b.bytes.assign((n + 7) / 8, 0);
  b.unused_bits = static_cast<uint8_t>(b.bytes.size() * 8 - n);
  return b;
}

bool BitString::bit(size_t i) const {
  if (i >= bitCount()) return false;
  return (bytes[i / 8] >> (7 - i % 8)) & 1;
}

void BitString::setBit(size_t i, bool value) {
  if (i >= bitCount()) return;
  const uint8_t mask = static_cast<uint8_t>(0x80 >> (i % 8));
  if (value) bytes[i / 8] |= mask;
  else bytes[i / 8] &= static_cast<uint8_t>(~mask);
}

// ---- GeneralizedTime, X.680 §46 ---------------------------------------------

Result<GeneralizedTime> GeneralizedTime::parse(std::string_view s, size_t offset) {
  // YYYYMMDDHH[MM[SS[(.|,)f+]]][Z]; a numeric offset (+hhmm) is not used by CMIP and is
  // refused.
  GeneralizedTime t;
  auto bad = [&](const char* why) {
    return Status::error(ErrorCode::kBerBadTime, offset,
                         std::string("GeneralizedTime \"") + std::string(s.substr(0, 40)) + "\": " + why);
  };
  if (s.size() < 10) return bad("shorter than YYYYMMDDHH");
  t.year = digits(s, 0, 4);
  t.month = digits(s, 4, 2);
  t.day = digits(s, 6, 2);
  t.hour = digits(s, 8, 2);
  t.minute = t.second = t.millisecond = 0;
  size_t p = 10;
  if (s.size() >= p + 2 && s[p] >= '0' && s[p] <= '9') {
    t.minute = digits(s, p, 2);
    p += 2;
    if (s.size() >= p + 2 && s[p] >= '0' && s[p] <= '9') {
      t.second = digits(s, p, 2);
      p += 2;
    }
  }
  if (p < s.size() && (s[p] == '.' || s[p] == ',')) {
    ++p;
    size_t n = 0;
    int scale = 100;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      if (n < 3) t.millisecond += (s[p] - '0') * scale;
      scale /= 10;
      ++p;
      ++n;
    }
    if (n == 0) return bad("empty fraction");
  }
  t.utc = false;
  if (p < s.size() && s[p] == 'Z') {
    t.utc = true;
    ++p;
  }
  if (p != s.size()) return bad("unexpected characters");
  if (t.year < 0 || t.month < 1 || t.month > 12 || t.day < 1 || t.day > 31 || t.hour < 0 || t.hour > 23 ||
      t.minute < 0 || t.minute > 59 || t.second < 0 || t.second > 60)
    return bad("field out of range");
  const auto ymd = std::chrono::year_month_day(std::chrono::year(t.year), std::chrono::month(t.month), std::chrono::day(t.day));
  if (!ymd.ok()) return bad("no such date");
  return t;
}

GeneralizedTime GeneralizedTime::fromUnixMillis(int64_t millis) {
  using namespace std::chrono;
  const sys_time<milliseconds> tp{milliseconds(millis)};
  const auto day_point = floor<days>(tp);
  const year_month_day ymd(day_point);
  const hh_mm_ss<milliseconds> hms(tp - day_point);
  GeneralizedTime t;
  t.year = static_cast<int>(ymd.year());
  t.month = static_cast<int>(static_cast<unsigned>(ymd.month()));
  t.day = static_cast<int>(static_cast<unsigned>(ymd.day()));
  t.hour = static_cast<int>(hms.hours().count());
  t.minute = static_cast<int>(hms.minutes().count());
  t.second = static_cast<int>(hms.seconds().count());
  t.millisecond = static_cast<int>(hms.subseconds().count());
  t.utc = true;
  return t;
}

int64_t GeneralizedTime::toUnixMillis() const {
  using namespace std::chrono;
  const sys_days d = year_month_day(std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month)),
                                    std::chrono::day(static_cast<unsigned>(day)));
  return (duration_cast<milliseconds>(d.time_since_epoch()) + hours(hour) + minutes(minute) +
          std::chrono::seconds(second) + milliseconds(millisecond))
      .count();
}

std::string GeneralizedTime::toString() const {
  char buf[32];
  int n = std::snprintf(buf, sizeof buf, "%04d%02d%02d%02d%02d%02d", year % 10000, month % 100, day % 100, hour % 100, minute % 100, second % 100);
  if (millisecond) {
    // X.690 §11.7.3: fraction without trailing zeros.
    int ms = millisecond % 1000;
    int width = 3;
    while (ms % 10 == 0) {
      ms /= 10;
      --width;
    }
    n += std::snprintf(buf + n, sizeof buf - n, ".%0*d", width, ms);
  }
  std::string s(buf, n);
  if (utc) s += 'Z';
  return s;
}

// ---- strings ------------------------------------------------------------------

bool isValidString(std::string_view s, StringKind kind) {
  switch (kind) {
    case StringKind::kOctets:
      return true;
    case StringKind::kPrintable:
      for (unsigned char c : s) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                        std::strchr(" '()+,-./:=?", c) != nullptr;
        if (!ok || c == 0) return false;
      }
      return true;
    case StringKind::kVisible:
    case StringKind::kGraphic:
      for (unsigned char c : s)
        if (c < 0x20 || c > 0x7E) return false;
      return true;
    case StringKind::kIa5:
      for (unsigned char c : s)
        if (c > 0x7F) return false;
      return true;
    case StringKind::kUtf8: {
      size_t i = 0;
      while (i < s.size()) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        size_t n;
        if (c < 0x80) n = 0;
        else if ((c >> 5) == 0x6) n = 1;
        else if ((c >> 4) == 0xE) n = 2;
        else if ((c >> 3) == 0x1E) n = 3;
        else return false;
        for (size_t k = 1; k <= n; ++k)
          if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
        i += n + 1;
      }
      return true;
    }
  }
  return false;
}

namespace {
Status appendStringSegments(const Tlv& t, const DecodeLimits& limits, size_t depth, std::string& out) {
  if (!t.tag.constructed) {
    out.append(reinterpret_cast<const char*>(t.content.data()), t.content.size());
    return Status::ok();
  }
  // §8.7.3.2 / §8.23.6: segments are OCTET STRINGs.
  BerReader r(t.content, limits, t.contentOffset(), depth);
  if (depth + 1 > limits.max_depth)
    return Status::error(ErrorCode::kBerDepthExceeded, t.offset, "constructed string nested too deeply");
  while (!r.atEnd()) {
    NPAC_ASSIGN_OR_RETURN(Tlv seg, r.next());
    if (seg.tag.cls != TagClass::kUniversal || seg.tag.number != universal_tag::kOctetString)
      return Status::error(ErrorCode::kBerBadConstructedString, seg.offset,
                           "segment of a constructed string must be an OCTET STRING, found " + seg.tag.toString());
    NPAC_RETURN_IF_ERROR(appendStringSegments(seg, limits, depth + 1, out));
  }
  return Status::ok();
}
}  // namespace

Result<std::string> decodeString(const Tlv& t, StringKind kind, const DecodeLimits& limits) {
  std::string s;
  NPAC_RETURN_IF_ERROR(appendStringSegments(t, limits, 0, s));
  if (!isValidString(s, kind))
    return Status::error(ErrorCode::kBerBadString, t.offset, "character outside the repertoire of " + t.tag.toString());
  return s;
}

Result<Bytes> decodeOctetStringView(const Tlv& t) {
  NPAC_RETURN_IF_ERROR(requirePrimitive(t, ErrorCode::kBerBadConstructedString, "this OCTET STRING"));
  return t.content;
}

// ---- INTEGER, BOOLEAN, NULL, BIT STRING ------------------------------------------

Result<Bytes> decodeIntegerBytes(const Tlv& t) {
  NPAC_RETURN_IF_ERROR(requirePrimitive(t, ErrorCode::kBerBadInteger, "INTEGER"));
  const Bytes c = t.content;
  if (c.empty())
    return Status::error(ErrorCode::kBerBadInteger, t.offset, "INTEGER with no content octets (X.690 §8.3.1)");
  if (c.size() > 1 && ((c[0] == 0x00 && !(c[1] & 0x80)) || (c[0] == 0xFF && (c[1] & 0x80))))
    return Status::error(ErrorCode::kBerBadInteger, t.offset, "INTEGER not in minimal form (X.690 §8.3.2)");
  return c;
}

Result<int64_t> decodeInteger(const Tlv& t) {
  NPAC_ASSIGN_OR_RETURN(Bytes c, decodeIntegerBytes(t));
  if (c.size() > 8)
    return Status::error(ErrorCode::kBerIntegerOverflow, t.offset,
                         "INTEGER of " + std::to_string(c.size()) + " octets does not fit 64 bits");
  uint64_t v = (c[0] & 0x80) ? ~uint64_t{0} : 0;
  for (uint8_t b : c) v = (v << 8) | b;
  return static_cast<int64_t>(v);
}

Result<bool> decodeBoolean(const Tlv& t) {
  if (t.tag.constructed || t.content.size() != 1)
    return Status::error(ErrorCode::kBerBadBoolean, t.offset,
                         "BOOLEAN must be one primitive content octet (X.690 §8.2.1)");
  return t.content[0] != 0;
}

Status decodeNull(const Tlv& t) {
  if (t.tag.constructed || !t.content.empty())
    return Status::error(ErrorCode::kBerBadNull, t.offset, "NULL must have no content octets (X.690 §8.8.2)");
  return Status::ok();
}

Result<Oid> decodeOid(const Tlv& t) {
  NPAC_RETURN_IF_ERROR(requirePrimitive(t, ErrorCode::kBerBadOid, "OBJECT IDENTIFIER"));
  return Oid::fromContent(t.content, t.contentOffset());
}

Result<BitString> decodeBitString(const Tlv& t) {
  NPAC_RETURN_IF_ERROR(requirePrimitive(t, ErrorCode::kBerBadBitString, "BIT STRING"));
  if (t.content.empty())
    return Status::error(ErrorCode::kBerBadBitString, t.offset,
                         "BIT STRING without the unused-bits octet (X.690 §8.6.2)");
  const uint8_t unused = t.content[0];
  if (unused > 7 || (t.content.size() == 1 && unused != 0))
    return Status::error(ErrorCode::kBerBadBitString, t.contentOffset(),
                         "invalid unused-bits count " + std::to_string(unused));
  BitString b;
  b.unused_bits = unused;
  b.bytes.assign(t.content.begin() + 1, t.content.end());
  return b;
}

Result<GeneralizedTime> decodeGeneralizedTime(const Tlv& t) {
  NPAC_RETURN_IF_ERROR(requirePrimitive(t, ErrorCode::kBerBadTime, "GeneralizedTime"));
  return GeneralizedTime::parse(std::string_view(reinterpret_cast<const char*>(t.content.data()), t.content.size()), t.offset);
}

Result<OpaqueBer> decodeOpaque(const Tlv& t) { return OpaqueBer{std::vector<uint8_t>(t.encoded.begin(), t.encoded.end())}; }

// ---- EXTERNAL, X.690 §8.18 ---------------------------------------------------------

Result<External> decodeExternal(const Tlv& t, const DecodeLimits& limits) {
  if (!t.tag.constructed) return Status::error(ErrorCode::kBerBadExternal, t.offset, "EXTERNAL must be constructed");
  if (limits.max_depth < 1)
    return Status::error(ErrorCode::kBerDepthExceeded, t.offset, "nesting deeper than the limit");
  BerReader r(t.content, limits, t.contentOffset(), 1);
  External e;
  if (r.nextIs(kTagOid)) {
    NPAC_ASSIGN_OR_RETURN(e.direct_reference, r.readOid());
  }
  if (r.nextIs(kTagInteger)) {
    NPAC_ASSIGN_OR_RETURN(e.indirect_reference, r.readInteger());
  }
  if (r.nextIs(kTagObjectDescriptor)) {
    NPAC_ASSIGN_OR_RETURN(Tlv d, r.next());
    NPAC_ASSIGN_OR_RETURN(e.data_value_descriptor, decodeString(d, StringKind::kGraphic, limits));
  }
  if (r.atEnd()) return Status::error(ErrorCode::kBerBadExternal, r.offset(), "EXTERNAL without an encoding choice");
  NPAC_ASSIGN_OR_RETURN(Tlv enc, r.next());
  if (enc.tag == Tag::context(0, true)) {
    e.encoding = External::Encoding::kSingleAsn1Type;
    NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(enc));
    NPAC_ASSIGN_OR_RETURN(Tlv inner, in.next());
    NPAC_RETURN_IF_ERROR(in.expectEnd());
    e.data.assign(inner.encoded.begin(), inner.encoded.end());
  } else if (enc.tag == Tag::context(1)) {
    e.encoding = External::Encoding::kOctetAligned;
    e.data.assign(enc.content.begin(), enc.content.end());
  } else if (enc.tag == Tag::context(2)) {
    e.encoding = External::Encoding::kArbitrary;
    NPAC_ASSIGN_OR_RETURN(BitString b, decodeBitString(enc));
    e.data = std::move(b.bytes);
    e.arbitrary_unused_bits = b.unused_bits;
  } else {
    return Status::error(ErrorCode::kBerBadExternal, enc.offset, "unknown EXTERNAL encoding " + enc.tag.toString());
  }
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return e;
}

}  // namespace npac::cmip
