// BER reader, writer, tag/length codec and EncodeBuffer (X.690 §8.1). The value types
// (Oid, BitString, GeneralizedTime, strings, EXTERNAL) live in ber_values.cc.
#include "cmip/ber.h"

#include <cstring>
#include <string>

namespace npac::cmip {
namespace {

// X.690 §8.1.2.2: bits 8-7 class, bit 6 constructed, bits 5-1 number (31 = high form).
constexpr uint8_t kConstructedBit = 0x20;
constexpr uint8_t kHighTagNumber = 0x1F;
constexpr uint8_t kMoreOctetsBit = 0x80;   // §8.1.2.4.2 a
constexpr uint8_t kLongLengthBit = 0x80;   // §8.1.3.5
constexpr uint8_t kIndefiniteLength = 0x80;  // §8.1.3.6
constexpr uint8_t kReservedLength = 0xFF;    // §8.1.3.5 c
constexpr size_t kMaxLengthBytes = 8;

struct Header {
  Tag tag;
  size_t header_length = 0;
  bool indefinite = false;
  size_t length = 0;  // definite length
};

Result<Header> parseHeaderSlow(Bytes data, size_t pos, size_t base);

// Parses identifier and length octets at data[pos] into `h`. Offsets in errors are
// base + pos. The common case (low tag number, short definite length) is inline.
inline Status parseHeader(Bytes data, size_t pos, size_t base, Header& h) {
  if (data.size() - pos >= 2 && pos < data.size()) {
    const uint8_t first = data[pos];
    const uint8_t l0 = data[pos + 1];
    if ((first & kHighTagNumber) != kHighTagNumber && l0 < kLongLengthBit && l0 <= data.size() - pos - 2) {
      h.tag = Tag{static_cast<TagClass>(first >> 6), (first & kConstructedBit) != 0, static_cast<uint32_t>(first & kHighTagNumber)};
      h.header_length = 2;
      h.indefinite = false;
      h.length = l0;
      return Status::ok();
    }
  }
  Result<Header> r = parseHeaderSlow(data, pos, base);
  if (!r.isOk()) return std::move(r).status();
  h = *r;
  return Status::ok();
}

Result<Header> parseHeaderSlow(Bytes data, size_t pos, size_t base) {
  const size_t start = pos;
  if (pos >= data.size()) return Status::error(ErrorCode::kBerTruncated, base + pos, "missing identifier octet");
  Header h;
  const uint8_t first = data[pos++];
  h.tag.cls = static_cast<TagClass>(first >> 6);
  h.tag.constructed = (first & kConstructedBit) != 0;
  uint32_t number = first & kHighTagNumber;
  if (number == kHighTagNumber) {
    // §8.1.2.4: base-128 subsequent octets, first one not 0x80, number fits 32 bits.
    uint64_t n = 0;
    size_t count = 0;
    for (;;) {
      if (pos >= data.size())
        return Status::error(ErrorCode::kBerTruncated, base + pos, "high tag number runs past the end");
      const uint8_t b = data[pos++];
      if (count == 0 && b == kMoreOctetsBit)
        return Status::error(ErrorCode::kBerOverlongTag, base + pos - 1,
                             "high tag number has a leading zero septet (X.690 §8.1.2.4.2 c)");
      n = (n << 7) | (b & 0x7F);
      if (++count > 5 || n > UINT32_MAX)
        return Status::error(ErrorCode::kBerOverlongTag, base + start, "tag number does not fit 32 bits");
      if ((b & kMoreOctetsBit) == 0) break;
    }
    if (n < kHighTagNumber)
      return Status::error(ErrorCode::kBerOverlongTag, base + start,
                           "tag number " + std::to_string(n) + " must use the low-tag form (X.690 §8.1.2.2)");
    number = static_cast<uint32_t>(n);
  }
  h.tag.number = number;
  if (pos >= data.size()) return Status::error(ErrorCode::kBerTruncated, base + pos, "missing length octet");
  const uint8_t l0 = data[pos++];
  if (l0 == kIndefiniteLength) {
    if (!h.tag.constructed)
      return Status::error(ErrorCode::kBerIndefinitePrimitive, base + start,
                           "indefinite length on a primitive encoding (X.690 §8.1.3.2 a)");
    h.indefinite = true;
  } else if (l0 & kLongLengthBit) {
    if (l0 == kReservedLength)
      return Status::error(ErrorCode::kBerOverlongLength, base + pos - 1,
                           "length octet 0xFF is reserved (X.690 §8.1.3.5 c)");
    const size_t count = l0 & 0x7F;
    if (count > kMaxLengthBytes)
      return Status::error(ErrorCode::kBerOverlongLength, base + pos - 1, std::to_string(count) + " length octets");
    if (data.size() - pos < count)
      return Status::error(ErrorCode::kBerTruncated, base + pos, "length octets run past the end");
    uint64_t len = 0;
    for (size_t i = 0; i < count; ++i) len = (len << 8) | data[pos++];
    h.length = static_cast<size_t>(len);
    if (len > data.size() - pos)
      return Status::error(
          ErrorCode::kBerLengthPastBuffer, base + start,
          "length " + std::to_string(len) + " but " + std::to_string(data.size() - pos) + " bytes remain");
  } else {
    h.length = l0;
    if (h.length > data.size() - pos)
      return Status::error(
          ErrorCode::kBerLengthPastBuffer, base + start,
          "length " + std::to_string(h.length) + " but " + std::to_string(data.size() - pos) + " bytes remain");
  }
  h.header_length = pos - start;
  return h;
}

// Finds the end-of-contents matching an indefinite length whose contents start at
// data[pos]. Returns the position of the 00 00. `depth` counts the enclosing levels.
Result<size_t> scanIndefinite(Bytes data, size_t pos, size_t base, size_t depth, const DecodeLimits& limits) {
  if (depth > limits.max_depth)
    return Status::error(ErrorCode::kBerDepthExceeded, base + pos,
                         "nesting deeper than " + std::to_string(limits.max_depth));
  for (;;) {
    if (data.size() - pos >= 2 && data[pos] == 0 && data[pos + 1] == 0) return pos;
    if (pos >= data.size())
      return Status::error(ErrorCode::kBerMissingEndOfContents, base + pos,
                           "indefinite length without end-of-contents");
    Header h;
    NPAC_RETURN_IF_ERROR(parseHeader(data, pos, base, h));
    pos += h.header_length;
    if (h.indefinite) {
      NPAC_ASSIGN_OR_RETURN(size_t eoc, scanIndefinite(data, pos, base, depth + 1, limits));
      pos = eoc + 2;
    } else {
      pos += h.length;
    }
  }
}

}  // namespace

std::string Tag::toString() const {
  static const char* const kClassNames[] = {"UNIVERSAL ", "APPLICATION ", "", "PRIVATE "};
  // Appended piece by piece: `"[" + std::string(...)` trips g++ 12's false -Wrestrict
  // (GCC bug 105329) at -O3.
  std::string out = "[";
  out += kClassNames[static_cast<int>(cls) & 3];
  out += std::to_string(number);
  out += "] ";
  out += constructed ? "constructed" : "primitive";
  return out;
}

BerReader::BerReader(Bytes data, const DecodeLimits& limits, size_t base_offset, size_t depth)
    : data_(data), limits_(limits), base_(base_offset), depth_(depth) {}

Result<Tlv> BerReader::peek() const {
  Header h;
  NPAC_RETURN_IF_ERROR(parseHeader(data_, pos_, base_, h));
  Tlv t;
  t.tag = h.tag;
  t.offset = base_ + pos_;
  t.header_length = h.header_length;
  t.indefinite = h.indefinite;
  const size_t content_start = pos_ + h.header_length;
  size_t total;
  if (h.indefinite) {
    NPAC_ASSIGN_OR_RETURN(size_t eoc, scanIndefinite(data_, content_start, base_, depth_ + 1, limits_));
    t.content = data_.subspan(content_start, eoc - content_start);
    total = eoc + 2 - pos_;
  } else {
    t.content = data_.subspan(content_start, h.length);
    total = h.header_length + h.length;
  }
  if (total > limits_.max_pdu_size)
    return Status::error(ErrorCode::kBerPduTooLarge, t.offset,
                         "element of " + std::to_string(total) + " bytes exceeds the " +
                             std::to_string(limits_.max_pdu_size) + "-byte limit");
  t.encoded = data_.subspan(pos_, total);
  return t;
}

Result<Tlv> BerReader::next() {
  Result<Tlv> r = peek();
  if (r.isOk()) pos_ += r->encoded.size();
  return r;
}

bool BerReader::nextIs(Tag tag) const {
  if (atEnd()) return false;
  Header h;
  return parseHeader(data_, pos_, base_, h).isOk() && h.tag == tag;
}

Result<Tlv> BerReader::expect(Tag tag) {
  if (atEnd())
    return Status::error(ErrorCode::kBerMissingElement, offset(),
                         "expected " + tag.toString() + ", found end of contents");
  Result<Tlv> t = peek();
  if (!t.isOk()) return t;
  if (!(t->tag == tag))
    return Status::error(ErrorCode::kBerUnexpectedTag, t->offset,
                         "expected " + tag.toString() + ", found " + t->tag.toString());
  pos_ += t->encoded.size();
  return t;
}

Result<std::optional<Tlv>> BerReader::optional(Tag tag) {
  if (!nextIs(tag)) return std::optional<Tlv>();
  NPAC_ASSIGN_OR_RETURN(Tlv t, next());
  return std::optional<Tlv>(t);
}

Status BerReader::expectEnd() const {
  if (atEnd()) return Status::ok();
  return Status::error(ErrorCode::kBerTrailingData, offset(),
                       std::to_string(data_.size() - pos_) + " unexpected bytes after the last element");
}

Result<BerReader> BerReader::enter(const Tlv& tlv) const {
  if (!tlv.tag.constructed)
    return Status::error(ErrorCode::kBerUnexpectedTag, tlv.offset,
                         tlv.tag.toString() + " where a constructed encoding is required");
  if (depth_ + 1 > limits_.max_depth)
    return Status::error(ErrorCode::kBerDepthExceeded, tlv.offset,
                         "nesting deeper than " + std::to_string(limits_.max_depth));
  return BerReader(tlv.content, limits_, tlv.contentOffset(), depth_ + 1);
}

Result<int64_t> BerReader::readInteger(Tag tag) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, expect(tag));
  return decodeInteger(t);
}
Result<int64_t> BerReader::readEnumerated(Tag tag) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, expect(tag));
  return decodeInteger(t);
}
Result<bool> BerReader::readBoolean(Tag tag) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, expect(tag));
  return decodeBoolean(t);
}
Result<Oid> BerReader::readOid(Tag tag) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, expect(tag));
  return decodeOid(t);
}
Status BerReader::readNull(Tag tag) {
  NPAC_ASSIGN_OR_RETURN(Tlv t, expect(tag));
  return decodeNull(t);
}

Result<Tlv> decodeSingleTlv(Bytes data, const DecodeLimits& limits) {
  if (data.size() > limits.max_pdu_size)
    return Status::error(ErrorCode::kBerPduTooLarge, 0,
                         "PDU of " + std::to_string(data.size()) + " bytes exceeds the " +
                             std::to_string(limits.max_pdu_size) + "-byte limit");
  BerReader r(data, limits);
  NPAC_ASSIGN_OR_RETURN(Tlv t, r.next());
  NPAC_RETURN_IF_ERROR(r.expectEnd());
  return t;
}

// ---- encoding -------------------------------------------------------------

size_t tagSize(Tag tag) {
  if (tag.number < kHighTagNumber) return 1;
  size_t n = 1;
  for (uint32_t v = tag.number; v; v >>= 7) ++n;
  return n;
}

size_t encodeTag(Tag tag, uint8_t* out) {
  const uint8_t lead = static_cast<uint8_t>((static_cast<uint8_t>(tag.cls) << 6) | (tag.constructed ? kConstructedBit : 0));
  if (tag.number < kHighTagNumber) {
    out[0] = lead | static_cast<uint8_t>(tag.number);
    return 1;
  }
  out[0] = lead | kHighTagNumber;
  const size_t n = tagSize(tag);
  uint32_t v = tag.number;
  for (size_t i = n - 1; i >= 1; --i) {
    out[i] = static_cast<uint8_t>((v & 0x7F) | (i == n - 1 ? 0 : kMoreOctetsBit));
    v >>= 7;
  }
  return n;
}

size_t lengthSize(size_t length) {
  if (length < 0x80) return 1;
  size_t n = 1;
  for (size_t v = length; v; v >>= 8) ++n;
  return n;
}

size_t encodeLength(size_t length, uint8_t* out) {
  if (length < 0x80) {
    out[0] = static_cast<uint8_t>(length);
    return 1;
  }
  const size_t n = lengthSize(length);
  out[0] = static_cast<uint8_t>(kLongLengthBit | (n - 1));
  size_t v = length;
  for (size_t i = n - 1; i >= 1; --i) {
    out[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
  return n;
}

void prependTlvHeader(EncodeBuffer& buf, Tag tag, size_t content_length) {
  uint8_t hdr[kMaxHeaderOctets];
  size_t n = encodeTag(tag, hdr);
  n += encodeLength(content_length, hdr + n);
  buf.prepend(Bytes(hdr, n));
}

EncodeBuffer::EncodeBuffer(size_t headroom, size_t tailroom)
    : storage_(new uint8_t[headroom + tailroom]), capacity_(headroom + tailroom), begin_(headroom), end_(headroom) {}

void EncodeBuffer::clear(size_t headroom) {
  if (headroom > capacity_) grow(headroom, 0);
  begin_ = end_ = headroom;
}

void EncodeBuffer::grow(size_t need_front, size_t need_back) {
  const size_t len = size();
  const size_t front = std::max(need_front, begin_) + need_front + 32;
  const size_t back = std::max(need_back, capacity_ - end_) + need_back + len;
  std::unique_ptr<uint8_t[]> fresh(new uint8_t[front + len + back]);
  if (len) std::memcpy(fresh.get() + front, data(), len);
  storage_ = std::move(fresh);
  capacity_ = front + len + back;
  begin_ = front;
  end_ = front + len;
}

uint8_t* EncodeBuffer::appendUninitialized(size_t n) {
  if (capacity_ - end_ < n) grow(0, n);
  uint8_t* p = storage_.get() + end_;
  end_ += n;
  return p;
}

void EncodeBuffer::append(Bytes b) {
  if (b.empty()) return;
  std::memcpy(appendUninitialized(b.size()), b.data(), b.size());
}

uint8_t* EncodeBuffer::prependUninitialized(size_t n) {
  if (begin_ < n) grow(n, 0);
  begin_ -= n;
  return storage_.get() + begin_;
}

void EncodeBuffer::prepend(Bytes b) {
  if (b.empty()) return;
  std::memcpy(prependUninitialized(b.size()), b.data(), b.size());
}

void EncodeBuffer::truncateFront(size_t n) { begin_ += std::min(n, size()); }

void BerWriter::writeHeader(Tag tag, size_t length) {
  uint8_t hdr[kMaxHeaderOctets];
  size_t n = encodeTag(tag, hdr);
  n += encodeLength(length, hdr + n);
  out_.append(Bytes(hdr, n));
}

size_t BerWriter::beginConstructed(Tag tag) {
  tag.constructed = true;
  uint8_t hdr[kMaxTagOctets];
  out_.append(Bytes(hdr, encodeTag(tag, hdr)));
  const size_t marker = out_.size();
  out_.append(0);  // short-form placeholder, patched by endConstructed
  return marker;
}

void BerWriter::endConstructed(size_t marker) {
  const size_t content_start = marker + 1;
  const size_t len = out_.size() - content_start;
  if (len < 0x80) {
    out_.data()[marker] = static_cast<uint8_t>(len);
    return;
  }
  // Long form: make room for the extra length octets and slide the content right.
  const size_t extra = lengthSize(len) - 1;
  out_.appendUninitialized(extra);
  uint8_t* base = out_.data();
  std::memmove(base + content_start + extra, base + content_start, len);
  encodeLength(len, base + marker);
}

void BerWriter::writePrimitive(Tag tag, Bytes content) {
  writeHeader(tag, content.size());
  out_.append(content);
}

void BerWriter::writeBoolean(bool value, Tag tag) {
  const uint8_t v = value ? 0xFF : 0x00;  // X.690 §11.1 canonical TRUE
  writePrimitive(tag, Bytes(&v, 1));
}

size_t integerContent(int64_t value, uint8_t* out) {
  size_t n = 8;
  // Drop leading octets while the first 9 bits are all equal (X.690 §8.3.2).
  while (n > 1) {
    const int64_t top9 = value >> ((n - 1) * 8 - 1);
    if (top9 != 0 && top9 != -1) break;
    --n;
  }
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> ((n - 1 - i) * 8));
  return n;
}

void BerWriter::writeInteger(int64_t value, Tag tag) {
  uint8_t c[8];
  writePrimitive(tag, Bytes(c, integerContent(value, c)));
}

void BerWriter::writeIntegerBytes(Bytes v, Tag tag) {
  size_t skip = 0;
  while (v.size() - skip > 1 &&
         ((v[skip] == 0x00 && !(v[skip + 1] & 0x80)) || (v[skip] == 0xFF && (v[skip + 1] & 0x80))))
    ++skip;
  if (v.empty()) {
    const uint8_t zero = 0;
    writePrimitive(tag, Bytes(&zero, 1));
    return;
  }
  writePrimitive(tag, v.subspan(skip));
}

void BerWriter::writeNull(Tag tag) { writeHeader(tag, 0); }

void BerWriter::writeOid(const Oid& oid, Tag tag) { writePrimitive(tag, oid.content()); }

void BerWriter::writeBitString(const BitString& bits, Tag tag) {
  writeHeader(tag, bits.bytes.size() + 1);
  out_.append(bits.bytes.empty() ? 0 : bits.unused_bits);
  out_.append(bits.bytes);
}

void BerWriter::writeString(std::string_view s, Tag tag) {
  writePrimitive(tag, Bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

void BerWriter::writeGeneralizedTime(const GeneralizedTime& t, Tag tag) { writeString(t.toString(), tag); }

void BerWriter::writeExternal(const External& ext, Tag tag) {
  const size_t m = beginConstructed(tag);
  if (ext.direct_reference) writeOid(*ext.direct_reference);
  if (ext.indirect_reference) writeInteger(*ext.indirect_reference);
  if (ext.data_value_descriptor) writeString(*ext.data_value_descriptor, kTagObjectDescriptor);
  switch (ext.encoding) {
    case External::Encoding::kSingleAsn1Type: {
      const size_t e = beginConstructed(Tag::context(0, true));
      out_.append(ext.data);
      endConstructed(e);
      break;
    }
    case External::Encoding::kOctetAligned:
      writePrimitive(Tag::context(1), ext.data);
      break;
    case External::Encoding::kArbitrary:
      writeBitString(BitString{ext.data, ext.arbitrary_unused_bits}, Tag::context(2));
      break;
  }
  endConstructed(m);
}

}  // namespace npac::cmip
