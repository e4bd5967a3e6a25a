#include "associations/parsed_key_cache.h"

namespace npac::associations {
namespace {

std::string cacheKey(SignatureAlgorithm algorithm, std::string_view pem) {
  std::string key(1, static_cast<char>(algorithm));
  key.append(pem);
  return key;
}

}  // namespace

void ParsedKeyCache::makeRoom() {
  if (size() < max_entries_) return;
  verifiers_.clear();
  signers_.clear();
}

Result<SignatureVerifier> ParsedKeyCache::verifier(SignatureAlgorithm algorithm,
                                                   std::string_view public_pem) {
  std::string key = cacheKey(algorithm, public_pem);
  if (auto it = verifiers_.find(key); it != verifiers_.end()) return it->second;
  ++parses_;
  auto parsed = SignatureVerifier::fromPem(algorithm, public_pem);
  if (!parsed.isOk()) return parsed;
  makeRoom();
  verifiers_.emplace(std::move(key), parsed.value());
  return parsed;
}

Result<SignatureSigner> ParsedKeyCache::signer(SignatureAlgorithm algorithm,
                                               std::string_view private_pem) {
  std::string key = cacheKey(algorithm, private_pem);
  if (auto it = signers_.find(key); it != signers_.end()) return it->second;
  ++parses_;
  auto parsed = SignatureSigner::fromPem(algorithm, private_pem);
  if (!parsed.isOk()) return parsed;
  makeRoom();
  signers_.emplace(std::move(key), parsed.value());
  return parsed;
}

}  // namespace npac::associations
