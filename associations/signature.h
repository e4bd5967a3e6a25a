// Bind signatures: verify (NPAC side) and sign (the simulator's side) with OpenSSL 3 EVP.
//
// Every NPAC bind carries a digital signature made with the provider's private key from a
// key list exchanged with the NPAC (NPAC IIS key lists). The BindGate verifies it
// over the exact bytes cmip/ says the signature covers, with the public key of the
// (key list id, key id) named in the bind. Two algorithms are supported:
//   - kRsaSha256: RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §8.2), RSA keys of at least
//     kMinRsaBits bits;
//   - kEd25519:   pure Ed25519 (RFC 8032 §5.1), no pre-hash.
// Public keys are PEM SubjectPublicKeyInfo ("BEGIN PUBLIC KEY"); private keys are PEM
// PKCS#8 ("BEGIN PRIVATE KEY"), unencrypted (an encrypted key is refused, never prompted
// for). Every failure is a value with a code and a sentence an operator can act on.
//
// Threading: a SignatureVerifier / SignatureSigner is immutable after construction and may
// be shared between threads (each call uses its own EVP_MD_CTX; the EVP_PKEY is only read).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct evp_pkey_st;  // OpenSSL's EVP_PKEY, kept out of this header.

namespace npac::associations {

enum class SignatureAlgorithm : std::uint8_t { kRsaSha256, kEd25519 };

// "rsa-sha256" / "ed25519": the one spelling every program writes (the key-list store,
// the admin API, npacctl, npac-soa-sim keygen) and reads. "rsa", the simulator's earlier
// name, is read as rsa-sha256 wherever an algorithm is read, and never written
// (common/vocabulary.h keeps aliases the same way).
std::string_view toString(SignatureAlgorithm algorithm);
std::optional<SignatureAlgorithm> signatureAlgorithmFromString(std::string_view name);
inline constexpr const char* kSignatureAlgorithmNames = "ed25519 or rsa-sha256";

// NIST SP 800-131A: RSA below 2048 bits is not acceptable for signatures.
inline constexpr int kMinRsaBits = 2048;

// A failure is a Status of the association group (common/status.h): kBadPem (the text is
// not a PEM key of the expected kind), kWrongAlgorithm (the key's type is not the
// algorithm the key list declares), kWeakKey (an RSA key shorter than kMinRsaBits),
// kBadSignature (the signature does not verify over the given bytes) or
// kSignatureInternal (OpenSSL failed for a reason unrelated to the input); its message
// says what went wrong, for the association log.

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

class SignatureVerifier {
 public:
  // Parses the public key once; a key list entry is parsed when it is loaded.
  static Result<SignatureVerifier> fromPem(SignatureAlgorithm algorithm, std::string_view public_pem);
  // One-shot convenience: parse and verify.
  static Status verify(SignatureAlgorithm algorithm, std::string_view public_pem, ByteView message,
                       ByteView signature);

  Status verify(ByteView message, ByteView signature) const;
  SignatureAlgorithm algorithm() const { return algorithm_; }

 private:
  SignatureVerifier(SignatureAlgorithm algorithm, std::shared_ptr<evp_pkey_st> key)
      : algorithm_(algorithm), key_(std::move(key)) {}
  SignatureAlgorithm algorithm_;
  std::shared_ptr<evp_pkey_st> key_;  // shared, read-only: copies are cheap
};

class SignatureSigner {
 public:
  static Result<SignatureSigner> fromPem(SignatureAlgorithm algorithm, std::string_view private_pem);
  Result<Bytes> sign(ByteView message) const;
  SignatureAlgorithm algorithm() const { return algorithm_; }

 private:
  SignatureSigner(SignatureAlgorithm algorithm, std::shared_ptr<evp_pkey_st> key)
      : algorithm_(algorithm), key_(std::move(key)) {}
  SignatureAlgorithm algorithm_;
  std::shared_ptr<evp_pkey_st> key_;
};

// A fresh key pair as PEM text (PKCS#8 private, SubjectPublicKeyInfo public): for
// `npacctl key add`, the simulator, and tests. rsa_bits is used for kRsaSha256 only.
struct KeyPairPem {
  std::string private_pem;
  std::string public_pem;
};
Result<KeyPairPem> generateKeyPair(SignatureAlgorithm algorithm, int rsa_bits = kMinRsaBits);

// "SHA256:" and the lowercase hex SHA-256 of the key's DER SubjectPublicKeyInfo: what an
// operator compares when a key is exported from one system and installed in another
// (the same digest `openssl pkey -pubin -outform DER | sha256sum` prints). kBadPem if the
// text is not a PEM public key.
Result<std::string> publicKeyFingerprint(std::string_view public_pem);

// The algorithm a public key PEM is for, read from the key itself: an Ed25519 key is
// kEd25519, an RSA key kRsaSha256 (checked as fromPem checks it: at least kMinRsaBits).
// kBadPem if the text is not a PEM public key, kWrongAlgorithm for another key type
// (EC, DSA…), kWeakKey for a short RSA key. So an operator need not say what the key
// already says (`npacctl key add` without --algorithm).
Result<SignatureAlgorithm> publicKeyAlgorithm(std::string_view public_pem);

}  // namespace npac::associations
