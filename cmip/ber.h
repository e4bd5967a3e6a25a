// BER (ITU-T X.690) reading and writing for the cmip/ stack.
//
// Reading is zero-copy: BerReader walks a std::span<const uint8_t> and yields Tlv views
// (tag, header length, content span into the caller's buffer). Nothing is copied until a
// typed decoder (decodeInteger, decodeOid, decodeString, ...) turns a Tlv into a value.
// Every read is bounds-checked; DecodeLimits caps nesting depth (default 32, counted by
// BerReader::enter and by the indefinite-length scan) and PDU size (default 64 KiB).
// Indefinite lengths (X.690 §8.1.3.6) are accepted on decode; the Tlv's content then
// excludes the end-of-contents octets. Errors are Status values with a specific
// ErrorCode and the offset relative to the buffer given to the top-level reader.
//
//   BerReader r(bytes);                                   // one PDU
//   NPAC_ASSIGN_OR_RETURN(Tlv seq, r.expect(kTagSequence));
//   NPAC_ASSIGN_OR_RETURN(BerReader in, r.enter(seq));
//   NPAC_ASSIGN_OR_RETURN(int64_t id, in.readInteger());
//
// Writing always uses definite, minimal lengths (X.690 §8.1.3.2 a). BerWriter appends to
// an EncodeBuffer front to back; beginConstructed() reserves one length octet and
// endConstructed() patches it (moving the content only when a long-form length is
// needed). EncodeBuffer keeps headroom in front of the data so that lower layers
// (presentation, session, COTP, TPKT) prepend their headers without copying the payload:
// see prependTlvHeader().
//
//   EncodeBuffer buf;
//   BerWriter w(buf);
//   size_t seq = w.beginConstructed(kTagSequence);
//   w.writeInteger(42);
//   w.writeOid(Oid{2, 9, 0, 0, 2});
//   w.endConstructed(seq);
//
// An already-encoded value (CMIP action/event information) travels as OpaqueBer: the
// complete TLV bytes, checked well-formed on decode and written verbatim on encode.
//
// Threading: readers, writers and buffers are single-threaded values; distinct objects
// may be used on distinct threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmip/result.h"

namespace npac::cmip {

using Bytes = std::span<const uint8_t>;

// X.690 §8.1.2.2 table 1.
enum class TagClass : uint8_t {
  kUniversal = 0,
  kApplication = 1,
  kContextSpecific = 2,
  kPrivate = 3,
};

struct Tag {
  TagClass cls = TagClass::kUniversal;
  bool constructed = false;
  uint32_t number = 0;

  static constexpr Tag universal(uint32_t n, bool c = false) { return {TagClass::kUniversal, c, n}; }
  static constexpr Tag application(uint32_t n, bool c = false) { return {TagClass::kApplication, c, n}; }
  static constexpr Tag context(uint32_t n, bool c = false) { return {TagClass::kContextSpecific, c, n}; }
  static constexpr Tag privateUse(uint32_t n, bool c = false) { return {TagClass::kPrivate, c, n}; }

  constexpr bool operator==(const Tag&) const = default;
  std::string toString() const;  // "[UNIVERSAL 16] constructed", "[2] primitive"
};

// Universal tag numbers, X.680 §8.4 table 1.
namespace universal_tag {
inline constexpr uint32_t kBoolean = 1;
inline constexpr uint32_t kInteger = 2;
inline constexpr uint32_t kBitString = 3;
inline constexpr uint32_t kOctetString = 4;
inline constexpr uint32_t kNull = 5;
inline constexpr uint32_t kObjectIdentifier = 6;
inline constexpr uint32_t kObjectDescriptor = 7;
inline constexpr uint32_t kExternal = 8;
inline constexpr uint32_t kReal = 9;
inline constexpr uint32_t kEnumerated = 10;
inline constexpr uint32_t kUtf8String = 12;
inline constexpr uint32_t kSequence = 16;
inline constexpr uint32_t kSet = 17;
inline constexpr uint32_t kPrintableString = 19;
inline constexpr uint32_t kIa5String = 22;
inline constexpr uint32_t kUtcTime = 23;
inline constexpr uint32_t kGeneralizedTime = 24;
inline constexpr uint32_t kGraphicString = 25;
inline constexpr uint32_t kVisibleString = 26;
inline constexpr uint32_t kGeneralString = 27;
}  // namespace universal_tag

inline constexpr Tag kTagBoolean = Tag::universal(universal_tag::kBoolean);
inline constexpr Tag kTagInteger = Tag::universal(universal_tag::kInteger);
inline constexpr Tag kTagBitString = Tag::universal(universal_tag::kBitString);
inline constexpr Tag kTagOctetString = Tag::universal(universal_tag::kOctetString);
inline constexpr Tag kTagNull = Tag::universal(universal_tag::kNull);
inline constexpr Tag kTagOid = Tag::universal(universal_tag::kObjectIdentifier);
inline constexpr Tag kTagObjectDescriptor = Tag::universal(universal_tag::kObjectDescriptor);
inline constexpr Tag kTagExternal = Tag::universal(universal_tag::kExternal, true);
inline constexpr Tag kTagEnumerated = Tag::universal(universal_tag::kEnumerated);
inline constexpr Tag kTagUtf8String = Tag::universal(universal_tag::kUtf8String);
inline constexpr Tag kTagSequence = Tag::universal(universal_tag::kSequence, true);
inline constexpr Tag kTagSet = Tag::universal(universal_tag::kSet, true);
inline constexpr Tag kTagPrintableString = Tag::universal(universal_tag::kPrintableString);
inline constexpr Tag kTagIa5String = Tag::universal(universal_tag::kIa5String);
inline constexpr Tag kTagGeneralizedTime = Tag::universal(universal_tag::kGeneralizedTime);
inline constexpr Tag kTagGraphicString = Tag::universal(universal_tag::kGraphicString);
inline constexpr Tag kTagVisibleString = Tag::universal(universal_tag::kVisibleString);

struct DecodeLimits {
  size_t max_depth = 32;          // constructed encodings nested inside the outermost one
  size_t max_pdu_size = 64 * 1024;
};

// One decoded TLV, viewing the caller's buffer.
struct Tlv {
  Tag tag;
  size_t offset = 0;         // of the identifier octet, relative to the top-level buffer
  size_t header_length = 0;  // identifier + length octets
  bool indefinite = false;
  Bytes content;             // contents octets (without end-of-contents)
  Bytes encoded;             // the whole TLV, header to end (incl. end-of-contents)

  size_t contentOffset() const { return offset + header_length; }
};

// A complete, already-encoded BER value carried opaquely (X.711 action/event info,
// attribute values the codec does not interpret).
struct OpaqueBer {
  std::vector<uint8_t> bytes;  // one whole TLV
  bool operator==(const OpaqueBer&) const = default;
};

// OBJECT IDENTIFIER (X.690 §8.19) held in its encoded content form, so decode, encode and
// comparison are byte copies; arcs() and toString() compute the dotted form.
class Oid {
 public:
  Oid() = default;
  Oid(std::initializer_list<uint64_t> arcs);  // must be a valid OID (checked by assert)
  static Result<Oid> fromArcs(std::span<const uint64_t> arcs);
  static Result<Oid> parse(std::string_view dotted);  // "2.9.0.0.2"
  static Result<Oid> fromContent(Bytes content, size_t offset = 0);

  std::vector<uint64_t> arcs() const;
  std::string toString() const;
  Bytes content() const { return content_; }
  bool empty() const { return content_.empty(); }
  bool operator==(const Oid&) const = default;
  auto operator<=>(const Oid&) const = default;

 private:
  std::vector<uint8_t> content_;
};

// BIT STRING (X.690 §8.6). Bit 0 is the most significant bit of the first octet.
struct BitString {
  std::vector<uint8_t> bytes;
  uint8_t unused_bits = 0;  // 0..7, always 0 when bytes is empty

  static BitString withBits(size_t bit_count);
  size_t bitCount() const { return bytes.size() * 8 - unused_bits; }
  bool bit(size_t i) const;
  void setBit(size_t i, bool value = true);  // i < bitCount()
  bool operator==(const BitString&) const = default;
};

// GeneralizedTime (X.680 §46; X.690 §11.7 canonical form on encode): YYYYMMDDHHMMSS,
// optional fraction of a second in milliseconds, and 'Z' (UTC) or a local time.
struct GeneralizedTime {
  int year = 1970;
  int month = 1;
  int day = 1;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int millisecond = 0;
  bool utc = true;

  static Result<GeneralizedTime> parse(std::string_view text, size_t offset = 0);
  static GeneralizedTime fromUnixMillis(int64_t millis);  // UTC
  int64_t toUnixMillis() const;                           // treats local time as UTC
  std::string toString() const;  // "20261129145913Z" or "20261129145913.250Z"
  bool operator==(const GeneralizedTime&) const = default;
};

enum class StringKind {
  kOctets,      // no repertoire check
  kPrintable,   // X.680 §41.4 table 10
  kVisible,     // 0x20..0x7E
  kGraphic,     // ISO 646 graphic characters (0x20..0x7E) as CMIP uses it
  kIa5,         // 0x00..0x7F
  kUtf8,        // well-formed UTF-8
};

// EXTERNAL (X.690 §8.18, 1994 form).
struct External {
  enum class Encoding { kSingleAsn1Type = 0, kOctetAligned = 1, kArbitrary = 2 };
  std::optional<Oid> direct_reference;
  std::optional<int64_t> indirect_reference;
  std::optional<std::string> data_value_descriptor;
  Encoding encoding = Encoding::kSingleAsn1Type;
  // kSingleAsn1Type: the whole TLV of the inner value. kOctetAligned: the octets.
  // kArbitrary: the bit string octets (unused bits in `arbitrary_unused_bits`).
  std::vector<uint8_t> data;
  uint8_t arbitrary_unused_bits = 0;
  bool operator==(const External&) const = default;
};

// Cursor over a sequence of TLVs (the content of one constructed value, or a whole PDU).
class BerReader {
 public:
  // base_offset: offset of data[0] in the top-level buffer (for error messages).
  explicit BerReader(Bytes data, const DecodeLimits& limits = DecodeLimits{},
                     size_t base_offset = 0, size_t depth = 0);

  bool atEnd() const { return pos_ >= data_.size(); }
  size_t offset() const { return base_ + pos_; }  // absolute position of the cursor
  size_t depth() const { return depth_; }
  const DecodeLimits& limits() const { return limits_; }

  Result<Tlv> next();               // read the next TLV and advance
  Result<Tlv> peek() const;         // read without advancing
  bool nextIs(Tag tag) const;       // true if a next TLV exists and has `tag`
  Result<Tlv> expect(Tag tag);      // next() that must have `tag` (kBerUnexpectedTag)
  // If the next TLV has `tag`, consume it; otherwise nothing (std::nullopt).
  Result<std::optional<Tlv>> optional(Tag tag);
  Status expectEnd() const;         // kBerTrailingData unless atEnd()

  // A reader over a constructed TLV's content, one level deeper (kBerDepthExceeded).
  Result<BerReader> enter(const Tlv& tlv) const;

  // Typed reads of the next element (tag defaults to the universal one).
  Result<int64_t> readInteger(Tag tag = kTagInteger);
  Result<int64_t> readEnumerated(Tag tag = kTagEnumerated);
  Result<bool> readBoolean(Tag tag = kTagBoolean);
  Result<Oid> readOid(Tag tag = kTagOid);
  Status readNull(Tag tag = kTagNull);

 private:
  Bytes data_;
  DecodeLimits limits_;
  size_t base_ = 0;
  size_t pos_ = 0;
  size_t depth_ = 0;
};

// Decodes exactly one TLV spanning all of `data` (kBerTrailingData otherwise), after
// checking data.size() against limits.max_pdu_size.
Result<Tlv> decodeSingleTlv(Bytes data, const DecodeLimits& limits = DecodeLimits{});

// Primitive decoders: check the form (primitive) and content rules; offsets in errors
// come from tlv.offset.
Result<int64_t> decodeInteger(const Tlv& tlv);        // X.690 §8.3, fits int64
Result<Bytes> decodeIntegerBytes(const Tlv& tlv);     // arbitrary length, minimal
Result<bool> decodeBoolean(const Tlv& tlv);           // X.690 §8.2
Status decodeNull(const Tlv& tlv);                    // X.690 §8.8
Result<Oid> decodeOid(const Tlv& tlv);                // X.690 §8.19
Result<BitString> decodeBitString(const Tlv& tlv);    // X.690 §8.6 (primitive)
Result<Bytes> decodeOctetStringView(const Tlv& tlv);  // X.690 §8.7 primitive, no copy
// Primitive or constructed (X.690 §8.7.3 / §8.23.6) with the repertoire check of `kind`.
Result<std::string> decodeString(const Tlv& tlv, StringKind kind,
                                 const DecodeLimits& limits = DecodeLimits{});
Result<GeneralizedTime> decodeGeneralizedTime(const Tlv& tlv);
Result<External> decodeExternal(const Tlv& tlv, const DecodeLimits& limits = DecodeLimits{});
Result<OpaqueBer> decodeOpaque(const Tlv& tlv);       // copies tlv.encoded
bool isValidString(std::string_view s, StringKind kind);

// Contiguous output bytes with headroom in front for headers of lower layers.
class EncodeBuffer {
 public:
  static constexpr size_t kDefaultHeadroom = 96;  // PPDU+SPDU+COTP DT+TPKT headers
  explicit EncodeBuffer(size_t headroom = kDefaultHeadroom, size_t tailroom = 256);
  EncodeBuffer(EncodeBuffer&&) noexcept = default;
  EncodeBuffer& operator=(EncodeBuffer&&) noexcept = default;
  EncodeBuffer(const EncodeBuffer&) = delete;
  EncodeBuffer& operator=(const EncodeBuffer&) = delete;

  size_t size() const { return end_ - begin_; }
  bool empty() const { return end_ == begin_; }
  uint8_t* data() { return storage_.get() + begin_; }
  const uint8_t* data() const { return storage_.get() + begin_; }
  Bytes view() const { return Bytes(data(), size()); }
  std::vector<uint8_t> toVector() const { return {data(), data() + size()}; }
  void clear(size_t headroom = kDefaultHeadroom);

  void append(uint8_t b) { *appendUninitialized(1) = b; }
  void append(Bytes b);
  uint8_t* appendUninitialized(size_t n);  // pointer valid until the next grow
  void prepend(uint8_t b) { *prependUninitialized(1) = b; }
  void prepend(Bytes b);
  uint8_t* prependUninitialized(size_t n);
  void truncateFront(size_t n);  // drop n bytes from the front (n <= size())

 private:
  void grow(size_t need_front, size_t need_back);

  std::unique_ptr<uint8_t[]> storage_;
  size_t capacity_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
};

// Identifier and length octets (X.690 §8.1.2, §8.1.3 definite minimal form).
size_t encodeTag(Tag tag, uint8_t* out);        // out has room for kMaxTagOctets
size_t encodeLength(size_t length, uint8_t* out);  // out has room for kMaxLengthOctets
size_t tagSize(Tag tag);
size_t lengthSize(size_t length);
inline constexpr size_t kMaxTagOctets = 6;
inline constexpr size_t kMaxLengthOctets = 9;
inline constexpr size_t kMaxHeaderOctets = kMaxTagOctets + kMaxLengthOctets;
// Prepends tag + length(content_length) in front of `buf` (whose tail is the content).
void prependTlvHeader(EncodeBuffer& buf, Tag tag, size_t content_length);

class BerWriter {
 public:
  explicit BerWriter(EncodeBuffer& out) : out_(out) {}

  // Marker-based constructed encoding: the content is whatever is appended between.
  size_t beginConstructed(Tag tag);
  void endConstructed(size_t marker);

  void writePrimitive(Tag tag, Bytes content);
  void writeBoolean(bool value, Tag tag = kTagBoolean);
  void writeInteger(int64_t value, Tag tag = kTagInteger);
  void writeIntegerBytes(Bytes twos_complement, Tag tag = kTagInteger);  // minimal
  void writeEnumerated(int64_t value, Tag tag = kTagEnumerated) { writeInteger(value, tag); }
  void writeNull(Tag tag = kTagNull);
  void writeOid(const Oid& oid, Tag tag = kTagOid);
  void writeBitString(const BitString& bits, Tag tag = kTagBitString);
  void writeOctetString(Bytes octets, Tag tag = kTagOctetString) { writePrimitive(tag, octets); }
  void writeString(std::string_view s, Tag tag);  // caller picks kTagPrintableString etc.
  void writeGeneralizedTime(const GeneralizedTime& t, Tag tag = kTagGeneralizedTime);
  void writeExternal(const External& ext, Tag tag = kTagExternal);
  void writeRaw(Bytes encoded_tlv) { out_.append(encoded_tlv); }
  void writeOpaque(const OpaqueBer& v) { out_.append(v.bytes); }

  EncodeBuffer& buffer() { return out_; }

 private:
  void writeHeader(Tag tag, size_t length);
  EncodeBuffer& out_;
};

// Encodes the minimal two's complement of `value` into out[0..n); returns n (1..8).
size_t integerContent(int64_t value, uint8_t* out);

}  // namespace npac::cmip
