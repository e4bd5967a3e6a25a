// The cmip/ bind profile meets the BindGate: a bind signed by the simulator's rule over
// cmip::signedContent() is admitted; any signed field changed afterwards is refused.
#include "associations/cmip_bind.h"

#include <catch2/catch.hpp>

#include <functional>

#include "associations/bind_gate.h"
#include "tests/associations/test_values.h"

using namespace npac;
using namespace npac::associations;
using namespace npac::associations::testing;
using namespace std::chrono_literals;

namespace {



cmip::LnpAccessControl signedBind() {
  cmip::LnpAccessControl ac;
  ac.systemId = "1234";
  ac.systemType = cmip::SystemType::kSoa;
  ac.userId = "soa-user";
  ac.listId = 7;
  ac.keyId = 3;
  ac.departureTime = toCmip(kNow - 2s);
  ac.sequenceNumber = 42;
  ac.functions.add(cmip::AssociationFunction::kSoaManagement)
      .add(cmip::AssociationFunction::kNotifications);
  ac.recoveryMode = false;
  auto signer = SignatureSigner::fromPem(SignatureAlgorithm::kEd25519, keys().private_pem);
  ac.signature = signer.value().sign(cmip::signedContent(ac)).value();
  return ac;
}

BindVerdict gate(const BindRequest& request) {
  ProviderRecord provider{"1234", SystemType::kSoa, true, {}};
  KeyRecord key;
  key.key_list_id = 7;
  key.key_id = 3;
  key.algorithm = SignatureAlgorithm::kEd25519;
  key.public_pem = keys().public_pem;
  key.not_before = kNow - 24h;
  key.not_after = kNow + 24h;
  const Nsap peer = Nsap::fromIpv4({127, 0, 0, 2});
  const BindTunables tunables;
  return BindGate().check(BindInput{request, peer, &provider, &key, {}, tunables, kNow});
}

}  // namespace

TEST_CASE("Every field of a cmip bind reaches the BindRequest") {
  const auto ac = signedBind();
  const auto request = bindRequestFrom(ac);
  REQUIRE(request.has_value());
  CHECK(request->spid == "1234");
  CHECK(request->system_type == SystemType::kSoa);
  CHECK(request->user_id == "soa-user");
  CHECK(request->key_list_id == 7u);
  CHECK(request->key_id == 3u);
  CHECK(request->departure_time == kNow - 2s);
  CHECK(request->sequence_number == 42u);
  CHECK(request->functions == FunctionMask::of({AssociationFunction::kSoaManagement,
                                                AssociationFunction::kNotifications}));
  CHECK_FALSE(request->recovery_mode);
  CHECK(request->signature == ac.signature);
  CHECK(request->signed_bytes == cmip::signedContent(ac));
}

TEST_CASE("A bind signed over cmip's signed content is admitted by the gate") {
  const auto request = bindRequestFrom(signedBind());
  REQUIRE(request.has_value());
  const BindVerdict verdict = gate(*request);
  INFO(verdict.reason);
  CHECK(verdict.admitted());
}

TEST_CASE("Changing any signed field after signing makes the gate refuse the signature") {
  std::vector<std::function<void(cmip::LnpAccessControl&)>> changes = {
      [](auto& ac) { ac.userId = "intruder"; },
      [](auto& ac) { ac.sequenceNumber = 43; },
      [](auto& ac) { ac.recoveryMode = true; },
      [](auto& ac) { ac.functions.add(cmip::AssociationFunction::kQueries); },
      [](auto& ac) { ac.departureTime = toCmip(kNow - 1s); },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    INFO("change " << i);
    auto ac = signedBind();
    changes[i](ac);
    const auto request = bindRequestFrom(ac);
    REQUIRE(request.has_value());
    CHECK(gate(*request).rejection == BindDiagnostic::kSignatureInvalid);
  }
}

TEST_CASE("Out-of-range key numbers do not become a BindRequest") {
  auto ac = signedBind();
  ac.keyId = -1;
  CHECK_FALSE(bindRequestFrom(ac).has_value());
  ac = signedBind();
  ac.listId = std::int64_t{1} << 40;
  CHECK_FALSE(bindRequestFrom(ac).has_value());
}

TEST_CASE("System types and function masks map both ways") {
  for (auto type : {SystemType::kSoa, SystemType::kLsms, SystemType::kSoaAndLsms, SystemType::kNpac}) {
    CHECK(systemTypeFrom(toCmip(type)) == type);
  }
  for (std::uint8_t bits = 0; bits < 32; ++bits) {
    CHECK(functionMaskFrom(toCmip(FunctionMask(bits))) == FunctionMask(bits));
  }
}

TEST_CASE("Recovery requests map to a time range or everything unacknowledged") {
  cmip::RecoveryRequest swim;
  swim.allUnacknowledged = true;
  CHECK(recoveryRequestFrom(swim).kind == RecoveryRequest::Kind::kUnacknowledged);
  cmip::RecoveryRequest range;
  range.startTime = toCmip(kNow - 1h);
  range.stopTime = toCmip(kNow);
  const RecoveryRequest mapped = recoveryRequestFrom(range);
  CHECK(mapped.kind == RecoveryRequest::Kind::kTimeRange);
  CHECK(mapped.from == kNow - 1h);
  CHECK(mapped.to == kNow);
}

namespace {

NpacAccessControlFields npacFields() {
  NpacAccessControlFields fields;
  fields.system_id = "NPAC";
  fields.key_list_id = 1;
  fields.key_id = 2;
  fields.sequence_number = 41;
  fields.departure_time = kNow + 750ms;  // the wire carries whole seconds
  fields.functions = FunctionMask(0b01001);
  fields.recovery_mode = true;
  return fields;
}

}  // namespace

TEST_CASE("The NPAC's access control says npac and the accepted functions and verifies with its key") {
  for (SignatureAlgorithm algorithm : {SignatureAlgorithm::kEd25519, SignatureAlgorithm::kRsaSha256}) {
    INFO(toString(algorithm));
    const KeyPairPem pair = generateKeyPair(algorithm).value();
    auto signer = SignatureSigner::fromPem(algorithm, pair.private_pem).value();
    auto npac = signedNpacAccessControl(npacFields(), signer);
    REQUIRE(npac.isOk());
    const cmip::LnpAccessControl& ac = npac.value();
    CHECK(ac.systemId == "NPAC");
    CHECK(ac.systemType == cmip::SystemType::kNpac);
    CHECK(ac.listId == 1);
    CHECK(ac.keyId == 2);
    CHECK(ac.sequenceNumber == 41);
    CHECK(ac.functions.bits == 0b01001u);
    CHECK(ac.recoveryMode);
    CHECK(wallTimeFrom(ac.departureTime) == kNow);
    // What the provider receives: the decoded wire value.
    auto received = cmip::decodeAccessControl(cmip::encodeAccessControl(ac));
    REQUIRE(received.isOk());
    auto verifier = SignatureVerifier::fromPem(algorithm, pair.public_pem).value();
    CHECK(verifyNpacAccessControl(*received, verifier).isOk());
  }
}

TEST_CASE("The NPAC's access control does not verify with another key or after a change") {
  auto signer = SignatureSigner::fromPem(SignatureAlgorithm::kEd25519, keys().private_pem).value();
  cmip::LnpAccessControl ac = signedNpacAccessControl(npacFields(), signer).value();
  const KeyPairPem other = generateKeyPair(SignatureAlgorithm::kEd25519).value();
  auto wrong = SignatureVerifier::fromPem(SignatureAlgorithm::kEd25519, other.public_pem).value();
  Status status = verifyNpacAccessControl(ac, wrong);
  REQUIRE_FALSE(status.isOk());
  CHECK(status.code() == StatusCode::kBadSignature);
  auto right = SignatureVerifier::fromPem(SignatureAlgorithm::kEd25519, keys().public_pem).value();
  cmip::LnpAccessControl changed = ac;
  changed.functions = toCmip(FunctionMask(0b11111));
  CHECK_FALSE(verifyNpacAccessControl(changed, right).isOk());
}

TEST_CASE("An access control whose systemType is not npac is not the NPAC's") {
  auto signer = SignatureSigner::fromPem(SignatureAlgorithm::kEd25519, keys().private_pem).value();
  cmip::LnpAccessControl ac = signedNpacAccessControl(npacFields(), signer).value();
  ac.systemType = cmip::SystemType::kSoa;
  ac.signature = signer.sign(cmip::signedContent(ac)).value();  // well signed, wrong type
  auto verifier = SignatureVerifier::fromPem(SignatureAlgorithm::kEd25519, keys().public_pem).value();
  Status status = verifyNpacAccessControl(ac, verifier);
  REQUIRE_FALSE(status.isOk());
  CHECK(status.message().find("not npac") != std::string::npos);
}

TEST_CASE("An NPAC system id that is not four PrintableString characters is not signed") {
  auto signer = SignatureSigner::fromPem(SignatureAlgorithm::kEd25519, keys().private_pem).value();
  NpacAccessControlFields fields = npacFields();
  fields.system_id = "NPAC-EAST";
  auto npac = signedNpacAccessControl(fields, signer);
  REQUIRE_FALSE(npac.isOk());
  CHECK(npac.status().message().find("systemId") != std::string::npos);
}
