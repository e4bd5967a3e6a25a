#include "associations/signature.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "common/hex.h"

namespace npac::associations {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

std::shared_ptr<evp_pkey_st> own(EVP_PKEY* key) {
  return std::shared_ptr<evp_pkey_st>(key, [](EVP_PKEY* k) { EVP_PKEY_free(k); });
}

// Drains OpenSSL's thread-local error queue into one line, so no stale error leaks into
// the next caller on this thread.
std::string drainOpensslErrors() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text;
}

std::string withOpenssl(std::string sentence) {
  std::string openssl = drainOpensslErrors();
  if (!openssl.empty()) sentence += " (openssl: " + openssl + ")";
  return sentence;
}

// Never prompt on a terminal for a passphrase: an encrypted key simply fails to load.
int refusePassphrase(char*, int, int, void*) { return -1; }

BioPtr memoryBio(std::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// The algorithm a key list declares must match the key's own type.
Status checkKeyType(SignatureAlgorithm algorithm, EVP_PKEY* key) {
  const int type = EVP_PKEY_get_base_id(key);
  switch (algorithm) {
    case SignatureAlgorithm::kRsaSha256:
      if (type != EVP_PKEY_RSA) {
        return Status::error(StatusCode::kWrongAlgorithm, std::string("key list declares rsa-sha256 but the key is ") +
                                                              OBJ_nid2sn(type));
      }
      if (EVP_PKEY_get_bits(key) < kMinRsaBits) {
        return Status::error(StatusCode::kWeakKey, "RSA key has " + std::to_string(EVP_PKEY_get_bits(key)) +
                                                       " bits; at least " + std::to_string(kMinRsaBits) +
                                                       " are required");
      }
      return Status::ok();
    case SignatureAlgorithm::kEd25519:
      if (type != EVP_PKEY_ED25519) {
        return Status::error(StatusCode::kWrongAlgorithm, std::string("key list declares ed25519 but the key is ") +
                                                              OBJ_nid2sn(type));
      }
      return Status::ok();
  }
  return Status::error(StatusCode::kWrongAlgorithm, "unknown algorithm");
}

// RFC 8032: Ed25519 signs the message itself (no digest); RSA uses SHA-256.
const EVP_MD* digestFor(SignatureAlgorithm algorithm) {
  return algorithm == SignatureAlgorithm::kRsaSha256 ? EVP_sha256() : nullptr;
}

}  // namespace

std::string_view toString(SignatureAlgorithm algorithm) {
  switch (algorithm) {
    case SignatureAlgorithm::kRsaSha256: return "rsa-sha256";
    case SignatureAlgorithm::kEd25519: return "ed25519";
  }
  return "unknown";
}

std::optional<SignatureAlgorithm> signatureAlgorithmFromString(std::string_view name) {
  if (name == "rsa-sha256" || name == "rsa") return SignatureAlgorithm::kRsaSha256;
  if (name == "ed25519") return SignatureAlgorithm::kEd25519;
  return std::nullopt;
}

namespace {

// A PEM SubjectPublicKeyInfo, owned; kBadPem when the text is not one.
Result<std::shared_ptr<evp_pkey_st>> readPublicPem(std::string_view public_pem) {
  ERR_clear_error();
  BioPtr bio = memoryBio(public_pem);
  if (!bio) return Status::error(StatusCode::kSignatureInternal, withOpenssl("BIO_new_mem_buf"));
  EVP_PKEY* raw = PEM_read_bio_PUBKEY(bio.get(), nullptr, refusePassphrase, nullptr);
  if (raw == nullptr) {
    return Status::error(StatusCode::kBadPem,
                         withOpenssl("not a PEM public key (expected -----BEGIN PUBLIC KEY-----)"));
  }
  return own(raw);
}

}  // namespace

Result<SignatureAlgorithm> publicKeyAlgorithm(std::string_view public_pem) {
  auto read = readPublicPem(public_pem);
  if (!read.isOk()) return read.status();
  const int type = EVP_PKEY_get_base_id(read.value().get());
  const SignatureAlgorithm algorithm =
      type == EVP_PKEY_ED25519 ? SignatureAlgorithm::kEd25519 : SignatureAlgorithm::kRsaSha256;
  if (type != EVP_PKEY_ED25519 && type != EVP_PKEY_RSA) {
    return Status::error(StatusCode::kWrongAlgorithm, std::string("the key is ") + OBJ_nid2sn(type) + ": npacd takes " +
                                                          kSignatureAlgorithmNames + " keys");
  }
  NPAC_RETURN_IF_ERROR(checkKeyType(algorithm, read.value().get()));
  return algorithm;
}

Result<SignatureVerifier> SignatureVerifier::fromPem(
    SignatureAlgorithm algorithm, std::string_view public_pem) {
  auto read = readPublicPem(public_pem);
  if (!read.isOk()) return read.status();
  std::shared_ptr<evp_pkey_st> key = std::move(read.value());
  EVP_PKEY* raw = key.get();
  NPAC_RETURN_IF_ERROR(checkKeyType(algorithm, raw));
  return SignatureVerifier(algorithm, std::move(key));
}

Status SignatureVerifier::verify(SignatureAlgorithm algorithm,
                                 std::string_view public_pem, ByteView message,
                                 ByteView signature) {
  auto verifier = fromPem(algorithm, public_pem);
  if (!verifier.isOk()) return verifier.status();
  return verifier.value().verify(message, signature);
}

Status SignatureVerifier::verify(ByteView message, ByteView signature) const {
  ERR_clear_error();
  if (signature.empty()) {
    return Status::error(StatusCode::kBadSignature, "the signature is empty");
  }
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) return Status::error(StatusCode::kSignatureInternal, withOpenssl("EVP_MD_CTX_new"));
  if (EVP_DigestVerifyInit(ctx.get(), nullptr, digestFor(algorithm_), nullptr, key_.get()) != 1) {
    return Status::error(StatusCode::kSignatureInternal, withOpenssl("EVP_DigestVerifyInit"));
  }
  // 1 = valid; 0 = does not verify; < 0 = malformed signature (wrong length, bad encoding).
  // Both of the latter mean "this signature is not good for these bytes".
  const int rc = EVP_DigestVerify(ctx.get(), signature.data(), signature.size(),
                                  message.data(), message.size());
  if (rc == 1) return Status::ok();
  return Status::error(StatusCode::kBadSignature, withOpenssl(std::string(toString(algorithm_)) +
                                                              " signature does not verify over the " +
                                                              std::to_string(message.size()) + " signed bytes"));
}

Result<SignatureSigner> SignatureSigner::fromPem(SignatureAlgorithm algorithm,
                                                 std::string_view private_pem) {
  ERR_clear_error();
  BioPtr bio = memoryBio(private_pem);
  if (!bio) return Status::error(StatusCode::kSignatureInternal, withOpenssl("BIO_new_mem_buf"));
  EVP_PKEY* raw = PEM_read_bio_PrivateKey(bio.get(), nullptr, refusePassphrase, nullptr);
  if (raw == nullptr) {
    return Status::error(StatusCode::kBadPem,
                         withOpenssl("not an unencrypted PEM private key (expected -----BEGIN PRIVATE KEY-----)"));
  }
  auto key = own(raw);
  NPAC_RETURN_IF_ERROR(checkKeyType(algorithm, raw));
  return SignatureSigner(algorithm, std::move(key));
}

Result<Bytes> SignatureSigner::sign(ByteView message) const {
  ERR_clear_error();
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) return Status::error(StatusCode::kSignatureInternal, withOpenssl("EVP_MD_CTX_new"));
  if (EVP_DigestSignInit(ctx.get(), nullptr, digestFor(algorithm_), nullptr, key_.get()) != 1) {
    return Status::error(StatusCode::kSignatureInternal, withOpenssl("EVP_DigestSignInit"));
  }
  std::size_t length = 0;
  if (EVP_DigestSign(ctx.get(), nullptr, &length, message.data(), message.size()) != 1) {
    return Status::error(StatusCode::kSignatureInternal, withOpenssl("EVP_DigestSign (size)"));
  }
  Bytes signature(length);
  if (EVP_DigestSign(ctx.get(), signature.data(), &length, message.data(), message.size()) != 1) {
    return Status::error(StatusCode::kSignatureInternal, withOpenssl("EVP_DigestSign"));
  }
  signature.resize(length);
  return signature;
}

Result<KeyPairPem> generateKeyPair(SignatureAlgorithm algorithm, int rsa_bits) {
  ERR_clear_error();
  EVP_PKEY* raw = algorithm == SignatureAlgorithm::kRsaSha256
                      ? EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(rsa_bits))
                      : EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (raw == nullptr) {
    return Status::error(StatusCode::kSignatureInternal, withOpenssl("key generation failed"));
  }
  auto key = own(raw);
  auto toText = [](BIO* bio) {
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    return std::string(data, static_cast<std::size_t>(size));
  };
  BioPtr private_bio(BIO_new(BIO_s_mem()));
  BioPtr public_bio(BIO_new(BIO_s_mem()));
  if (!private_bio || !public_bio ||
      PEM_write_bio_PrivateKey(private_bio.get(), raw, nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_bio_PUBKEY(public_bio.get(), raw) != 1) {
    return Status::error(StatusCode::kSignatureInternal, withOpenssl("writing PEM failed"));
  }
  return KeyPairPem{toText(private_bio.get()), toText(public_bio.get())};
}

Result<std::string> publicKeyFingerprint(std::string_view public_pem) {
  auto read = readPublicPem(public_pem);
  if (!read.isOk()) return read.status();
  std::shared_ptr<evp_pkey_st> key = std::move(read.value());
  EVP_PKEY* raw = key.get();
  unsigned char* der = nullptr;
  const int length = i2d_PUBKEY(raw, &der);
  if (length <= 0) return Status::error(StatusCode::kSignatureInternal, withOpenssl("i2d_PUBKEY"));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  const int ok = EVP_Digest(der, static_cast<std::size_t>(length), digest, &digest_length, EVP_sha256(), nullptr);
  OPENSSL_free(der);
  if (ok != 1) return Status::error(StatusCode::kSignatureInternal, withOpenssl("EVP_Digest"));
  std::string text = "SHA256:";
  text += common::toHex(std::span<const std::uint8_t>(digest, digest_length));
  return text;
}

}  // namespace npac::associations
