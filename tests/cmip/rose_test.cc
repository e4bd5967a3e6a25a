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
