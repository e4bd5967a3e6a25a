// ParsedKeyCache: a key's PEM text is parsed once and reused, a different text is parsed
// afresh, a bad PEM is an error every time, and BindGate keeps its providers' keys parsed.
#include "associations/parsed_key_cache.h"

#include <catch2/catch.hpp>

#include <string>

#include "associations/bind_gate.h"

using namespace npac::associations;
using npac::StatusCode;
using namespace std::chrono_literals;

namespace {

const KeyPairPem& cachedKeys(int which = 0) {
  static const KeyPairPem first = generateKeyPair(SignatureAlgorithm::kEd25519).value();
  if (which == 0) return first;
  static const KeyPairPem second = generateKeyPair(SignatureAlgorithm::kEd25519).value();
  return second;
}

Bytes bytesOf(const std::string& text) { return Bytes(text.begin(), text.end()); }

Bytes signWith(const std::string& private_pem, const Bytes& data) {
  return SignatureSigner::fromPem(SignatureAlgorithm::kEd25519, private_pem).value().sign(data).value();
}

}  // namespace

TEST_CASE("A public key's PEM text is parsed once and its verifier reused") {
  ParsedKeyCache cache;
  const Bytes data = bytesOf("SPID=1234 seq=42");
  const Bytes signature = signWith(cachedKeys().private_pem, data);
  for (int bind = 0; bind < 3; ++bind) {
    auto verifier = cache.verifier(SignatureAlgorithm::kEd25519, cachedKeys().public_pem);
    REQUIRE(verifier.isOk());
    CHECK(verifier.value().verify(data, signature).isOk());
  }
  CHECK(cache.parses() == 1);
  CHECK(cache.size() == 1);
}

TEST_CASE("Another key's PEM text gets its own verifier, which refuses the first key's signature") {
  ParsedKeyCache cache;
  const Bytes data = bytesOf("SPID=1234 seq=42");
  const Bytes signature = signWith(cachedKeys(0).private_pem, data);
  REQUIRE(cache.verifier(SignatureAlgorithm::kEd25519, cachedKeys(0).public_pem).value().verify(data, signature).isOk());
  auto other = cache.verifier(SignatureAlgorithm::kEd25519, cachedKeys(1).public_pem);
  REQUIRE(other.isOk());
  CHECK(other.value().verify(data, signature).code() == StatusCode::kBadSignature);
  CHECK(cache.parses() == 2);
}

TEST_CASE("A PEM text under the other algorithm is refused with wrong algorithm even once cached") {
  ParsedKeyCache cache;
  REQUIRE(cache.verifier(SignatureAlgorithm::kEd25519, cachedKeys().public_pem).isOk());
  auto as_rsa = cache.verifier(SignatureAlgorithm::kRsaSha256, cachedKeys().public_pem);
  REQUIRE_FALSE(as_rsa.isOk());
  CHECK(as_rsa.status().code() == StatusCode::kWrongAlgorithm);
}

TEST_CASE("A PEM text that is no key is refused each time and never cached") {
  ParsedKeyCache cache;
  for (int bind = 0; bind < 2; ++bind) {
    auto verifier = cache.verifier(SignatureAlgorithm::kEd25519, "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n");
    REQUIRE_FALSE(verifier.isOk());
    CHECK(verifier.status().code() == StatusCode::kBadPem);
  }
  CHECK(cache.size() == 0);
  CHECK(cache.parses() == 2);
}

TEST_CASE("A private key's PEM text is parsed once and its signer reused") {
  ParsedKeyCache cache;
  const Bytes data = bytesOf("NPAC bind answer");
  auto verifier = SignatureVerifier::fromPem(SignatureAlgorithm::kEd25519, cachedKeys().public_pem).value();
  for (int bind = 0; bind < 3; ++bind) {
    auto signer = cache.signer(SignatureAlgorithm::kEd25519, cachedKeys().private_pem);
    REQUIRE(signer.isOk());
    CHECK(verifier.verify(data, signer.value().sign(data).value()).isOk());
  }
  CHECK(cache.parses() == 1);
}

TEST_CASE("The cache is emptied when it holds its most keys, then fills again") {
  ParsedKeyCache cache(2);
  REQUIRE(cache.verifier(SignatureAlgorithm::kEd25519, cachedKeys(0).public_pem).isOk());
  REQUIRE(cache.verifier(SignatureAlgorithm::kEd25519, cachedKeys(1).public_pem).isOk());
  CHECK(cache.size() == 2);
  REQUIRE(cache.signer(SignatureAlgorithm::kEd25519, cachedKeys(0).private_pem).isOk());
  CHECK(cache.size() == 1);
  REQUIRE(cache.verifier(SignatureAlgorithm::kEd25519, cachedKeys(0).public_pem).isOk());
  CHECK(cache.parses() == 4);
}

TEST_CASE("BindGate parses a provider's key once over two binds with it") {
  const auto now = WallTime(std::chrono::seconds(1'800'000'000));
  ProviderRecord provider;
  provider.spid = "1234";
  provider.system_type = SystemType::kSoa;
  KeyRecord key;
  key.key_list_id = 7;
  key.key_id = 3;
  key.algorithm = SignatureAlgorithm::kEd25519;
  key.public_pem = cachedKeys().public_pem;
  key.not_before = now - 24h;
  key.not_after = now + 24h * 300;
  key.last_sequence_number = 41;
  BindRequest request;
  request.spid = "1234";
  request.system_type = SystemType::kSoa;
  request.key_list_id = 7;
  request.key_id = 3;
  request.departure_time = now;
  request.functions = FunctionMask::of({AssociationFunction::kSoaManagement});
  request.signed_bytes = bytesOf("the signed content");
  request.signature = signWith(cachedKeys().private_pem, request.signed_bytes);
  const Nsap peer = Nsap::fromIpv4({127, 0, 0, 2});
  BindTunables tunables;
  BindGate gate;
  for (std::uint64_t sequence : {42u, 43u}) {
    request.sequence_number = sequence;
    key.last_sequence_number = sequence - 1;
    BindInput input{request, peer, &provider, &key, {}, tunables, now};
    const BindVerdict verdict = gate.check(input);
    INFO(verdict.reason);
    CHECK(verdict.admitted());
  }
  CHECK(gate.keys().parses() == 1);
  // A signature the key did not make is still refused with the cached key.
  request.sequence_number = 44;
  key.last_sequence_number = 43;
  request.signature = signWith(cachedKeys(1).private_pem, request.signed_bytes);
  BindInput input{request, peer, &provider, &key, {}, tunables, now};
  const BindVerdict verdict = gate.check(input);
  REQUIRE_FALSE(verdict.admitted());
  CHECK(*verdict.rejection == BindDiagnostic::kSignatureInvalid);
}
