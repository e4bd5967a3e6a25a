// BER (X.690) known-answer vectors, round-trip properties and malformed input.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "cmip/ber.h"
#include "cmip/oids.h"

using namespace npac::cmip;

namespace {

std::vector<uint8_t> encodeWith(const std::function<void(BerWriter&)>& f) {
  EncodeBuffer buf;
  BerWriter w(buf);
  f(w);
  return buf.toVector();
}

Tlv single(const std::vector<uint8_t>& v, DecodeLimits limits = {}) {
  Result<Tlv> r = decodeSingleTlv(v, limits);
  REQUIRE(r.isOk());
  return *r;
}

ErrorCode decodeError(const std::vector<uint8_t>& v, DecodeLimits limits = {}) {
  Result<Tlv> r = decodeSingleTlv(v, limits);
  REQUIRE_FALSE(r.isOk());
  return r.status().code();
}

}  // namespace

TEST_CASE("INTEGER encodes in minimal two's complement (X.690 8.3)", "[ber]") {
  CHECK(encodeWith([](BerWriter& w) { w.writeInteger(0); }) == std::vector<uint8_t>{0x02, 0x01, 0x00});
  CHECK(encodeWith([](BerWriter& w) { w.writeInteger(127); }) == std::vector<uint8_t>{0x02, 0x01, 0x7F});
  CHECK(encodeWith([](BerWriter& w) { w.writeInteger(128); }) == std::vector<uint8_t>{0x02, 0x02, 0x00, 0x80});
  CHECK(encodeWith([](BerWriter& w) { w.writeInteger(-1); }) == std::vector<uint8_t>{0x02, 0x01, 0xFF});
  CHECK(encodeWith([](BerWriter& w) { w.writeInteger(-128); }) == std::vector<uint8_t>{0x02, 0x01, 0x80});
  CHECK(encodeWith([](BerWriter& w) { w.writeInteger(-129); }) == std::vector<uint8_t>{0x02, 0x02, 0xFF, 0x7F});
  CHECK(encodeWith([](BerWriter& w) { w.writeInteger(INT64_MIN); }) ==
        std::vector<uint8_t>{0x02, 0x08, 0x80, 0, 0, 0, 0, 0, 0, 0});
}

TEST_CASE("INTEGER decode refuses non-minimal content and values beyond 64 bits", "[ber]") {
  CHECK(decodeInteger(single({0x02, 0x02, 0x00, 0x7F})).status().code() == ErrorCode::kBerBadInteger);
  CHECK(decodeInteger(single({0x02, 0x00})).status().code() == ErrorCode::kBerBadInteger);
  CHECK(decodeInteger(single({0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0})).status().code() ==
        ErrorCode::kBerIntegerOverflow);
  Result<Bytes> big = decodeIntegerBytes(single({0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0}));
  REQUIRE(big.isOk());
  CHECK(big->size() == 9);
  CHECK(*decodeInteger(single({0x02, 0x02, 0xFF, 0x7F})) == -129);
}

TEST_CASE("BOOLEAN TRUE encodes as FF and any non-zero octet decodes as TRUE", "[ber]") {
  CHECK(encodeWith([](BerWriter& w) { w.writeBoolean(true); }) == std::vector<uint8_t>{0x01, 0x01, 0xFF});
  CHECK(*decodeBoolean(single({0x01, 0x01, 0x01})) == true);
  CHECK(*decodeBoolean(single({0x01, 0x01, 0x00})) == false);
  CHECK(decodeBoolean(single({0x01, 0x02, 0x00, 0x00})).status().code() == ErrorCode::kBerBadBoolean);
}

TEST_CASE("Long-form length 201 is 81 C9 and 256 is 82 01 00 (X.690 8.1.3.5)", "[ber]") {
  std::vector<uint8_t> payload(201, 0xAB);
  auto v = encodeWith([&](BerWriter& w) { w.writeOctetString(payload); });
  REQUIRE(v.size() == 204);
  CHECK(v[0] == 0x04);
  CHECK(v[1] == 0x81);
  CHECK(v[2] == 0xC9);
  payload.resize(256);
  v = encodeWith([&](BerWriter& w) { w.writeOctetString(payload); });
  CHECK((v[1] == 0x82 && v[2] == 0x01 && v[3] == 0x00));
  Tlv t = single(v);
  CHECK(t.header_length == 4);
  CHECK(t.content.size() == 256);
}

TEST_CASE("A long-form length with leading zero octets is accepted on decode", "[ber]") {
  Tlv t = single({0x04, 0x82, 0x00, 0x02, 0xAA, 0xBB});
  CHECK(t.content.size() == 2);
  CHECK(t.header_length == 4);
}

TEST_CASE("Constructed values longer than 127 bytes get a patched long-form length", "[ber]") {
  std::vector<uint8_t> payload(300, 0x11);
  auto v = encodeWith([&](BerWriter& w) {
    size_t outer = w.beginConstructed(kTagSequence);
    size_t inner = w.beginConstructed(Tag::context(3, true));
    w.writeOctetString(payload);
    w.endConstructed(inner);
    w.writeInteger(7);
    w.endConstructed(outer);
  });
  // 04 82 01 2C + 300 = 304; [3] A3 82 01 30 = 308; + 02 01 07 = 311; 30 82 01 37.
  REQUIRE(v.size() == 315);
  CHECK(std::vector<uint8_t>(v.begin(), v.begin() + 8) == std::vector<uint8_t>{0x30, 0x82, 0x01, 0x37, 0xA3, 0x82, 0x01, 0x30});
  CHECK(std::vector<uint8_t>(v.end() - 3, v.end()) == std::vector<uint8_t>{0x02, 0x01, 0x07});
  BerReader r(v);
  auto seq = r.expect(kTagSequence);
  REQUIRE(seq.isOk());
  auto in = r.enter(*seq);
  REQUIRE(in.isOk());
  auto ctx = in->expect(Tag::context(3, true));
  REQUIRE(ctx.isOk());
  CHECK(*in->readInteger() == 7);
  CHECK(in->expectEnd().isOk());
}

TEST_CASE("High tag numbers use base-128 subsequent octets (X.690 8.1.2.4)", "[ber]") {
  auto v = encodeWith([](BerWriter& w) { w.writeNull(Tag::application(1234)); });
  CHECK(v == std::vector<uint8_t>{0x5F, 0x89, 0x52, 0x00});
  v = encodeWith([](BerWriter& w) { w.writeNull(Tag::context(31)); });
  CHECK(v == std::vector<uint8_t>{0x9F, 0x1F, 0x00});
  v = encodeWith([](BerWriter& w) { w.writeNull(Tag::privateUse(30)); });
  CHECK(v == std::vector<uint8_t>{0xDE, 0x00});
  Tlv t = single({0x7F, 0x89, 0x52, 0x00});
  CHECK(t.tag == Tag::application(1234, true));
}

TEST_CASE("An overlong high tag number is refused with kBerOverlongTag", "[ber]") {
  CHECK(decodeError({0x1F, 0x80, 0x01, 0x00}) == ErrorCode::kBerOverlongTag);  // leading zero septet
  CHECK(decodeError({0x1F, 0x05, 0x00}) == ErrorCode::kBerOverlongTag);        // low number in high form
  CHECK(decodeError({0x1F, 0x90, 0x80, 0x80, 0x80, 0x00, 0x00}) == ErrorCode::kBerOverlongTag);
}

TEST_CASE("Indefinite length is accepted on decode and content excludes end-of-contents", "[ber]") {
  // SEQUENCE (indefinite) { INTEGER 5, [0] (indefinite) { NULL } }
  std::vector<uint8_t> v{0x30, 0x80, 0x02, 0x01, 0x05, 0xA0, 0x80, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00};
  Tlv t = single(v);
  CHECK(t.indefinite);
  CHECK(t.content.size() == 9);
  BerReader r(v);
  auto seq = r.next();
  REQUIRE(seq.isOk());
  auto in = r.enter(*seq);
  REQUIRE(in.isOk());
  CHECK(*in->readInteger() == 5);
  auto ctx = in->expect(Tag::context(0, true));
  REQUIRE(ctx.isOk());
  CHECK(ctx->indefinite);
  auto in2 = in->enter(*ctx);
  REQUIRE(in2.isOk());
  CHECK(in2->readNull().isOk());
  CHECK(in2->expectEnd().isOk());
  CHECK(in->expectEnd().isOk());
}

TEST_CASE("Indefinite length without end-of-contents yields kBerMissingEndOfContents", "[ber]") {
  CHECK(decodeError({0x30, 0x80, 0x02, 0x01, 0x05}) == ErrorCode::kBerMissingEndOfContents);
  CHECK(decodeError({0x04, 0x80, 0x00, 0x00}) == ErrorCode::kBerIndefinitePrimitive);
}

TEST_CASE("Truncated length octets yield kBerTruncated with the offset", "[ber]") {
  Result<Tlv> r = decodeSingleTlv(std::vector<uint8_t>{0x04, 0x82, 0x01});
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == ErrorCode::kBerTruncated);
  CHECK(r.status().offset() == 2);
  CHECK(decodeError({0x30}) == ErrorCode::kBerTruncated);
  CHECK(decodeError({}) == ErrorCode::kBerTruncated);
}

TEST_CASE("A length past the end of the buffer yields kBerLengthPastBuffer", "[ber]") {
  CHECK(decodeError({0x04, 0x05, 0x01, 0x02}) == ErrorCode::kBerLengthPastBuffer);
  CHECK(decodeError({0x04, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x00}) == ErrorCode::kBerLengthPastBuffer);
  CHECK(decodeError({0x04, 0x89, 1, 1, 1, 1, 1, 1, 1, 1, 1}) == ErrorCode::kBerOverlongLength);
  CHECK(decodeError({0x04, 0xFF, 0x00}) == ErrorCode::kBerOverlongLength);
}

TEST_CASE("A nesting bomb stops at the depth limit with kBerDepthExceeded", "[ber]") {
  // 1000 nested indefinite SEQUENCEs never closed, then 1000 nested definite ones.
  std::vector<uint8_t> bomb;
  for (int i = 0; i < 1000; ++i) bomb.insert(bomb.end(), {0x30, 0x80});
  CHECK(decodeError(bomb) == ErrorCode::kBerDepthExceeded);

  std::vector<uint8_t> nested{0x05, 0x00};
  for (int i = 0; i < 40; ++i) {
    std::vector<uint8_t> outer{0x30};
    uint8_t len[9];
    outer.insert(outer.end(), len, len + encodeLength(nested.size(), len));
    outer.insert(outer.end(), nested.begin(), nested.end());
    nested.swap(outer);
  }
  BerReader r(nested);
  Status failure;
  for (;;) {
    auto t = r.next();
    REQUIRE(t.isOk());
    if (!t->tag.constructed) break;
    auto in = r.enter(*t);
    if (!in.isOk()) {
      failure = in.status();
      break;
    }
    r = *in;
  }
  CHECK(failure.code() == ErrorCode::kBerDepthExceeded);
  CHECK(r.depth() == 32);
}

TEST_CASE("PDUs larger than max_pdu_size yield kBerPduTooLarge", "[ber]") {
  std::vector<uint8_t> payload(100, 0);
  auto v = encodeWith([&](BerWriter& w) { w.writeOctetString(payload); });
  DecodeLimits small;
  small.max_pdu_size = 64;
  CHECK(decodeError(v, small) == ErrorCode::kBerPduTooLarge);
  CHECK(decodeSingleTlv(v).isOk());
}

TEST_CASE("OBJECT IDENTIFIER 2.100.3 encodes as 81 34 03 (X.690 8.19.5)", "[ber]") {
  CHECK(encodeWith([](BerWriter& w) { w.writeOid(Oid{2, 100, 3}); }) == std::vector<uint8_t>{0x06, 0x03, 0x81, 0x34, 0x03});
  CHECK(encodeWith([](BerWriter& w) { w.writeOid(oids::kSystemsManagementContext); }) ==
        std::vector<uint8_t>{0x06, 0x04, 0x59, 0x00, 0x00, 0x02});
  CHECK(oids::kCmipAbstractSyntax.toString() == "2.9.1.1.4");
  CHECK(oids::kAcseAbstractSyntax.content().size() == 4);
  CHECK(oids::kBerTransferSyntax.toString() == "2.1.1");
  CHECK(oids::kNpacIisArc.toString() == "1.3.6.1.4.1.103.7.0.0");
}

TEST_CASE("OBJECT IDENTIFIER text form parses and refuses malformed text", "[ber]") {
  auto o = Oid::parse("2.9.0.0.2");
  REQUIRE(o.isOk());
  CHECK(*o == oids::kSystemsManagementContext);
  CHECK(Oid::parse("2").status().code() == ErrorCode::kBerBadOid);
  CHECK(Oid::parse("1.40").status().code() == ErrorCode::kBerBadOid);
  CHECK(Oid::parse("3.1").status().code() == ErrorCode::kBerBadOid);
  CHECK(Oid::parse("1..2").status().code() == ErrorCode::kBerBadOid);
  CHECK(Oid::parse("1.2.").status().code() == ErrorCode::kBerBadOid);
  CHECK(Oid::parse("1.2.99999999999999999999999").status().code() == ErrorCode::kBerBadOid);
}

TEST_CASE("OBJECT IDENTIFIER decode refuses padding and unterminated subidentifiers", "[ber]") {
  CHECK(decodeOid(single({0x06, 0x02, 0x80, 0x01})).status().code() == ErrorCode::kBerBadOid);
  CHECK(decodeOid(single({0x06, 0x02, 0x2B, 0x86})).status().code() == ErrorCode::kBerBadOid);
  CHECK(decodeOid(single({0x06, 0x00})).status().code() == ErrorCode::kBerBadOid);
}

TEST_CASE("BIT STRING carries its unused-bit count (X.690 8.6.4 example)", "[ber]") {
  BitString b{{0x0A, 0x3B, 0x5F, 0x29, 0x1C, 0xD0}, 4};
  auto v = encodeWith([&](BerWriter& w) { w.writeBitString(b); });
  CHECK(v == std::vector<uint8_t>{0x03, 0x07, 0x04, 0x0A, 0x3B, 0x5F, 0x29, 0x1C, 0xD0});
  CHECK(*decodeBitString(single(v)) == b);
  CHECK(b.bitCount() == 44);
  BitString mask = BitString::withBits(5);
  mask.setBit(0);
  mask.setBit(4);
  CHECK(mask.bytes == std::vector<uint8_t>{0x88});
  CHECK(mask.unused_bits == 3);
  CHECK(mask.bit(4));
  CHECK_FALSE(mask.bit(5));
  CHECK(decodeBitString(single({0x03, 0x01, 0x03})).status().code() == ErrorCode::kBerBadBitString);
  CHECK(decodeBitString(single({0x03, 0x02, 0x08, 0x00})).status().code() == ErrorCode::kBerBadBitString);
}

TEST_CASE("GeneralizedTime parses X.680 forms and encodes canonically", "[ber]") {
  auto t = GeneralizedTime::parse("19851106210627.3Z");
  REQUIRE(t.isOk());
  CHECK(t->millisecond == 300);
  CHECK(t->toString() == "19851106210627.3Z");
  auto local = GeneralizedTime::parse("1985110621");
  REQUIRE(local.isOk());
  CHECK_FALSE(local->utc);
  CHECK(GeneralizedTime::parse("20260230120000Z").status().code() == ErrorCode::kBerBadTime);
  CHECK(GeneralizedTime::parse("20261129120000+0100").status().code() == ErrorCode::kBerBadTime);
  GeneralizedTime g = GeneralizedTime::fromUnixMillis(1795964353250);  // 2026-11-29T14:59:13.250Z
  CHECK(g.toString() == "20261129145913.25Z");
  CHECK(g.toUnixMillis() == 1795964353250);
}

TEST_CASE("PrintableString repertoire is enforced on decode", "[ber]") {
  auto v = encodeWith([](BerWriter& w) { w.writeString("NPAC-0001 (test)", kTagPrintableString); });
  CHECK(*decodeString(single(v), StringKind::kPrintable) == "NPAC-0001 (test)");
  v = encodeWith([](BerWriter& w) { w.writeString("a@b", kTagPrintableString); });
  CHECK(decodeString(single(v), StringKind::kPrintable).status().code() == ErrorCode::kBerBadString);
  CHECK(decodeString(single(v), StringKind::kIa5).isOk());
  CHECK(isValidString("caf\xC3\xA9", StringKind::kUtf8));
  CHECK_FALSE(isValidString("caf\xC3", StringKind::kUtf8));
  CHECK_FALSE(isValidString("tab\t", StringKind::kVisible));
}

TEST_CASE("Constructed OCTET STRING segments are concatenated (X.690 8.7.3)", "[ber]") {
  std::vector<uint8_t> v{0x24, 0x80, 0x04, 0x02, 'a', 'b', 0x04, 0x01, 'c', 0x00, 0x00};
  CHECK(*decodeString(single(v), StringKind::kOctets) == "abc");
  std::vector<uint8_t> bad{0x24, 0x03, 0x02, 0x01, 0x00};
  CHECK(decodeString(single(bad), StringKind::kOctets).status().code() == ErrorCode::kBerBadConstructedString);
}

TEST_CASE("EXTERNAL round-trips with a direct reference and single-ASN1-type", "[ber]") {
  External e;
  e.direct_reference = oids::kCmipAbstractSyntax;
  e.encoding = External::Encoding::kSingleAsn1Type;
  e.data = {0xA0, 0x03, 0x80, 0x01, 0x02};
  auto v = encodeWith([&](BerWriter& w) { w.writeExternal(e); });
  CHECK(v == std::vector<uint8_t>{0x28, 0x0D, 0x06, 0x04, 0x59, 0x01, 0x01, 0x04, 0xA0, 0x05, 0xA0, 0x03, 0x80, 0x01, 0x02});
  auto d = decodeExternal(single(v));
  REQUIRE(d.isOk());
  CHECK(*d == e);
  CHECK(decodeExternal(single({0x28, 0x03, 0x02, 0x01, 0x01})).status().code() == ErrorCode::kBerBadExternal);
}

TEST_CASE("Opaque BER values are carried byte for byte", "[ber]") {
  std::vector<uint8_t> v{0x30, 0x06, 0x02, 0x01, 0x01, 0x04, 0x01, 0x7A};
  auto o = decodeOpaque(single(v));
  REQUIRE(o.isOk());
  CHECK(o->bytes == v);
  CHECK(encodeWith([&](BerWriter& w) { w.writeOpaque(*o); }) == v);
}

TEST_CASE("Reader reports unexpected tags, missing elements and trailing data", "[ber]") {
  std::vector<uint8_t> v{0x02, 0x01, 0x01, 0x05, 0x00};
  BerReader r(v);
  CHECK(r.readBoolean().status().code() == ErrorCode::kBerUnexpectedTag);
  CHECK(*r.readInteger() == 1);
  CHECK(r.expectEnd().code() == ErrorCode::kBerTrailingData);
  CHECK(r.expectEnd().offset() == 3);
  CHECK(r.readNull().isOk());
  CHECK(r.readNull().code() == ErrorCode::kBerMissingElement);
  auto opt = r.optional(kTagNull);
  REQUIRE(opt.isOk());
  CHECK_FALSE(opt->has_value());
}

TEST_CASE("Headers prepended to an EncodeBuffer wrap the payload in place", "[ber]") {
  EncodeBuffer buf(2, 4);  // tiny headroom forces a grow on prepend
  BerWriter w(buf);
  w.writeInteger(5);
  prependTlvHeader(buf, Tag::context(0, true), buf.size());
  prependTlvHeader(buf, kTagSequence, buf.size());
  CHECK(buf.toVector() == std::vector<uint8_t>{0x30, 0x05, 0xA0, 0x03, 0x02, 0x01, 0x05});
}

TEST_CASE("Random primitive values round-trip and re-encode to the same bytes", "[ber][property]") {
  std::mt19937_64 rng(20261129);
  for (int i = 0; i < 2000; ++i) {
    const int64_t n = static_cast<int64_t>(rng()) >> (rng() % 64);
    const uint32_t tagno = static_cast<uint32_t>(rng() % 5000);
    const Tag tag{static_cast<TagClass>(rng() % 4), false, tagno};
    std::vector<uint64_t> arcs{rng() % 3, 0};
    arcs[1] = arcs[0] < 2 ? rng() % 40 : rng() % 100000;
    for (size_t k = rng() % 8; k > 0; --k) arcs.push_back(rng() >> (rng() % 64));
    auto oid = Oid::fromArcs(arcs);
    REQUIRE(oid.isOk());
    std::vector<uint8_t> octets(rng() % 300);
    for (auto& b : octets) b = static_cast<uint8_t>(rng());

    auto v = encodeWith([&](BerWriter& w) {
      size_t s = w.beginConstructed(kTagSequence);
      w.writeInteger(n, tag);
      w.writeOid(*oid);
      w.writeOctetString(octets);
      w.endConstructed(s);
    });
    BerReader r(v);
    auto seq = r.expect(kTagSequence);
    REQUIRE(seq.isOk());
    auto in = r.enter(*seq);
    REQUIRE(in.isOk());
    CHECK(*in->readInteger(tag) == n);
    auto o = in->readOid();
    REQUIRE(o.isOk());
    CHECK(o->arcs() == arcs);
    auto os = in->expect(kTagOctetString);
    REQUIRE(os.isOk());
    CHECK(std::vector<uint8_t>(os->content.begin(), os->content.end()) == octets);
    auto again = encodeWith([&](BerWriter& w) {
      size_t s = w.beginConstructed(kTagSequence);
      w.writeInteger(n, tag);
      w.writeOid(*o);
      w.writeOctetString(os->content);
      w.endConstructed(s);
    });
    CHECK(again == v);
  }
}

TEST_CASE("Random byte strings never crash the reader", "[ber][property]") {
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint8_t> v(rng() % 40);
    for (auto& b : v) b = static_cast<uint8_t>(rng() % 4 == 0 ? 0x80 : rng());
    BerReader r(v);
    while (!r.atEnd()) {
      auto t = r.next();
      if (!t.isOk()) {
        CHECK(t.status().code() != ErrorCode::kOk);
        break;
      }
      CHECK(t->encoded.size() >= t->header_length);
    }
  }
}
