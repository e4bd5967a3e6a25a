// NpacKeyStore: the NPAC's own signing keys (table npac_keys), with which npacd signs the
// LnpAccessControl of every accepting AARE so a provider can authenticate the NPAC
// (docs/PROTOCOL.md "The NPAC's answer", docs/OPERATIONS.md "NPAC keys and their
// rotation").
//
// Keys are grouped in key lists like a provider's: (list id, key id) names one key. Each
// has an algorithm (RSA with SHA-256, or Ed25519), both halves in PEM (the private half
// never leaves npacd through the admin API), a validity window [not_before, not_after)
// and a state: active, expired or revoked (by an operator). The key that signs a bind
// response is the newest active key valid at that moment (signingKeyAt()).
//
// Sequence numbers: every signed bind response takes the next number of its key
// (nextSequence(): one UPDATE … RETURNING, so the number is persisted before it is sent
// and never repeats across restarts).
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/clock.h"
#include "db/key_store.h"
#include "db/status.h"

namespace npac::db {

class Database;

struct NpacKey {
  std::int64_t list_id = 0;
  std::int64_t key_id = 0;
  KeyAlgorithm algorithm = KeyAlgorithm::kEd25519;
  std::string public_key_pem;   // "-----BEGIN PUBLIC KEY-----..."
  std::string private_key_pem;  // "-----BEGIN PRIVATE KEY-----..." (PKCS#8)
  TimeMs not_before_at = 0;
  TimeMs not_after_at = 0;
  KeyState state = KeyState::kActive;
  TimeMs created_at = 0;
  std::int64_t last_sequence = 0;  // the last sequence number a bind response carried

  bool isUsableAt(TimeMs at) const {
    return state == KeyState::kActive && at >= not_before_at && at < not_after_at;
  }
  friend bool operator==(const NpacKey&, const NpacKey&) = default;
};

class NpacKeyStore {
 public:
  explicit NpacKeyStore(Database& db) : db_(db) {}

  // kInvalidArgument for an empty window, a list or key id outside 0..2^31-1 (the
  // profile's INTEGER range) or a value that is not PEM; kConstraint for a duplicate.
  Status add(const NpacKey& key);
  Result<NpacKey> get(std::int64_t list_id, std::int64_t key_id);  // kNotFound
  Result<std::vector<NpacKey>> list();                              // by list, key
  // kNotFound for an unknown key.
  Status setState(std::int64_t list_id, std::int64_t key_id, KeyState state);
  // The newest (latest not_before, then latest created, then highest list and key) key
  // usable at `at`; kNotFound when there is none.
  Result<NpacKey> signingKeyAt(TimeMs at);
  // Increments the key's last_sequence and returns the new value; kNotFound for an
  // unknown key, kInvalidArgument once it would pass 4294967295 (INTEGER (0..2^32-1)).
  Result<std::int64_t> nextSequence(std::int64_t list_id, std::int64_t key_id);

 private:
  Database& db_;
};

}  // namespace npac::db
