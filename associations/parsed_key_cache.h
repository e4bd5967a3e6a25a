// ParsedKeyCache: signature keys parsed from PEM, kept by their exact text.
//
// A bind names its key, whose PEM text the provisioning store returns (KeyRecord), and the
// NPAC signs its answer with its own key read the same way (npac/npacd/npac_keys.h).
// OpenSSL 3 parses a PEM key through its provider decoder chain, which costs several
// times the Ed25519 verify or sign itself: parsed afresh for every bind, the two parses
// were about 70 % of npacd's CPU per bind. The cache keeps each parsed key under its PEM
// text and algorithm, so the same text is parsed once; a rotated, replaced or
// re-provisioned key has a different text and is parsed afresh, and an entry can never
// answer for another key. Key state (revoked, expired, not yet valid) is not cached: the
// caller still reads it from the store for every bind. A text that does not parse is
// refused every time and not kept. Bounded: holding `max_entries` keys, the cache is
// emptied before the next one is added (providers' keys are far fewer than the default).
//
// Threading: one thread (the caller's; not synchronised). The verifiers and signers it
// returns are immutable and may be used from any thread (signature.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "associations/signature.h"

namespace npac::associations {

class ParsedKeyCache {
 public:
  static constexpr std::size_t kDefaultMaxEntries = 16384;

  explicit ParsedKeyCache(std::size_t max_entries = kDefaultMaxEntries) : max_entries_(max_entries) {}
  ParsedKeyCache(const ParsedKeyCache&) = delete;
  ParsedKeyCache& operator=(const ParsedKeyCache&) = delete;

  // SignatureVerifier::fromPem, once per (algorithm, text).
  Result<SignatureVerifier> verifier(SignatureAlgorithm algorithm, std::string_view public_pem);
  // SignatureSigner::fromPem, once per (algorithm, text).
  Result<SignatureSigner> signer(SignatureAlgorithm algorithm, std::string_view private_pem);

  std::size_t size() const { return verifiers_.size() + signers_.size(); }
  // PEM parses done (each miss, and each text that did not parse).
  std::uint64_t parses() const { return parses_; }

 private:
  void makeRoom();

  std::size_t max_entries_;
  std::uint64_t parses_ = 0;
  std::unordered_map<std::string, SignatureVerifier> verifiers_;  // algorithm octet + PEM text
  std::unordered_map<std::string, SignatureSigner> signers_;
};

}  // namespace npac::associations
