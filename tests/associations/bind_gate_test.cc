// BindGate: every rejection with its diagnostic, and the order of the checks.
#include "associations/bind_gate.h"

#include <catch2/catch.hpp>

#include <functional>
#include <string>

using namespace npac::associations;
using namespace std::chrono_literals;
using F = AssociationFunction;

namespace {

const KeyPairPem& edKeys() {
  static const KeyPairPem pair = generateKeyPair(SignatureAlgorithm::kEd25519).value();
  return pair;
}

Nsap ip(std::uint8_t last) { return Nsap::fromIpv4({127, 0, 0, last}); }

const FunctionMask kSoaMask = FunctionMask::of({F::kSoaManagement, F::kNotifications});
const FunctionMask kOtherMask = FunctionMask::of({F::kQueries});

// A bind that passes every check; each test breaks what it is about.
struct Scenario {
  WallTime now = WallTime(std::chrono::seconds(1'800'000'000));
  BindRequest request;
  Nsap peer = ip(2);
  bool provider_known = true;
  ProviderRecord provider;
  bool key_known = true;
  KeyRecord key;
  std::vector<LiveAssociation> live;
  BindTunables tunables;

  Scenario() {
    provider.spid = "1234";
    provider.system_type = SystemType::kSoa;
    key.key_list_id = 7;
    key.key_id = 3;
    key.algorithm = SignatureAlgorithm::kEd25519;
    key.public_pem = edKeys().public_pem;
    key.not_before = now - 24h;
    key.not_after = now + 24h * 300;
    key.last_sequence_number = 41;
    request.spid = "1234";
    request.system_type = SystemType::kSoa;
    request.user_id = "soa-user";
    request.key_list_id = 7;
    request.key_id = 3;
    request.departure_time = now;
    request.sequence_number = 42;
    request.functions = kSoaMask;
    const std::string signed_text = "the bytes cmip/ says the signature covers";
    request.signed_bytes.assign(signed_text.begin(), signed_text.end());
    sign();
  }
  void sign() {
    request.signature = SignatureSigner::fromPem(SignatureAlgorithm::kEd25519, edKeys().private_pem)
                            .value()
                            .sign(request.signed_bytes)
                            .value();
  }
  void addLive(AssociationId id, std::uint8_t host, FunctionMask mask) {
    live.push_back(LiveAssociation{id, ip(host), mask, id});
  }
  BindVerdict check() const {
    BindInput input{request, peer, provider_known ? &provider : nullptr,
                    key_known ? &key : nullptr, live, tunables, now};
    return BindGate().check(input);
  }
};

void expectRejected(const Scenario& scenario, BindDiagnostic expected) {
  const BindVerdict verdict = scenario.check();
  INFO(verdict.reason);
  REQUIRE_FALSE(verdict.admitted());
  CHECK(*verdict.rejection == expected);
  CHECK(verdict.reason.find(std::string(describe(expected))) == 0);
  CHECK(verdict.reason.find("SPID 1234") != std::string::npos);
}

}  // namespace

TEST_CASE("A correct first bind is admitted and consumes its sequence number") {
  Scenario s;
  const BindVerdict verdict = s.check();
  INFO(verdict.reason);
  REQUIRE(verdict.admitted());
  CHECK(verdict.decision.kind == BindDecision::Kind::kAccept);
  CHECK(verdict.consume_sequence == 42u);
}

TEST_CASE("A bind signed with a 2048-bit RSA key is admitted") {
  Scenario s;
  static const KeyPairPem rsa = generateKeyPair(SignatureAlgorithm::kRsaSha256).value();
  s.key.algorithm = SignatureAlgorithm::kRsaSha256;
  s.key.public_pem = rsa.public_pem;
  s.request.signature = SignatureSigner::fromPem(SignatureAlgorithm::kRsaSha256, rsa.private_pem)
                            .value()
                            .sign(s.request.signed_bytes)
                            .value();
  CHECK(s.check().admitted());
}

TEST_CASE("An unknown SPID is rejected") {
  Scenario s;
  s.provider_known = false;
  expectRejected(s, BindDiagnostic::kUnknownSpid);
}

TEST_CASE("A disabled SPID is rejected") {
  Scenario s;
  s.provider.enabled = false;
  expectRejected(s, BindDiagnostic::kSpidDisabled);
}

TEST_CASE("A system type other than the provider's is rejected") {
  Scenario s;
  s.request.system_type = SystemType::kLsms;
  s.request.functions = FunctionMask::of({F::kLsmsDataDownload});
  expectRejected(s, BindDiagnostic::kSystemTypeMismatch);
}

TEST_CASE("A provider binding as NPAC is rejected") {
  Scenario s;
  s.request.system_type = SystemType::kNpac;
  expectRejected(s, BindDiagnostic::kSystemTypeMismatch);
}

TEST_CASE("An SOA-and-LSMS provider may bind as LSMS") {
  Scenario s;
  s.provider.system_type = SystemType::kSoaAndLsms;
  s.request.system_type = SystemType::kLsms;
  s.request.functions = FunctionMask::of({F::kLsmsDataDownload, F::kNetworkDataManagement});
  CHECK(s.check().admitted());
}

TEST_CASE("An SOA asking for LSMS data download is rejected for its function mask") {
  Scenario s;
  s.request.functions = FunctionMask::of({F::kSoaManagement, F::kLsmsDataDownload});
  expectRejected(s, BindDiagnostic::kFunctionMaskNotAllowed);
}

TEST_CASE("An LSMS asking for SOA management is rejected for its function mask") {
  Scenario s;
  s.provider.system_type = SystemType::kLsms;
  s.request.system_type = SystemType::kLsms;
  s.request.functions = FunctionMask::of({F::kSoaManagement});
  expectRejected(s, BindDiagnostic::kFunctionMaskNotAllowed);
}

TEST_CASE("An empty function mask is rejected") {
  Scenario s;
  s.request.functions = FunctionMask();
  expectRejected(s, BindDiagnostic::kFunctionMaskNotAllowed);
}

TEST_CASE("Function mask bits beyond the five functions are rejected") {
  Scenario s;
  s.request.functions = FunctionMask(0x81);
  expectRejected(s, BindDiagnostic::kFunctionMaskNotAllowed);
}

TEST_CASE("The function mask table per system type is as documented") {
  CHECK(allowedFunctions(SystemType::kSoa) ==
        FunctionMask::of({F::kSoaManagement, F::kNetworkDataManagement, F::kNotifications, F::kQueries}));
  CHECK(allowedFunctions(SystemType::kLsms) ==
        FunctionMask::of({F::kLsmsDataDownload, F::kNetworkDataManagement, F::kNotifications, F::kQueries}));
  CHECK(allowedFunctions(SystemType::kSoaAndLsms).bits() == 0x1F);
  CHECK(allowedFunctions(SystemType::kNpac).empty());
}

TEST_CASE("An unknown key is rejected") {
  Scenario s;
  s.key_known = false;
  expectRejected(s, BindDiagnostic::kUnknownKey);
}

TEST_CASE("A key record for another key id is treated as unknown") {
  Scenario s;
  s.key.key_id = 4;
  expectRejected(s, BindDiagnostic::kUnknownKey);
}

TEST_CASE("A revoked key is rejected") {
  Scenario s;
  s.key.state = KeyState::kRevoked;
  expectRejected(s, BindDiagnostic::kKeyRevoked);
}

TEST_CASE("A key marked expired is rejected") {
  Scenario s;
  s.key.state = KeyState::kExpired;
  expectRejected(s, BindDiagnostic::kKeyExpired);
}

TEST_CASE("A key past its not-after time is rejected as expired") {
  Scenario s;
  s.key.not_after = s.now;  // valid up to, not including, not-after
  expectRejected(s, BindDiagnostic::kKeyExpired);
}

TEST_CASE("A key before its not-before time is rejected as not yet valid") {
  Scenario s;
  s.key.not_before = s.now + 1s;
  expectRejected(s, BindDiagnostic::kKeyNotYetValid);
}

TEST_CASE("A signature over tampered bytes is rejected") {
  Scenario s;
  s.request.signed_bytes[0] ^= 0x01;
  expectRejected(s, BindDiagnostic::kSignatureInvalid);
}

TEST_CASE("A key list entry holding garbage PEM rejects the bind as signature invalid") {
  Scenario s;
  s.key.public_pem = "not a key";
  const BindVerdict verdict = s.check();
  REQUIRE(verdict.rejection == BindDiagnostic::kSignatureInvalid);
  CHECK(verdict.reason.find("bad PEM") != std::string::npos);
}

TEST_CASE("A departure time outside the window is rejected, either side") {
  Scenario late;
  late.request.departure_time = late.now - 301s;
  expectRejected(late, BindDiagnostic::kDepartureTimeOutOfWindow);
  Scenario early;
  early.request.departure_time = early.now + 301s;
  expectRejected(early, BindDiagnostic::kDepartureTimeOutOfWindow);
  Scenario edge;
  edge.request.departure_time = edge.now - 300s;
  CHECK(edge.check().admitted());
}

TEST_CASE("A sequence number equal to the last one seen is a replay") {
  Scenario s;
  s.request.sequence_number = 41;
  expectRejected(s, BindDiagnostic::kSequenceReplayed);
}

TEST_CASE("A sequence number below the last one seen is a replay") {
  Scenario s;
  s.request.sequence_number = 7;
  expectRejected(s, BindDiagnostic::kSequenceReplayed);
}

TEST_CASE("The first bind with a key accepts any sequence number") {
  Scenario s;
  s.key.last_sequence_number.reset();
  s.request.sequence_number = 0;
  CHECK(s.check().admitted());
}

TEST_CASE("An NSAP outside the provisioned list is rejected") {
  Scenario s;
  s.provider.provisioned_nsaps = {ip(9), ip(10)};
  expectRejected(s, BindDiagnostic::kNsapNotProvisioned);
}

TEST_CASE("An NSAP in the provisioned list is admitted") {
  Scenario s;
  s.provider.provisioned_nsaps = {ip(9), ip(2)};
  CHECK(s.check().admitted());
}

TEST_CASE("A bind beyond max_associations_per_sp is rejected") {
  Scenario s;
  s.tunables.max_associations_per_sp = 2;
  s.addLive(1, 5, kOtherMask);
  s.addLive(2, 6, FunctionMask::of({F::kNetworkDataManagement}));
  expectRejected(s, BindDiagnostic::kTooManyAssociations);
}

TEST_CASE("A bind that replaces an association is not refused by max_associations_per_sp") {
  Scenario s;
  s.tunables.max_associations_per_sp = 1;
  s.addLive(1, 2, kSoaMask);  // same NSAP, same mask
  const BindVerdict verdict = s.check();
  REQUIRE(verdict.admitted());
  CHECK(verdict.decision.kind == BindDecision::Kind::kAcceptReplacing);
  CHECK(verdict.decision.replaced == 1u);
}

TEST_CASE("A recovery-mode bind while an association is up is rejected") {
  Scenario s;
  s.request.recovery_mode = true;
  s.addLive(1, 5, kOtherMask);
  expectRejected(s, BindDiagnostic::kRecoveryModeWhileUp);
}

TEST_CASE("A duplicate bind with SRR off and duplicate_bind reject is rejected") {
  Scenario s;
  s.tunables.duplicate_bind = DuplicateBind::kReject;
  s.addLive(1, 5, kSoaMask);
  expectRejected(s, BindDiagnostic::kDuplicateBindRejected);
}

TEST_CASE("A bind refused before its signature is checked consumes no sequence number") {
  Scenario s;
  s.key.state = KeyState::kRevoked;
  CHECK_FALSE(s.check().consume_sequence.has_value());
}

TEST_CASE("An authentic fresh bind refused later still consumes its sequence number") {
  Scenario s;
  s.provider.provisioned_nsaps = {ip(9)};
  const BindVerdict verdict = s.check();
  REQUIRE_FALSE(verdict.admitted());
  CHECK(verdict.consume_sequence == 42u);
}

TEST_CASE("A bind without access control gets authentication-required and an undecodable one authentication-failure") {
  CHECK(acseDiagnostic(BindDiagnostic::kNoAccessControl) == AcseUserDiagnostic::kAuthenticationRequired);
  CHECK(static_cast<int>(AcseUserDiagnostic::kAuthenticationRequired) == 14);  // X.227 §7.1.5.5
  CHECK(acseDiagnostic(BindDiagnostic::kBadAccessControl) == AcseUserDiagnostic::kAuthenticationFailure);
  CHECK(toString(BindDiagnostic::kNoAccessControl) == "no-access-control");
  CHECK(toString(BindDiagnostic::kBadAccessControl) == "bad-access-control");
}

TEST_CASE("Only storage-unavailable and owned-elsewhere are transient refusals") {
  CHECK(isTransient(BindDiagnostic::kOwnedElsewhere));
  CHECK(toString(BindDiagnostic::kOwnedElsewhere) == "owned-elsewhere");
  CHECK(acseDiagnostic(BindDiagnostic::kOwnedElsewhere) == AcseUserDiagnostic::kNoReasonGiven);
  CHECK(isTransient(BindDiagnostic::kStorageUnavailable));
  CHECK(toString(BindDiagnostic::kStorageUnavailable) == "storage-unavailable");
  CHECK(acseDiagnostic(BindDiagnostic::kStorageUnavailable) == AcseUserDiagnostic::kNoReasonGiven);
  for (int d = 0; d < static_cast<int>(BindDiagnostic::kStorageUnavailable); ++d) {
    CHECK_FALSE(isTransient(static_cast<BindDiagnostic>(d)));
  }
}

TEST_CASE("Every diagnostic has a name, a sentence and an ACSE diagnostic") {
  for (int d = 0; d <= static_cast<int>(BindDiagnostic::kOwnedElsewhere); ++d) {
    const auto diagnostic = static_cast<BindDiagnostic>(d);
    CHECK(toString(diagnostic) != "unknown");
    CHECK(describe(diagnostic) != "unknown");
  }
  CHECK(acseDiagnostic(BindDiagnostic::kSignatureInvalid) ==
        AcseUserDiagnostic::kAuthenticationFailure);
  CHECK(acseDiagnostic(BindDiagnostic::kUnknownSpid) ==
        AcseUserDiagnostic::kCallingApTitleNotRecognized);
  CHECK(acseDiagnostic(BindDiagnostic::kTooManyAssociations) ==
        AcseUserDiagnostic::kNoReasonGiven);
}

// Each breaker makes exactly one check fail, in the gate's order; breakers compose.
TEST_CASE("A bind failing two checks reports the one checked first") {
  struct Breaker {
    BindDiagnostic diagnostic;
    std::function<void(Scenario&)> apply;
  };
  const std::vector<Breaker> breakers = {
      {BindDiagnostic::kUnknownSpid, [](Scenario& s) { s.provider_known = false; }},
      {BindDiagnostic::kSpidDisabled, [](Scenario& s) { s.provider.enabled = false; }},
      {BindDiagnostic::kSystemTypeMismatch,
       [](Scenario& s) { s.request.system_type = SystemType::kLsms; }},
      {BindDiagnostic::kFunctionMaskNotAllowed,
       [](Scenario& s) {
         s.request.functions = FunctionMask(s.request.functions.bits() | 0x02 | 0x01);
       }},
      {BindDiagnostic::kUnknownKey, [](Scenario& s) { s.key_known = false; }},
      {BindDiagnostic::kKeyRevoked, [](Scenario& s) { s.key.state = KeyState::kRevoked; }},
      {BindDiagnostic::kKeyExpired, [](Scenario& s) { s.key.not_after = s.now - 1s; }},
      {BindDiagnostic::kKeyNotYetValid, [](Scenario& s) { s.key.not_before = s.now + 1h; }},
      {BindDiagnostic::kSignatureInvalid, [](Scenario& s) { s.request.signature[3] ^= 0x10; }},
      {BindDiagnostic::kDepartureTimeOutOfWindow,
       [](Scenario& s) { s.request.departure_time = s.now - 1h; }},
      {BindDiagnostic::kSequenceReplayed, [](Scenario& s) { s.request.sequence_number = 41; }},
      {BindDiagnostic::kNsapNotProvisioned,
       [](Scenario& s) { s.provider.provisioned_nsaps = {ip(99)}; }},
      {BindDiagnostic::kTooManyAssociations,
       [](Scenario& s) {
         s.tunables.max_associations_per_sp = 1;
         s.addLive(11, 50, FunctionMask::of({F::kNetworkDataManagement}));
       }},
      {BindDiagnostic::kRecoveryModeWhileUp,
       [](Scenario& s) {
         s.request.recovery_mode = true;
         s.addLive(12, 51, kOtherMask);
       }},
      {BindDiagnostic::kDuplicateBindRejected,
       [](Scenario& s) {
         s.tunables.duplicate_bind = DuplicateBind::kReject;
         s.addLive(13, 52, s.request.functions);
       }},
  };
  // Alone, each breaker yields its own diagnostic.
  for (const Breaker& breaker : breakers) {
    Scenario s;
    breaker.apply(s);
    INFO("alone: " << toString(breaker.diagnostic));
    CHECK(s.check().rejection == breaker.diagnostic);
  }
  // Two together: the earlier one wins, whichever was applied first.
  for (std::size_t i = 0; i < breakers.size(); ++i) {
    for (std::size_t j = i + 1; j < breakers.size(); ++j) {
      INFO(toString(breakers[i].diagnostic) << " + " << toString(breakers[j].diagnostic));
      Scenario forward;
      breakers[i].apply(forward);
      breakers[j].apply(forward);
      CHECK(forward.check().rejection == breakers[i].diagnostic);
      Scenario backward;
      breakers[j].apply(backward);
      breakers[i].apply(backward);
      CHECK(backward.check().rejection == breakers[i].diagnostic);
    }
  }
}
