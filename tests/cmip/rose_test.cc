// ROSE (X.880 as used by X.711) known-answer vectors, round trips and malformed input.
#include <catch2/catch.hpp>

#include "cmip/rose.h"
#include "tests/cmip/upper_test_util.h"

using namespace npac::cmip;
using npac::cmip::testing::hex;
using npac::cmip::testing::RandomValues;

namespace {

RoseApdu decodeOk(const std::vector<uint8_t>& bytes) {
  auto r = decodeRoseApdu(bytes);
  INFO(r.status().toString());
  REQUIRE(r.isOk());
  return *r;
}

ErrorCode decodeErr(const std::vector<uint8_t>& bytes) {
  auto r = decodeRoseApdu(bytes);
  REQUIRE_FALSE(r.isOk());
  return r.status().code();
}

}  // namespace

TEST_CASE("Invoke is [1] with invoke id, local opcode and argument", "[rose]") {
  RoseInvoke inv{1, std::nullopt, Code::local(0), OpaqueBer{{0x30, 0x00}}};
  auto want = hex("A1 08 02 01 01 02 01 00 30 00");
  CHECK(encodeRoseApdu(inv) == want);
  CHECK(std::get<RoseInvoke>(decodeOk(want)) == inv);
}

TEST_CASE("Invoke linked id is [0] IMPLICIT INTEGER", "[rose]") {
  RoseInvoke inv{1, 5, Code::local(2), OpaqueBer{{0x30, 0x00}}};
  auto want = hex("A1 0B 02 01 01 80 01 05 02 01 02 30 00");
  CHECK(encodeRoseApdu(inv) == want);
  CHECK(std::get<RoseInvoke>(decodeOk(want)) == inv);
}

TEST_CASE("Invoke linked id absent [1] NULL decodes as no linked id", "[rose]") {
  auto inv = std::get<RoseInvoke>(decodeOk(hex("A1 0A 02 01 01 81 00 02 01 02 30 00")));
  CHECK_FALSE(inv.linkedId.has_value());
}

TEST_CASE("ReturnResult is [2] with a result SEQUENCE of opcode and value", "[rose]") {
  RoseReturnResult rr{InvokeId{1}, RoseReturnResult::Body{Code::local(7), OpaqueBer{{0x30, 0x00}}}};
  auto want = hex("A2 0A 02 01 01 30 05 02 01 07 30 00");
  CHECK(encodeRoseApdu(rr) == want);
  CHECK(std::get<RoseReturnResult>(decodeOk(want)) == rr);
  RoseReturnResult empty{InvokeId{9}, std::nullopt};
  CHECK(encodeRoseApdu(empty) == hex("A2 03 02 01 09"));
}

TEST_CASE("ReturnError is [3] with error code and optional parameter", "[rose]") {
  RoseReturnError re{InvokeId{1}, Code::local(2), std::nullopt};
  CHECK(encodeRoseApdu(re) == hex("A3 06 02 01 01 02 01 02"));
  RoseReturnError withParam{InvokeId{1}, Code::local(0), OpaqueBer{{0x80, 0x01, 0x05}}};
  auto bytes = hex("A3 09 02 01 01 02 01 00 80 01 05");
  CHECK(encodeRoseApdu(withParam) == bytes);
  CHECK(std::get<RoseReturnError>(decodeOk(bytes)) == withParam);
}

TEST_CASE("Reject is [4] with the problem family as context tag", "[rose]") {
  RoseReject rj{InvokeId{1}, RejectProblemKind::kInvoke, kUnrecognizedOperation};
  CHECK(encodeRoseApdu(rj) == hex("A4 06 02 01 01 81 01 01"));
  RoseReject absent{InvokeId{}, RejectProblemKind::kGeneral, kBadlyStructuredPdu};
  auto bytes = hex("A4 05 05 00 80 01 02");
  CHECK(encodeRoseApdu(absent) == bytes);
  CHECK(std::get<RoseReject>(decodeOk(bytes)) == absent);
}

TEST_CASE("Global (OID) opcodes round-trip", "[rose]") {
  RoseInvoke inv{3, std::nullopt, Code{Oid{1, 3, 6, 1}}, std::nullopt};
  auto bytes = encodeRoseApdu(inv);
  CHECK(bytes == hex("A1 08 02 01 03 06 03 2B 06 01"));
  CHECK(std::get<RoseInvoke>(decodeOk(bytes)) == inv);
}

TEST_CASE("A tag other than [1]..[4] is an unknown ROSE APDU", "[rose]") {
  CHECK(decodeErr(hex("A5 03 02 01 01")) == ErrorCode::kRoseUnknownApdu);
  CHECK(decodeErr(hex("30 03 02 01 01")) == ErrorCode::kRoseUnknownApdu);
  CHECK(decodeErr(hex("81 01 01")) == ErrorCode::kRoseUnknownApdu);
}

TEST_CASE("Invoke without a present invoke id is a bad APDU", "[rose]") {
  CHECK(decodeErr(hex("A1 05 05 00 02 01 00")) == ErrorCode::kRoseBadApdu);
  CHECK(decodeErr(hex("A1 03 04 01 00")) == ErrorCode::kRoseBadApdu);
}

TEST_CASE("Invoke without an opcode is a bad APDU", "[rose]") {
  CHECK(decodeErr(hex("A1 03 02 01 01")) == ErrorCode::kRoseBadApdu);
}

TEST_CASE("Reject with an unknown problem family is a bad APDU", "[rose]") {
  CHECK(decodeErr(hex("A4 06 02 01 01 85 01 01")) == ErrorCode::kRoseBadApdu);
}

TEST_CASE("Truncated Invoke reports the BER error", "[rose]") {
  CHECK(decodeErr(hex("A1 08 02 01 01 02 01 00 30")) == ErrorCode::kBerLengthPastBuffer);
}

TEST_CASE("Trailing bytes after the ROSE APDU are rejected", "[rose]") {
  CHECK(decodeErr(hex("A3 06 02 01 01 02 01 02 00")) == ErrorCode::kBerTrailingData);
}

TEST_CASE("Random ROSE APDUs round-trip and re-encode to the same bytes", "[rose][property]") {
  RandomValues rv(1006);
  auto code = [&] { return rv.range(0, 5) ? Code::local(static_cast<int32_t>(rv.range(-100, 100000))) : Code{rv.oid()}; };
  auto iid = [&] { return rv.range(0, 5) ? InvokeId{static_cast<int32_t>(rv.range(INT32_MIN, INT32_MAX))} : InvokeId{}; };
  for (int i = 0; i < 500; ++i) {
    RoseApdu apdu;
    switch (rv.range(0, 3)) {
      case 0: {
        RoseInvoke inv;
        inv.invokeId = static_cast<int32_t>(rv.range(INT32_MIN, INT32_MAX));
        if (rv.coin()) inv.linkedId = static_cast<int32_t>(rv.range(0, 1 << 30));
        inv.opcode = code();
        if (rv.coin()) inv.argument = rv.opaque();
        apdu = inv;
        break;
      }
      case 1: {
        RoseReturnResult rr{iid(), std::nullopt};
        if (rv.coin()) rr.result = RoseReturnResult::Body{code(), rv.opaque()};
        apdu = rr;
        break;
      }
      case 2: {
        RoseReturnError re{iid(), code(), std::nullopt};
        if (rv.coin()) re.parameter = rv.opaque();
        apdu = re;
        break;
      }
      default:
        apdu = RoseReject{iid(), static_cast<RejectProblemKind>(rv.range(0, 3)),
                          static_cast<int32_t>(rv.range(0, 7))};
    }
    auto bytes = encodeRoseApdu(apdu);
    auto back = decodeRoseApdu(bytes);
    INFO("iteration " << i << ": " << back.status().toString());
    REQUIRE(back.isOk());
    CHECK(*back == apdu);
    CHECK(encodeRoseApdu(*back) == bytes);
  }
}

// ---- spliceInvokeId ------------------------------------------------------------------

namespace {

// An OCTET STRING of `n` bytes as an opaque argument: n chosen so the Invoke's length
// takes the short form, one length octet or two (X.690 §8.1.3.4, §8.1.3.5).
OpaqueBer octets(size_t n, uint8_t fill) {
  std::vector<uint8_t> v{0x04};
  uint8_t length[kMaxLengthOctets];
  size_t used = encodeLength(n, length);
  v.insert(v.end(), length, length + used);
  v.insert(v.end(), n, fill);
  return OpaqueBer{v};
}

std::vector<uint8_t> withId(RoseInvoke invoke, int32_t id) {
  invoke.invokeId = id;
  return encodeRoseApdu(invoke);
}

ErrorCode spliceErr(const std::vector<uint8_t>& apdu, int32_t id = 7) {
  auto r = spliceInvokeId(apdu, id);
  REQUIRE_FALSE(r.isOk());
  return r.status().code();
}

}  // namespace

TEST_CASE("Splicing an invoke id equals decoding setting it and re-encoding for every id and length form", "[rose]") {
  const std::vector<int32_t> ids{0, 1, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 0x7fffff, 0x800000,
                                 0x7fffffff, -1, -128, -129, -32768, -32769, INT32_MIN};
  std::vector<RoseInvoke> invokes{
      RoseInvoke{0, std::nullopt, Code::local(0), std::nullopt},
      RoseInvoke{5, 3, Code::local(7), OpaqueBer{{0x30, 0x00}}},
      RoseInvoke{-40000, std::nullopt, Code::local(6), octets(100, 0xaa)},   // around 127 total
      RoseInvoke{300, std::nullopt, Code::local(1), octets(118, 0x11)},      // 127 → 128 crossing
      RoseInvoke{1, 1, Code::local(8), octets(240, 0x22)},                   // around 255
      RoseInvoke{70000, std::nullopt, Code::local(3), octets(247, 0x33)},    // 255 → 256 crossing
      RoseInvoke{INT32_MAX, std::nullopt, Code{Oid{2, 9, 3}}, octets(60000, 0x44)},  // three length octets
  };
  for (const RoseInvoke& invoke : invokes) {
    const std::vector<uint8_t> stored = encodeRoseApdu(invoke);
    for (int32_t id : ids) {
      INFO("stored " << stored.size() << " bytes, id " << id);
      auto spliced = spliceInvokeId(stored, id);
      REQUIRE(spliced.isOk());
      CHECK(*spliced == withId(invoke, id));
      CHECK(std::get<RoseInvoke>(decodeOk(*spliced)).invokeId == id);
    }
  }
}

TEST_CASE("Splicing twice is the same as splicing once with the second id", "[rose]") {
  RoseInvoke invoke{0, std::nullopt, Code::local(7), octets(124, 0x55)};
  auto once = spliceInvokeId(encodeRoseApdu(invoke), 128);
  REQUIRE(once.isOk());
  auto twice = spliceInvokeId(*once, -3);
  REQUIRE(twice.isOk());
  CHECK(*twice == withId(invoke, -3));
}

TEST_CASE("Splicing refuses an APDU that is not an Invoke", "[rose]") {
  CHECK(spliceErr(hex("A2 03 02 01 01")) == ErrorCode::kRoseBadApdu);              // ReturnResult
  CHECK(spliceErr(hex("A4 06 02 01 01 80 01 00")) == ErrorCode::kRoseBadApdu);     // Reject
  CHECK(spliceErr(hex("30 03 02 01 01")) == ErrorCode::kRoseUnknownApdu);          // SEQUENCE
  CHECK(spliceErr(hex("81 03 02 01 01")) == ErrorCode::kRoseUnknownApdu);          // primitive [1]
  CHECK(spliceErr({}) == ErrorCode::kBerTruncated);
}

TEST_CASE("Splicing refuses an indefinite length", "[rose]") {
  CHECK(spliceErr(hex("A1 80 02 01 01 02 01 00 00 00")) == ErrorCode::kRoseBadApdu);
  CHECK(spliceErr(hex("A1 08 02 80 01 02 01 00 00 00")) == ErrorCode::kRoseBadApdu);
}

TEST_CASE("Splicing refuses an Invoke without its invokeId INTEGER first", "[rose]") {
  CHECK(spliceErr(hex("A1 00")) == ErrorCode::kRoseBadApdu);
  CHECK(spliceErr(hex("A1 05 05 00 02 01 00")) == ErrorCode::kRoseBadApdu);  // NULL (absent) id
  CHECK(spliceErr(hex("A1 03 80 01 05")) == ErrorCode::kRoseBadApdu);
  CHECK(spliceErr(hex("A1 05 02 00 02 01 00")) == ErrorCode::kBerBadInteger);  // empty INTEGER
}

TEST_CASE("Splicing refuses an invokeId wider than 32 bits", "[rose]") {
  CHECK(spliceErr(hex("A1 0A 02 05 01 00 00 00 00 02 01 00")) == ErrorCode::kBerIntegerOverflow);
}

TEST_CASE("Splicing refuses lengths that do not frame the APDU exactly", "[rose]") {
  CHECK(spliceErr(hex("A1 09 02 01 01 02 01 00")) == ErrorCode::kBerLengthPastBuffer);
  CHECK(spliceErr(hex("A1 05 02 01 01 02 01 00")) == ErrorCode::kBerTrailingData);
  CHECK(spliceErr(hex("A1 06 02 07 01 02 01 00")) == ErrorCode::kBerLengthPastBuffer);
  CHECK(spliceErr(hex("A1 82 01")) == ErrorCode::kBerTruncated);
  CHECK(spliceErr(hex("A1")) == ErrorCode::kBerTruncated);
  CHECK(spliceErr(hex("A1 89 01 01 01 01 01 01 01 01 01")) == ErrorCode::kBerOverlongLength);
  CHECK(spliceErr(hex("A1 02 02 81")) == ErrorCode::kBerTruncated);
}

TEST_CASE("Splicing 2000 seeded mutations of Invokes never crashes and what it accepts decodes like the original", "[rose]") {
  RandomValues random(20261201);
  int accepted = 0;
  for (int i = 0; i < 2000; ++i) {
    RoseInvoke invoke{static_cast<int32_t>(random.range(INT32_MIN, INT32_MAX)), std::nullopt,
                      Code::local(static_cast<int32_t>(random.range(0, 10))),
                      octets(static_cast<size_t>(random.range(0, 300)), 0x5a)};
    if (random.coin()) invoke.linkedId = static_cast<int32_t>(random.range(-5, 500));
    std::vector<uint8_t> apdu = encodeRoseApdu(invoke);
    const int flips = static_cast<int>(random.range(1, 3));
    for (int f = 0; f < flips; ++f) {
      const size_t at = static_cast<size_t>(random.range(0, static_cast<int64_t>(std::min<size_t>(apdu.size(), 12)) - 1));
      apdu[at] = static_cast<uint8_t>(random.range(0, 255));
    }
    if (random.range(0, 9) == 0) apdu.resize(static_cast<size_t>(random.range(0, static_cast<int64_t>(apdu.size()))));
    const int32_t id = static_cast<int32_t>(random.range(INT32_MIN, INT32_MAX));
    auto spliced = spliceInvokeId(apdu, id);
    if (!spliced.isOk()) continue;
    ++accepted;
    // Whatever the splice accepted differs from its input only in the id: a decodable
    // input decodes to the same Invoke with the new id.
    auto before = decodeRoseApdu(apdu);
    auto after = decodeRoseApdu(*spliced);
    if (before.isOk() && std::holds_alternative<RoseInvoke>(*before)) {
      REQUIRE(after.isOk());
      RoseInvoke want = std::get<RoseInvoke>(*before);
      want.invokeId = id;
      CHECK(std::get<RoseInvoke>(*after) == want);
    }
  }
  CHECK(accepted > 0);
}
