// KeyStore: the public keys service providers exchanged with the NPAC (table
// provider_keys), used to verify the signature in each bind's access control.
//
// Keys are grouped in key lists: (SPID, list id, key id) names one key. Each has an
// algorithm (RSA with SHA-256, or Ed25519), the public key in PEM, a validity window
// [not_before, not_after) and a state: active, expired (past not_after, set by
// expireDue()) or revoked (by an operator). A key expires after the key_lifetime tunable
// (default one year, the NPAC IIS key-list rule; tunable key_lifetime).
//
// Replay protection: each key remembers the last bind sequence number accepted with it;
// acceptSequence() takes a new one only if it is larger, atomically (one UPDATE), so two
// binds racing with the same number cannot both pass.
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/vocabulary.h"
#include "db/clock.h"
#include "db/status.h"

namespace npac::db {

class Database;

enum class KeyAlgorithm { kRsaSha256, kEd25519 };
const char* toString(KeyAlgorithm algorithm);  // "rsa-sha256", "ed25519"
std::optional<KeyAlgorithm> parseKeyAlgorithm(std::string_view text);

// The column state holds the one spelling of common/vocabulary.h.
using common::KeyState;
using common::parseKeyState;
using common::toString;

struct ProviderKey {
  std::string spid;
  std::int64_t list_id = 0;
  std::int64_t key_id = 0;
  KeyAlgorithm algorithm = KeyAlgorithm::kRsaSha256;
  std::string public_key_pem;  // "-----BEGIN PUBLIC KEY-----..."
  TimeMs not_before_at = 0;
  TimeMs not_after_at = 0;
  KeyState state = KeyState::kActive;
  std::optional<std::int64_t> last_sequence;  // last bind sequence number accepted

  // Usable to verify a bind made at `at`.
  bool isUsableAt(TimeMs at) const {
    return state == KeyState::kActive && at >= not_before_at && at < not_after_at;
  }
  friend bool operator==(const ProviderKey&, const ProviderKey&) = default;
};

class KeyStore {
 public:
  explicit KeyStore(Database& db) : db_(db) {}

  // kInvalidArgument for an empty window or a value that is not PEM; kConstraint for an
  // unknown provider or a duplicate (SPID, list, key).
  Status add(const ProviderKey& key);
  Result<ProviderKey> get(std::string_view spid, std::int64_t list_id, std::int64_t key_id);
  Result<std::vector<ProviderKey>> listForProvider(std::string_view spid);  // by list, key
  Status setState(std::string_view spid, std::int64_t list_id, std::int64_t key_id, KeyState state);
  // Marks every active key whose not_after <= now expired; returns how many.
  Result<std::size_t> expireDue(TimeMs now);
  // Records `sequence` if it is above the key's last accepted one; a replay or reordered
  // bind (sequence <= last) is kInvalidArgument; an unknown key kNotFound.
  Status acceptSequence(std::string_view spid, std::int64_t list_id, std::int64_t key_id,
                        std::int64_t sequence);

 private:
  Database& db_;
};

}  // namespace npac::db
