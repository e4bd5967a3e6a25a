// The provider's bind: its private key, the signed LnpAccessControl and the AARQ that
// carries it (docs/npac-bind.asn1, docs/PROTOCOL.md "The NPAC bind profile").
//
// ProviderKey reads a PKCS#8 PEM private key and finds its algorithm by trying Ed25519,
// then RSA-SHA256 (associations/signature.h); the NPAC's key list declares the same
// algorithm for the public half. buildBind() fills the access control, signs
// cmip::signedContent() with that key and wraps it in CMIPUserInfo.accessControl of an
// AARQ for the systems-management context 2.9.0.0.2.
//
// Sequence numbers (LnpAccessControl [6], 0..2^32-1) must grow across runs for one key,
// or the NPAC refuses the bind as a replay. The default base is the number of tenths of
// a second since kSequenceEpochUnix; association i of a run uses base + i, and the run
// does not end before the clock has passed its last number (waitPastSequence), so the
// next run on this machine starts higher. The range lasts until 2038.
//
// Mutual authentication: the NPAC answers an accepted bind with its own signed
// LnpAccessControl (systemType npac) in the AARE. NpacKeyRing holds the NPAC public keys
// the provider installed (--npac-key: files of one or more PEM public keys, Ed25519 or
// RSA); verifyNpacAnswer() accepts the AARE only if that access control is present, says
// npac, and verifies with one of them.
//
// Threading: plain values and pure functions (OpenSSL signing is re-entrant).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "associations/signature.h"
#include "cmip/acse.h"
#include "cmip/npac_bind.h"

namespace npac::soasim {

// 2025-01-01T00:00:00Z: the origin of time-based sequence numbers.
inline constexpr int64_t kSequenceEpochUnix = 1735689600;
inline constexpr int64_t kSequenceTicksPerSecond = 10;
inline constexpr uint64_t kMaxSequenceNumber = 0xFFFFFFFFull;  // INTEGER (0..4294967295)

// Presentation context id npacd's peers use for CMIP (docs/PROTOCOL.md: "npacd proposes id 3").
inline constexpr int64_t kCmipPresentationContext = 3;

struct ProviderKey {
  associations::SignatureSigner signer;
  associations::SignatureAlgorithm algorithm;
};

// Reads and parses the key; refused with kUnusableKeyFile, whose message is a sentence
// naming the file and the reason.
Result<ProviderKey> loadProviderKey(const std::string& path);

struct BindParameters {
  std::string spid;
  cmip::SystemType system_type = cmip::SystemType::kSoa;
  std::string user_id;
  int64_t key_list = 0;
  int64_t key_id = 0;
  cmip::AssociationFunctionMask functions;
  bool recovery_mode = false;
  uint64_t sequence_number = 0;
  cmip::GeneralizedTime departure_time;  // whole seconds, UTC
};

// The first sequence number for a run started at `now` (Unix milliseconds).
uint64_t timeBasedSequence(int64_t now_millis);
// Unix milliseconds at which timeBasedSequence() exceeds `last_used`.
int64_t millisWhenSequencePassed(uint64_t last_used);

// The signed access control, validated (kUnsignedBind, the message names the field).
Result<cmip::LnpAccessControl> signedAccessControl(const BindParameters& p, const ProviderKey& key);
// The AARQ carrying `ac` in CMIPUserInfo (protocol version 2) on the CMIP context.
cmip::Aarq makeAarq(const cmip::LnpAccessControl& ac);

struct NpacPublicKey {
  associations::SignatureVerifier verifier;
  std::string file;         // where it was read, for messages
  std::string fingerprint;  // associations::publicKeyFingerprint
};
using NpacKeyRing = std::vector<NpacPublicKey>;

// Every "-----BEGIN PUBLIC KEY-----" block of every file, Ed25519 or RSA (>= 2048 bits).
// kUnusableKeyFile names the file and why (unreadable, no PEM public key in it, a block that is
// not a usable key).
Result<NpacKeyRing> loadNpacKeys(const std::vector<std::string>& paths);

// The NPAC's access control of an accepted AARE, verified: kUnverifiedBind says what was
// missing or wrong (no access control, does not decode, systemType not npac, signature
// verifies with none of the installed keys).
Result<cmip::LnpAccessControl> verifyNpacAnswer(const cmip::Aare& aare, const NpacKeyRing& keys);

}  // namespace npac::soasim
