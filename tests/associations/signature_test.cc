// SignatureVerifier / SignatureSigner with real keys generated through OpenSSL EVP.
#include "associations/signature.h"

#include <catch2/catch.hpp>

#include <string>

using namespace npac::associations;
using npac::StatusCode;

namespace {

// Key generation (RSA 2048 especially) is the slow part: do it once per algorithm.
// CTest runs each test case in its own process, so only what a case uses is generated.
const KeyPairPem& rsaKeys(int which) {
  static const KeyPairPem first = generateKeyPair(SignatureAlgorithm::kRsaSha256).value();
  if (which == 0) return first;
  static const KeyPairPem second = generateKeyPair(SignatureAlgorithm::kRsaSha256).value();
  return second;
}
const KeyPairPem& edKeys(int which) {
  static const KeyPairPem first = generateKeyPair(SignatureAlgorithm::kEd25519).value();
  if (which == 0) return first;
  static const KeyPairPem second = generateKeyPair(SignatureAlgorithm::kEd25519).value();
  return second;
}
const KeyPairPem& keys(SignatureAlgorithm algorithm, int which = 0) {
  return algorithm == SignatureAlgorithm::kRsaSha256 ? rsaKeys(which) : edKeys(which);
}

Bytes message() {
  const std::string text = "SPID=1234 keyList=7 key=3 seq=42 departure=20261129150000Z";
  return Bytes(text.begin(), text.end());
}

Bytes signWith(SignatureAlgorithm algorithm, const std::string& private_pem, const Bytes& data) {
  auto signer = SignatureSigner::fromPem(algorithm, private_pem);
  REQUIRE(signer.isOk());
  auto signature = signer.value().sign(data);
  REQUIRE(signature.isOk());
  return signature.value();
}

const SignatureAlgorithm kBoth[] = {SignatureAlgorithm::kRsaSha256, SignatureAlgorithm::kEd25519};

}  // namespace

TEST_CASE("A signature made with the private key verifies with its public key") {
  for (auto algorithm : kBoth) {
    INFO(toString(algorithm));
    const Bytes data = message();
    const Bytes signature = signWith(algorithm, keys(algorithm).private_pem, data);
    CHECK(SignatureVerifier::verify(algorithm, keys(algorithm).public_pem, data, signature).isOk());
  }
}

TEST_CASE("Signature lengths are those of the algorithm") {
  CHECK(signWith(SignatureAlgorithm::kRsaSha256, keys(SignatureAlgorithm::kRsaSha256).private_pem,
                 message())
            .size() == 256);  // 2048-bit modulus
  CHECK(signWith(SignatureAlgorithm::kEd25519, keys(SignatureAlgorithm::kEd25519).private_pem,
                 message())
            .size() == 64);  // RFC 8032 §5.1.6
}

TEST_CASE("One tampered byte of the signed data makes the signature invalid") {
  for (auto algorithm : kBoth) {
    INFO(toString(algorithm));
    Bytes data = message();
    const Bytes signature = signWith(algorithm, keys(algorithm).private_pem, data);
    data[5] ^= 0x01;
    auto status = SignatureVerifier::verify(algorithm, keys(algorithm).public_pem, data, signature);
    REQUIRE_FALSE(status.isOk());
    CHECK(status.code() == StatusCode::kBadSignature);
  }
}

TEST_CASE("One tampered byte of the signature makes it invalid") {
  for (auto algorithm : kBoth) {
    INFO(toString(algorithm));
    const Bytes data = message();
    Bytes signature = signWith(algorithm, keys(algorithm).private_pem, data);
    signature[signature.size() / 2] ^= 0x80;
    auto status = SignatureVerifier::verify(algorithm, keys(algorithm).public_pem, data, signature);
    REQUIRE_FALSE(status.isOk());
    CHECK(status.code() == StatusCode::kBadSignature);
  }
}

TEST_CASE("A signature checked with another provider's key is invalid") {
  for (auto algorithm : kBoth) {
    INFO(toString(algorithm));
    const Bytes data = message();
    const Bytes signature = signWith(algorithm, keys(algorithm, 0).private_pem, data);
    auto status =
        SignatureVerifier::verify(algorithm, keys(algorithm, 1).public_pem, data, signature);
    REQUIRE_FALSE(status.isOk());
    CHECK(status.code() == StatusCode::kBadSignature);
  }
}

TEST_CASE("A truncated or empty signature is invalid, not a crash") {
  for (auto algorithm : kBoth) {
    INFO(toString(algorithm));
    const Bytes data = message();
    Bytes signature = signWith(algorithm, keys(algorithm).private_pem, data);
    signature.resize(signature.size() - 1);
    auto truncated =
        SignatureVerifier::verify(algorithm, keys(algorithm).public_pem, data, signature);
    REQUIRE_FALSE(truncated.isOk());
    CHECK(truncated.code() == StatusCode::kBadSignature);
    auto empty = SignatureVerifier::verify(algorithm, keys(algorithm).public_pem, data, Bytes{});
    REQUIRE_FALSE(empty.isOk());
    CHECK(empty.code() == StatusCode::kBadSignature);
  }
}

TEST_CASE("Garbage PEM is reported as bad PEM") {
  const Bytes data = message();
  const Bytes signature(64, 0x11);
  for (std::string pem : {std::string("hello"), std::string(""),
                          std::string("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")}) {
    auto status = SignatureVerifier::verify(SignatureAlgorithm::kEd25519, pem, data, signature);
    REQUIRE_FALSE(status.isOk());
    CHECK(status.code() == StatusCode::kBadPem);
    CHECK_FALSE(status.message().empty());
  }
}

TEST_CASE("A private key given where a public key is expected is bad PEM") {
  auto verifier = SignatureVerifier::fromPem(SignatureAlgorithm::kEd25519,
                                             keys(SignatureAlgorithm::kEd25519).private_pem);
  REQUIRE_FALSE(verifier.isOk());
  CHECK(verifier.status().code() == StatusCode::kBadPem);
}

TEST_CASE("A key whose type differs from the declared algorithm is the wrong algorithm") {
  auto ed_as_rsa = SignatureVerifier::fromPem(SignatureAlgorithm::kRsaSha256,
                                              keys(SignatureAlgorithm::kEd25519).public_pem);
  REQUIRE_FALSE(ed_as_rsa.isOk());
  CHECK(ed_as_rsa.status().code() == StatusCode::kWrongAlgorithm);
  auto rsa_as_ed = SignatureVerifier::fromPem(SignatureAlgorithm::kEd25519,
                                              keys(SignatureAlgorithm::kRsaSha256).public_pem);
  REQUIRE_FALSE(rsa_as_ed.isOk());
  CHECK(rsa_as_ed.status().code() == StatusCode::kWrongAlgorithm);
  auto signer = SignatureSigner::fromPem(SignatureAlgorithm::kEd25519,
                                         keys(SignatureAlgorithm::kRsaSha256).private_pem);
  REQUIRE_FALSE(signer.isOk());
  CHECK(signer.status().code() == StatusCode::kWrongAlgorithm);
}

TEST_CASE("An RSA key shorter than 2048 bits is refused as weak") {
  auto small = generateKeyPair(SignatureAlgorithm::kRsaSha256, 1024);
  REQUIRE(small.isOk());
  auto verifier = SignatureVerifier::fromPem(SignatureAlgorithm::kRsaSha256, small.value().public_pem);
  REQUIRE_FALSE(verifier.isOk());
  CHECK(verifier.status().code() == StatusCode::kWeakKey);
}

TEST_CASE("An encrypted private key is refused without prompting") {
  const std::string encrypted =
      "-----BEGIN ENCRYPTED PRIVATE KEY-----\n"
      "MIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAgAAAAAAAAAAAICCAAw\n"
      "DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEAAAAAAAAAAAAAAAAAAAAAAEQAAA\n"
      "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"
      "AAAAAAAAAAAAAAAAAAAAAAA=\n"
      "-----END ENCRYPTED PRIVATE KEY-----\n";
  auto signer = SignatureSigner::fromPem(SignatureAlgorithm::kEd25519, encrypted);
  REQUIRE_FALSE(signer.isOk());
  CHECK(signer.status().code() == StatusCode::kBadPem);
}

TEST_CASE("A parsed verifier checks many signatures with one key") {
  const auto& pair = keys(SignatureAlgorithm::kEd25519);
  auto verifier = SignatureVerifier::fromPem(SignatureAlgorithm::kEd25519, pair.public_pem);
  REQUIRE(verifier.isOk());
  for (std::uint8_t i = 0; i < 8; ++i) {
    Bytes data = message();
    data.push_back(i);
    const Bytes signature = signWith(SignatureAlgorithm::kEd25519, pair.private_pem, data);
    CHECK(verifier.value().verify(data, signature).isOk());
    data.back() ^= 0xFF;
    CHECK_FALSE(verifier.value().verify(data, signature).isOk());
  }
}

TEST_CASE("Algorithm names round-trip through their text form") {
  for (auto algorithm : kBoth) {
    CHECK(signatureAlgorithmFromString(toString(algorithm)) == algorithm);
  }
  CHECK_FALSE(signatureAlgorithmFromString("dsa").has_value());
}

TEST_CASE("A public key's fingerprint is the SHA-256 of its DER SubjectPublicKeyInfo") {
  // Known answer: `openssl pkey -pubin -outform DER | sha256sum` of this key.
  const std::string pem =
      "-----BEGIN PUBLIC KEY-----\n"
      "MCowBQYDK2VwAyEA+4lj0FlSPCrYy13ZEs75dQSe3/kDHPJvLilrYWImJq0=\n"
      "-----END PUBLIC KEY-----\n";
  auto fingerprint = publicKeyFingerprint(pem);
  REQUIRE(fingerprint.isOk());
  CHECK(fingerprint.value() == "SHA256:6cfd39a1985b646f19a233a329474c2467c90cfcb2853ef7710e555cb3611e4d");
  auto bad = publicKeyFingerprint("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n");
  REQUIRE_FALSE(bad.isOk());
  CHECK(bad.status().code() == StatusCode::kBadPem);
}
