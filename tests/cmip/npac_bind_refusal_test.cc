// LnpBindRefusal (cmip/npac_bind_refusal.h): the exact reason a rejecting AARE carries.
#include <catch2/catch.hpp>

#include <random>

#include "cmip/npac_bind.h"
#include "cmip/npac_bind_refusal.h"
#include "cmip/oids.h"
#include "tests/cmip/upper_test_util.h"

using namespace npac::cmip;
using npac::cmip::testing::hex;

TEST_CASE("A bind refusal encodes as the SEQUENCE of its reason and text") {
  // 30 0c  80 03 "abc"  81 05 "why ?"
  CHECK(encodeBindRefusal({"abc", "why ?"}) == hex("300c8003616263810577687920 3f"));
  // Without text the [1] component is absent.
  CHECK(encodeBindRefusal({"abc", ""}) == hex("3005800361626 3"));
}

TEST_CASE("A bind refusal decodes back to the same reason and text") {
  LnpBindRefusal refusal{"key-revoked", "key list 1 key 1 of 0001 was revoked at 2026-11-29T15:00:00Z — ünïcode"};
  auto decoded = decodeBindRefusal(encodeBindRefusal(refusal));
  REQUIRE(decoded.isOk());
  CHECK(*decoded == refusal);
}

TEST_CASE("An oversized text is cut at a character boundary and a bad reason becomes unspecified") {
  std::string text(kMaxRefusalText - 1, 'x');
  text += "é";  // 2 octets: would end at 513
  auto decoded = decodeBindRefusal(encodeBindRefusal({"r", text}));
  REQUIRE(decoded.isOk());
  CHECK(decoded->text == std::string(kMaxRefusalText - 1, 'x'));
  CHECK(decodeBindRefusal(encodeBindRefusal({"tab\there", ""}))->reason == "unspecified");
  CHECK(decodeBindRefusal(encodeBindRefusal({"", ""}))->reason == "unspecified");
  CHECK(decodeBindRefusal(encodeBindRefusal({std::string(100, 'a'), ""}))->reason.size() == kMaxRefusalReason);
}

TEST_CASE("Malformed bind refusals are refused each with their reason") {
  struct Case {
    const char* bytes;
    const char* says;
  };
  for (const Case& c : {Case{"0400", "must be a SEQUENCE"},                 // OCTET STRING
                        Case{"3000", "lacks reason"},                       // empty SEQUENCE
                        Case{"30028100", "lacks reason"},                   // text only
                        Case{"30028000", "1..64 characters"},               // empty reason
                        Case{"3003800109", ""},                             // a tab: not VisibleString
                        Case{"300580016181ff", ""},                         // text length past the end
                        Case{"3006800161020100", ""}}) {                    // a trailing INTEGER
    INFO(c.bytes);
    auto decoded = decodeBindRefusal(hex(c.bytes));
    REQUIRE_FALSE(decoded.isOk());
    CHECK_THAT(decoded.status().toString(), Catch::Contains(c.says));
  }
  std::vector<uint8_t> long_reason{0x30, 0x43, 0x80, 0x41};
  long_reason.insert(long_reason.end(), 65, 'a');
  auto too_long = decodeBindRefusal(long_reason);
  REQUIRE_FALSE(too_long.isOk());
  CHECK(too_long.status().code() == ErrorCode::kBindBadRefusal);
}

TEST_CASE("A refusal attached to an AARE survives its encoding and is found again") {
  Aarq aarq;
  aarq.applicationContext = oids::kSystemsManagementContext;
  External cmip;
  cmip.indirect_reference = 3;
  aarq.userInformation.push_back(cmip);
  Aare aare = refusalFor(aarq, {DiagnosticSource::kServiceUser, user_diagnostic::kAuthenticationFailure});
  attachBindRefusal(aare, {"sequence-replayed", "sequence 5000 is not above 5000"}, &aarq.userInformation.front());
  REQUIRE(aare.userInformation.size() == 1);
  CHECK(aare.userInformation[0].indirect_reference == 3);
  auto decoded = decodeAcseApdu(encodeAcseApdu(AcseApdu{aare}));
  REQUIRE(decoded.isOk());
  auto found = bindRefusalFrom(std::get<Aare>(*decoded));
  REQUIRE(found.isOk());
  REQUIRE(found->has_value());
  CHECK((*found)->reason == "sequence-replayed");
  CHECK((*found)->text == "sequence 5000 is not above 5000");
}

TEST_CASE("An AARE without a refusal yields none and one with an undecodable refusal an error") {
  Aare plain;
  plain.applicationContext = oids::kSystemsManagementContext;
  auto none = bindRefusalFrom(plain);
  REQUIRE(none.isOk());
  CHECK_FALSE(none->has_value());

  Aare broken = plain;
  attachBindRefusal(broken, {"x", ""}, nullptr);
  CHECK(broken.userInformation[0].direct_reference == oids::kCmipAbstractSyntax);
  // Replace the refusal value inside the CMIPUserInfo with an OCTET STRING.
  CmipUserInfo info = *decodeCmipUserInfo(broken.userInformation[0].data);
  info.userInfo->data = hex("0400");
  broken.userInformation[0].data = encodeCmipUserInfo(info);
  auto error = bindRefusalFrom(broken);
  REQUIRE_FALSE(error.isOk());
  CHECK(error.status().code() == ErrorCode::kBindBadRefusal);
}

TEST_CASE("Mutated bind refusals decode or fail but never crash") {
  std::mt19937 rng(353);
  const std::vector<uint8_t> good = encodeBindRefusal({"key-expired", "the key expired"});
  int decoded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    if (rng() % 5 == 0) bytes.resize(rng() % bytes.size());
    auto r = decodeBindRefusal(bytes);
    if (r.isOk()) {
      ++decoded;
      CHECK(*decodeBindRefusal(encodeBindRefusal(*r)) == *r);
    }
  }
  CHECK(decoded < 3000);  // the mutations did break some
}
