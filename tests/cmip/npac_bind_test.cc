// NPAC bind profile (docs/npac-bind.asn1): LnpAccessControl vectors, the signed bytes,
// a real OpenSSL signature over them, recovery / heartbeat values and malformed input.
#include <catch2/catch.hpp>

#include <openssl/evp.h>

#include <memory>

#include "cmip/npac_bind.h"
#include "cmip/oids.h"
#include "tests/cmip/upper_test_util.h"

using namespace npac::cmip;
using npac::cmip::testing::hex;
using npac::cmip::testing::RandomValues;

namespace {

LnpAccessControl sample() {
  LnpAccessControl ac;
  ac.systemId = "0001";
  ac.systemType = SystemType::kSoa;
  ac.userId = std::string("u");  // g++ 12 -Wrestrict false positive (PR105651) on assigning a literal
  ac.listId = 1;
  ac.keyId = 2;
  ac.departureTime = GeneralizedTime::parse("20261129150000Z").value();
  ac.sequenceNumber = 7;
  ac.functions.add(AssociationFunction::kSoaManagement).add(AssociationFunction::kNotifications);
  ac.recoveryMode = false;
  ac.signature = {0xAB, 0xCD};
  return ac;
}

// Components [0]..[8] of sample(), hand-encoded from the module text.
const char* kSignedFields =
    "80 04 30 30 30 31"                                         // systemId "0001"
    " 81 01 00"                                                 // systemType soa
    " 82 01 75"                                                 // userId "u"
    " 83 01 01 84 01 02"                                        // listId 1, keyId 2
    " 85 0F 32 30 32 36 31 31 32 39 31 35 30 30 30 30 5A"       // 20261129150000Z
    " 86 01 07"                                                 // sequenceNumber 7
    " 87 02 04 90"                                              // bits 0 and 3
    " 88 01 00";                                                // recoveryMode FALSE

ErrorCode accessControlErr(const std::vector<uint8_t>& bytes) {
  auto r = decodeAccessControl(bytes);
  REQUIRE_FALSE(r.isOk());
  return r.status().code();
}

}  // namespace

TEST_CASE("LnpAccessControl encodes components [0]..[9] as the module defines", "[npac_bind]") {
  auto want = hex(std::string("30 32 ") + kSignedFields + " 89 03 00 AB CD");
  CHECK(encodeAccessControl(sample()) == want);
  auto back = decodeAccessControl(want);
  INFO(back.status().toString());
  REQUIRE(back.isOk());
  CHECK(*back == sample());
}

TEST_CASE("The signature covers the DER SEQUENCE of components [0]..[8]", "[npac_bind]") {
  CHECK(signedContent(sample()) == hex(std::string("30 2D ") + kSignedFields));
  LnpAccessControl other = sample();
  other.signature = {1, 2, 3, 4, 5};
  CHECK(signedContent(other) == signedContent(sample()));  // signature not covered
  other.recoveryMode = true;
  CHECK(signedContent(other) != signedContent(sample()));
}

TEST_CASE("Signed content is re-derived from values, so non-minimal BER still verifies",
          "[npac_bind]") {
  // keyId 2 sent as a long-form length (84 81 01 02) is BER but not DER.
  auto ber = hex(
      "30 80 80 04 30 30 30 31 81 01 00 82 01 75 83 01 01 84 81 01 02"
      " 85 0F 32 30 32 36 31 31 32 39 31 35 30 30 30 30 5A 86 01 07 87 02 04 90 88 01 00"
      " 89 03 00 AB CD 00 00");
  auto back = decodeAccessControl(ber);
  INFO(back.status().toString());
  REQUIRE(back.isOk());
  CHECK(signedContent(*back) == signedContent(sample()));
}

TEST_CASE("An Ed25519 signature over signedContent verifies with OpenSSL", "[npac_bind]") {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"),
                                                         EVP_PKEY_free);
  REQUIRE(key);
  LnpAccessControl ac = sample();
  auto tbs = signedContent(ac);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  REQUIRE(EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key.get()) == 1);
  size_t len = 64;
  ac.signature.resize(len);
  REQUIRE(EVP_DigestSign(ctx.get(), ac.signature.data(), &len, tbs.data(), tbs.size()) == 1);
  ac.signature.resize(len);

  auto wire = encodeAccessControl(ac);
  auto received = decodeAccessControl(wire);
  REQUIRE(received.isOk());
  auto verify = [&](const LnpAccessControl& r) {
    auto bytes = signedContent(r);
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> v(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    REQUIRE(EVP_DigestVerifyInit(v.get(), nullptr, nullptr, nullptr, key.get()) == 1);
    return EVP_DigestVerify(v.get(), r.signature.data(), r.signature.size(), bytes.data(),
                            bytes.size()) == 1;
  };
  CHECK(verify(*received));
  LnpAccessControl tampered = *received;
  tampered.sequenceNumber += 1;
  CHECK_FALSE(verify(tampered));
}

TEST_CASE("Association function bits are numbered as documented", "[npac_bind]") {
  AssociationFunctionMask m;
  m.add(AssociationFunction::kQueries);
  BitString b = m.toBitString();
  CHECK(b.bitCount() == 5);
  CHECK(b.bytes == std::vector<uint8_t>{0x08});
  CHECK(b.unused_bits == 3);
  CHECK(AssociationFunctionMask{}.toBitString().bytes.empty());
  AssociationFunctionMask all;
  for (AssociationFunction f : npac::common::kAssociationFunctions) all.add(f);
  CHECK(all.toBitString().bytes == std::vector<uint8_t>{0xF8});
}

TEST_CASE("accessControl travels as an EXTERNAL with the profile's direct reference",
          "[npac_bind]") {
  External ext = toExternal(sample());
  CHECK(ext.direct_reference == oids::kLnpAccessControlSyntax);
  CmipUserInfo info;
  info.accessControl = ext;
  auto bytes = encodeCmipUserInfo(info);
  auto decoded = decodeCmipUserInfo(bytes);
  REQUIRE(decoded.isOk());
  auto ac = accessControlFromUserInfo(*decoded);
  REQUIRE(ac.isOk());
  CHECK(*ac == sample());
  External wrong = ext;
  wrong.direct_reference = Oid{1, 2, 3};
  CHECK(accessControlFromExternal(wrong).status().code() == ErrorCode::kBindBadAccessControl);
  CHECK(accessControlFromUserInfo(CmipUserInfo{}).status().code() == ErrorCode::kBindBadAccessControl);
}

TEST_CASE("An accessControl EXTERNAL with only an indirect reference is refused",
          "[npac_bind]") {
  External ext = toExternal(sample());
  ext.direct_reference.reset();
  ext.indirect_reference = 3;  // a presentation context id: not how the profile names it
  auto ac = accessControlFromExternal(ext);
  REQUIRE_FALSE(ac.isOk());
  CHECK(ac.status().code() == ErrorCode::kBindBadAccessControl);
  CHECK(ac.status().message().find("direct-reference") != std::string::npos);
}

TEST_CASE("A SPID that is not exactly four characters is refused", "[npac_bind]") {
  LnpAccessControl ac = sample();
  ac.systemId = "00012";
  CHECK(validateAccessControl(ac).code() == ErrorCode::kBindBadAccessControl);
  auto r = decodeAccessControl(encodeAccessControl(ac));
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == ErrorCode::kBindBadAccessControl);
  CHECK(r.status().message().find("SPID") != std::string::npos);
  ac.systemId = "001";
  CHECK(accessControlErr(encodeAccessControl(ac)) == ErrorCode::kBindBadAccessControl);
}

TEST_CASE("Unknown system type and function bits are refused", "[npac_bind]") {
  auto bytes = encodeAccessControl(sample());
  auto typeBad = bytes;
  typeBad[10] = 0x04;  // systemType value octet
  CHECK(accessControlErr(typeBad) == ErrorCode::kBindBadAccessControl);
  LnpAccessControl ac = sample();
  ac.functions.bits = 1u << 6;
  CHECK(validateAccessControl(ac).code() == ErrorCode::kBindBadAccessControl);
  CHECK(accessControlErr(encodeAccessControl(ac)) == ErrorCode::kBindBadAccessControl);
}

TEST_CASE("A missing signature or a missing field is refused by name", "[npac_bind]") {
  auto noSig = hex(std::string("30 2D ") + kSignedFields);
  auto r = decodeAccessControl(noSig);
  REQUIRE_FALSE(r.isOk());
  CHECK(r.status().code() == ErrorCode::kBindBadAccessControl);
  CHECK(r.status().message().find("signature") != std::string::npos);
  CHECK(accessControlErr(hex("30 03 81 01 00")) == ErrorCode::kBindBadAccessControl);
  CHECK(accessControlErr(hex("31 00")) == ErrorCode::kBindBadAccessControl);
}

TEST_CASE("Truncated access control reports the BER error", "[npac_bind]") {
  auto bytes = encodeAccessControl(sample());
  bytes.pop_back();
  CHECK(accessControlErr(bytes) == ErrorCode::kBerLengthPastBuffer);
}

TEST_CASE("Recovery request carries a time range or all-unacknowledged", "[npac_bind]") {
  RecoveryRequest swim{true, {}, {}};
  CHECK(encodeRecoveryRequest(swim).bytes == hex("81 00"));
  auto back = decodeRecoveryRequest(hex("81 00"));
  REQUIRE(back.isOk());
  CHECK(back->allUnacknowledged);
  RecoveryRequest range{false, GeneralizedTime::parse("20261129000000Z").value(),
                        GeneralizedTime::parse("20261129010000Z").value()};
  auto bytes = encodeRecoveryRequest(range).bytes;
  CHECK(bytes == hex("A0 22 80 0F 32 30 32 36 31 31 32 39 30 30 30 30 30 30 5A"
                     " 81 0F 32 30 32 36 31 31 32 39 30 31 30 30 30 30 5A"));
  auto r2 = decodeRecoveryRequest(bytes);
  REQUIRE(r2.isOk());
  CHECK(*r2 == range);
  RecoveryRequest reversed{false, range.stopTime, range.startTime};
  CHECK(decodeRecoveryRequest(encodeRecoveryRequest(reversed).bytes).status().code() ==
        ErrorCode::kCmipBadArgument);
}

TEST_CASE("Recovery reply and heartbeat round-trip", "[npac_bind]") {
  auto reply = decodeRecoveryReply(encodeRecoveryReply(12).bytes);
  REQUIRE(reply.isOk());
  CHECK(*reply == 12);
  auto t = GeneralizedTime::parse("20261129150000Z").value();
  auto hb = decodeHeartbeat(encodeHeartbeat(t).bytes);
  REQUIRE(hb.isOk());
  CHECK(*hb == t);
  CHECK(oids::kNpacHeartbeatEvent.toString() == "1.3.6.1.4.1.103.7.0.0.90.5.1");
  CHECK(oids::kLnpRecoveryRequestAction.toString() == "1.3.6.1.4.1.103.7.0.0.90.6.1");
  CHECK(oids::kLnpRecoveryCompleteAction.toString() == "1.3.6.1.4.1.103.7.0.0.90.6.2");
}

TEST_CASE("Random access-control values round-trip and re-encode canonically", "[npac_bind][property]") {
  RandomValues rv(353);
  for (int i = 0; i < 300; ++i) {
    LnpAccessControl ac;
    ac.systemId = rv.printable(4);
    ac.systemType = static_cast<SystemType>(rv.range(0, 3));
    ac.userId = rv.printable(static_cast<size_t>(rv.range(1, 64)));
    ac.listId = rv.range(0, 2147483647);
    ac.keyId = rv.range(0, 2147483647);
    ac.departureTime = rv.time();
    ac.sequenceNumber = rv.range(0, 4294967295LL);
    ac.functions.bits = static_cast<uint32_t>(rv.range(0, 31));
    ac.recoveryMode = rv.coin();
    ac.signature = rv.bytes(static_cast<size_t>(rv.range(0, 512)));
    REQUIRE(validateAccessControl(ac).isOk());
    auto bytes = encodeAccessControl(ac);
    auto back = decodeAccessControl(bytes);
    INFO("iteration " << i << ": " << back.status().toString());
    REQUIRE(back.isOk());
    CHECK(*back == ac);
    CHECK(encodeAccessControl(*back) == bytes);
  }
}

TEST_CASE("Mutated access control never crashes the decoder and what decodes is valid",
          "[npac_bind][malformed]") {
  RandomValues rv(386);
  auto seed = encodeAccessControl(sample());
  int ok = 0;
  for (int i = 0; i < 3000; ++i) {
    auto v = seed;
    if (rv.coin()) {
      v[rv.range(0, v.size() - 1)] ^= static_cast<uint8_t>(rv.range(1, 255));
    } else {
      v.resize(rv.range(0, v.size() - 1));
    }
    auto r = decodeAccessControl(v);
    if (!r.isOk()) continue;
    ++ok;
    CHECK(validateAccessControl(*r).isOk());
    CHECK(decodeAccessControl(encodeAccessControl(*r)).value() == *r);
  }
  CHECK(ok > 0);
}

namespace {

LnpAccessControl npacSample() {
  LnpAccessControl ac = sample();
  ac.systemId = "NPAC";
  ac.systemType = SystemType::kNpac;
  ac.userId = "npacd";
  ac.keyId = 1;
  return ac;
}

// The accepting AARE's CMIPUserInfo for npacSample(), hand-encoded from X.711 §7.2 and
// the NPACD-BIND-PROFILE module: protocolVersion {version2}, accessControl [2] EXTERNAL
// (the [2] tag is explicit: X.711's CMIP-A-ASSOCIATE-Information marks only [0] and [1]
// IMPLICIT, so the EXTERNAL keeps its own UNIVERSAL 8 tag, 28).
const char* kNpacUserInfo =
    "30 4F 80 02 06 40"                                         // protocolVersion version2
    " A2 49 28 47 06 0B 2B 06 01 04 01 67 07 00 00 5A 01"       // [2] EXTERNAL, LnpAccessControl syntax
    " A0 38 30 36"                                              // single-ASN1-type
    " 80 04 4E 50 41 43 81 01 03 82 05 6E 70 61 63 64"           // "NPAC", npac, "npacd"
    " 83 01 01 84 01 01"                                        // listId 1, keyId 1
    " 85 0F 32 30 32 36 31 31 32 39 31 35 30 30 30 30 5A"       // 20261129150000Z
    " 86 01 07 87 02 04 90 88 01 00 89 03 00 AB CD";

Aare acceptedAare() {
  Aare aare;
  aare.applicationContext = oids::kSystemsManagementContext;
  return aare;
}

}  // namespace

TEST_CASE("An accepting AARE carries protocol version 2 and the NPAC's access control",
          "[npac_bind]") {
  Aare aare = acceptedAare();
  External aarq_cmip;
  aarq_cmip.indirect_reference = 3;
  attachNpacAccessControl(aare, npacSample(), &aarq_cmip);
  REQUIRE(aare.userInformation.size() == 1);
  CHECK(aare.userInformation[0].indirect_reference == std::optional<int64_t>(3));
  CHECK(aare.userInformation[0].data == hex(kNpacUserInfo));
}

TEST_CASE("The NPAC's access control survives an AARE's encode and decode", "[npac_bind]") {
  Aare aare = acceptedAare();
  attachNpacAccessControl(aare, npacSample(), nullptr);
  CHECK(aare.userInformation[0].direct_reference == oids::kCmipAbstractSyntax);
  auto decoded = decodeAcseApdu(encodeAcseApdu(AcseApdu{aare}));
  REQUIRE(decoded.isOk());
  auto npac = npacAccessControlFrom(std::get<Aare>(*decoded));
  INFO(npac.status().toString());
  REQUIRE(npac.isOk());
  REQUIRE(npac->has_value());
  CHECK(**npac == npacSample());
}

TEST_CASE("An AARE without user information carries no NPAC access control", "[npac_bind]") {
  // The accepting AARE npacd sent before it answered with its own access control.
  auto decoded = decodeAcseApdu(hex("61 14 a1 06 06 04 59 00 00 02 a2 03 02 01 00 a3 05 a1 03 02 01 00"));
  REQUIRE(decoded.isOk());
  auto npac = npacAccessControlFrom(std::get<Aare>(*decoded));
  REQUIRE(npac.isOk());
  CHECK_FALSE(npac->has_value());
}

TEST_CASE("A malformed NPAC access control in an AARE is an error naming the field",
          "[npac_bind]") {
  LnpAccessControl bad = npacSample();
  bad.systemId = "NPACX";  // encodes, but the profile says SIZE (4)
  CmipUserInfo info;
  info.accessControl = toExternal(bad);
  External ext;
  ext.indirect_reference = 3;
  ext.data = encodeCmipUserInfo(info);
  Aare aare = acceptedAare();
  aare.userInformation.push_back(ext);
  auto npac = npacAccessControlFrom(aare);
  REQUIRE_FALSE(npac.isOk());
  CHECK(npac.status().code() == ErrorCode::kBindBadAccessControl);
  CHECK(npac.status().message().find("systemId") != std::string::npos);
}
