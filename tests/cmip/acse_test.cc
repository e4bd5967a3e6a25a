// ACSE (X.227) known-answer vectors, round trips, the AARQ acceptance check and
// malformed input.
#include <catch2/catch.hpp>

#include "cmip/acse.h"
#include "cmip/oids.h"
#include "tests/cmip/upper_test_util.h"

using namespace npac::cmip;
using npac::cmip::testing::hex;
using npac::cmip::testing::RandomValues;

namespace {

BitString version1() {
  BitString b = BitString::withBits(1);
  b.setBit(0);
  return b;
}

External cmipUserInfoExternal() {
  External e;
  e.indirect_reference = 3;
  e.data = {0x30, 0x00};
  return e;
}

AcseApdu decodeOk(const std::vector<uint8_t>& bytes) {
  auto r = decodeAcseApdu(bytes);
  INFO(r.status().toString());
  REQUIRE(r.isOk());
  return *r;
}

ErrorCode decodeErr(const std::vector<uint8_t>& bytes) {
  auto r = decodeAcseApdu(bytes);
  REQUIRE_FALSE(r.isOk());
  return r.status().code();
}

}  // namespace

TEST_CASE("AARQ encodes as APPLICATION 0 with explicit context name and IMPLICIT user-information",
          "[acse]") {
  Aarq a;
  a.protocolVersion = version1();
  a.applicationContext = oids::kSystemsManagementContext;
  a.userInformation.push_back(cmipUserInfoExternal());
  auto want = hex("60 17 80 02 07 80 A1 06 06 04 59 00 00 02 BE 09 28 07 02 01 03 A0 02 30 00");
  CHECK(encodeAcseApdu(a) == want);
  CHECK(std::get<Aarq>(decodeOk(want)) == a);
}

TEST_CASE("AARQ carries calling and called AP titles (form 2) and AE qualifiers (form 2)",
          "[acse]") {
  Aarq a;
  a.applicationContext = oids::kSystemsManagementContext;
  a.called.apTitle = Oid{1, 3, 9999, 1};
  a.called.aeQualifier = 1;
  a.calling.apTitle = Oid{1, 3, 9999, 2};
  a.calling.aeQualifier = 300;
  auto bytes = encodeAcseApdu(a);
  // [2] { OID }, [3] { INTEGER }, [6] { OID }, [7] { INTEGER 300 }
  CHECK(bytes == hex("60 23 A1 06 06 04 59 00 00 02 A2 06 06 04 2B CE 0F 01 A3 03 02 01 01"
                     " A6 06 06 04 2B CE 0F 02 A7 04 02 02 01 2C"));
  CHECK(std::get<Aarq>(decodeOk(bytes)) == a);
}

TEST_CASE("AARE rejection carries result and acse-service-user diagnostic", "[acse]") {
  Aare a;
  a.applicationContext = oids::kSystemsManagementContext;
  a.result = AssociateResult::kRejectedPermanent;
  a.diagnostic = {DiagnosticSource::kServiceUser,
                  user_diagnostic::kApplicationContextNameNotSupported};
  auto want = hex("61 14 A1 06 06 04 59 00 00 02 A2 03 02 01 01 A3 05 A1 03 02 01 02");
  CHECK(encodeAcseApdu(a) == want);
  CHECK(std::get<Aare>(decodeOk(want)) == a);
}

TEST_CASE("AARE with acse-service-provider diagnostic and rejected-transient decodes", "[acse]") {
  auto bytes = hex("61 14 A1 06 06 04 59 00 00 02 A2 03 02 01 02 A3 05 A2 03 02 01 02");
  Aare a = std::get<Aare>(decodeOk(bytes));
  CHECK(a.result == AssociateResult::kRejectedTransient);
  CHECK(a.diagnostic.source == DiagnosticSource::kServiceProvider);
  CHECK(a.diagnostic.value == provider_diagnostic::kNoCommonAcseVersion);
}

TEST_CASE("RLRQ, RLRE and ABRT encode their reasons, source and diagnostic", "[acse]") {
  CHECK(encodeAcseApdu(Rlrq{ReleaseRequestReason::kNormal, {}}) == hex("62 03 80 01 00"));
  CHECK(encodeAcseApdu(Rlre{ReleaseResponseReason::kNotFinished, {}}) == hex("63 03 80 01 01"));
  CHECK(encodeAcseApdu(Rlrq{}) == hex("62 00"));
  Abrt b{AbortSource::kServiceProvider, AbortDiagnostic::kProtocolError, {}};
  CHECK(encodeAcseApdu(b) == hex("64 06 80 01 01 81 01 02"));
  CHECK(std::get<Abrt>(decodeOk(hex("64 06 80 01 01 81 01 02"))) == b);
  CHECK(std::get<Rlre>(decodeOk(hex("63 03 80 01 01"))).reason == ReleaseResponseReason::kNotFinished);
}

TEST_CASE("AARQ with an unknown application context decodes but is refused with "
          "application-context-name-not-supported", "[acse]") {
  Aarq a;
  a.applicationContext = Oid{1, 0, 9506, 2, 1};  // MMS, not systems management
  Aarq back = std::get<Aarq>(decodeOk(encodeAcseApdu(a)));
  auto diag = checkAarq(back);
  REQUIRE(diag.has_value());
  CHECK(diag->source == DiagnosticSource::kServiceUser);
  CHECK(diag->value == user_diagnostic::kApplicationContextNameNotSupported);
  CHECK(validateAarq(back).code() == ErrorCode::kAcseUnknownApplicationContext);
  Aare refusal = refusalFor(back, *diag);
  CHECK(refusal.result == AssociateResult::kRejectedPermanent);
  CHECK(refusal.applicationContext == a.applicationContext);
}

TEST_CASE("AARQ without version1 in protocol-version is refused with no-common-acse-version",
          "[acse]") {
  Aarq a;
  a.applicationContext = oids::kSystemsManagementContext;
  a.protocolVersion = BitString::withBits(2);
  a.protocolVersion->setBit(1);
  auto diag = checkAarq(a);
  REQUIRE(diag.has_value());
  CHECK(diag->source == DiagnosticSource::kServiceProvider);
  CHECK(diag->value == provider_diagnostic::kNoCommonAcseVersion);
}

TEST_CASE("AARQ for systems management with version1 is acceptable", "[acse]") {
  Aarq a;
  a.protocolVersion = version1();
  a.applicationContext = oids::kSystemsManagementContext;
  CHECK_FALSE(checkAarq(a).has_value());
  CHECK(validateAarq(a).isOk());
}

TEST_CASE("findCmipUserInfo picks the EXTERNAL of the CMIP presentation context", "[acse]") {
  External other;
  other.indirect_reference = 5;
  External cmip = cmipUserInfoExternal();
  std::vector<External> list{other, cmip};
  CHECK(findCmipUserInfo(list, 3) == &list[1]);
  CHECK(findCmipUserInfo(list, 7) == nullptr);
  External direct;
  direct.direct_reference = oids::kCmipAbstractSyntax;
  std::vector<External> list2{direct};
  CHECK(findCmipUserInfo(list2, std::nullopt) == &list2[0]);
}

TEST_CASE("AARE without result-source-diagnostic is a bad APDU", "[acse]") {
  CHECK(decodeErr(hex("61 0D A1 06 06 04 59 00 00 02 A2 03 02 01 00")) == ErrorCode::kAcseBadApdu);
}

TEST_CASE("AARQ without application context name is a bad APDU", "[acse]") {
  CHECK(decodeErr(hex("60 04 80 02 07 80")) == ErrorCode::kAcseBadApdu);
}

TEST_CASE("An APPLICATION tag beyond ABRT is not an ACSE APDU", "[acse]") {
  CHECK(decodeErr(hex("65 00")) == ErrorCode::kAcseBadApdu);
  CHECK(decodeErr(hex("30 00")) == ErrorCode::kAcseBadApdu);
}

TEST_CASE("Truncated AARQ reports a BER length error", "[acse]") {
  auto bytes = hex("60 17 80 02 07 80 A1 06 06 04 59 00 00 02 BE 09 28 07 02 01 03 A0 02 30");
  CHECK(decodeErr(bytes) == ErrorCode::kBerLengthPastBuffer);
}

TEST_CASE("User-information that is not EXTERNAL is rejected", "[acse]") {
  CHECK(decodeErr(hex("62 04 BE 02 30 00")) == ErrorCode::kAcseBadUserInformation);
}

TEST_CASE("Out-of-range AARE result and ABRT source are rejected", "[acse]") {
  CHECK(decodeErr(hex("61 14 A1 06 06 04 59 00 00 02 A2 03 02 01 05 A3 05 A1 03 02 01 02")) ==
        ErrorCode::kAcseBadApdu);
  CHECK(decodeErr(hex("64 03 80 01 07")) == ErrorCode::kAcseBadApdu);
  CHECK(decodeErr(hex("64 00")) == ErrorCode::kAcseBadApdu);
}

TEST_CASE("Random ACSE APDUs round-trip and re-encode to the same bytes", "[acse][property]") {
  RandomValues rv(20261129);
  for (int i = 0; i < 300; ++i) {
    AcseApdu apdu;
    std::vector<External> ui;
    for (int k = rv.range(0, 2); k > 0; --k) {
      External e;
      if (rv.coin()) e.direct_reference = rv.oid();
      if (rv.coin() || !e.direct_reference) e.indirect_reference = rv.range(1, 127);
      e.data = rv.opaque().bytes;
      ui.push_back(e);
    }
    switch (rv.range(0, 4)) {
      case 0: {
        Aarq a;
        if (rv.coin()) a.protocolVersion = version1();
        a.applicationContext = rv.oid();
        if (rv.coin()) a.called.apTitle = rv.oid();
        if (rv.coin()) a.called.aeQualifier = rv.range(0, 1000);
        if (rv.coin()) a.calling.apTitle = rv.oid();
        if (rv.coin()) a.calling.aeQualifier = rv.range(0, 1000);
        a.userInformation = ui;
        apdu = a;
        break;
      }
      case 1: {
        Aare a;
        a.applicationContext = rv.oid();
        a.result = static_cast<AssociateResult>(rv.range(0, 2));
        a.diagnostic.source = rv.coin() ? DiagnosticSource::kServiceUser : DiagnosticSource::kServiceProvider;
        a.diagnostic.value = static_cast<int32_t>(rv.range(0, 2));
        if (rv.coin()) a.responding.apTitle = rv.oid();
        a.userInformation = ui;
        apdu = a;
        break;
      }
      case 2: apdu = Rlrq{rv.coin() ? std::optional(ReleaseRequestReason::kUrgent) : std::nullopt, ui}; break;
      case 3: apdu = Rlre{rv.coin() ? std::optional(ReleaseResponseReason::kNormal) : std::nullopt, ui}; break;
      default:
        apdu = Abrt{static_cast<AbortSource>(rv.range(0, 1)),
                    rv.coin() ? std::optional(static_cast<AbortDiagnostic>(rv.range(1, 6))) : std::nullopt, ui};
    }
    auto bytes = encodeAcseApdu(apdu);
    auto back = decodeAcseApdu(bytes);
    INFO("iteration " << i << ": " << back.status().toString());
    REQUIRE(back.isOk());
    CHECK(*back == apdu);
    CHECK(encodeAcseApdu(*back) == bytes);
  }
}

TEST_CASE("Mutated ACSE APDUs never crash the decoder and decoded values re-encode stably",
          "[acse][malformed]") {
  RandomValues rv(8650);
  Aarq a;
  a.protocolVersion = version1();
  a.applicationContext = oids::kSystemsManagementContext;
  a.calling.apTitle = Oid{1, 3, 9999, 2};
  a.calling.aeQualifier = 7;
  a.userInformation.push_back(cmipUserInfoExternal());
  auto seed = encodeAcseApdu(a);
  int ok = 0;
  for (int i = 0; i < 3000; ++i) {
    auto v = seed;
    if (rv.coin()) {
      v[rv.range(0, v.size() - 1)] ^= static_cast<uint8_t>(rv.range(1, 255));
    } else {
      v.resize(rv.range(0, v.size() - 1));
    }
    auto r = decodeAcseApdu(v);
    if (!r.isOk()) continue;
    ++ok;
    auto again = decodeAcseApdu(encodeAcseApdu(*r));
    REQUIRE(again.isOk());
    CHECK(*again == *r);
  }
  CHECK(ok > 0);
}
