// What npacd does with its own signing keys (db/npac_key_store.h): generate a key pair and
// store it with its audit entry, make sure a usable key exists at start, and sign the
// NPAC's LnpAccessControl for an accepting AARE with the key that signs now (the newest
// active key valid at that moment; docs/OPERATIONS.md "NPAC keys and their rotation").
//
// Threading: each function uses the Database it is given, on that database's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "associations/bind_facts.h"
#include "associations/parsed_key_cache.h"
#include "associations/signature.h"
#include "cmip/npac_bind.h"
#include "common/status.h"
#include "db/clock.h"
#include "db/database.h"
#include "db/npac_key_store.h"
#include "db/status.h"

namespace npac::npacd {

struct NewNpacKey {
  std::int64_t list_id = 1;
  std::int64_t key_id = 1;
  associations::SignatureAlgorithm algorithm = associations::SignatureAlgorithm::kEd25519;
  db::TimeMs not_before_at = 0;
  db::TimeMs not_after_at = 0;
};

// Generates the pair (OpenSSL), stores it and appends the audit entry "npac-key.add"
// (actor `actor`, the public fields and fingerprint as new value) in one transaction.
// kConstraint for an existing (list, key); kInvalidArgument for a bad window or id;
// kInternal if OpenSSL fails.
db::Result<db::NpacKey> createNpacKey(db::Database& db, const NewNpacKey& request,
                                      const std::string& actor, db::TimeMs now);

// At start: when no NPAC key is usable at `now`, creates one (ed25519, list 1, the first
// free key id from 1, valid for `lifetime_ms`), logs it with its public key's fingerprint
// and audits it as actor "npacd". Returns the key that signs now.
db::Result<db::NpacKey> ensureNpacKey(db::Database& db, db::TimeMs now, std::int64_t lifetime_ms);

// The audit/API summary of a key: every field but the private half, plus the fingerprint
// ("fingerprint", associations::publicKeyFingerprint). The PEM public half only with
// `with_public_pem`.
nlohmann::json npacKeyJson(const db::NpacKey& key, bool with_public_pem = false);

// The NPAC's access control for an accepting AARE: the signing key at `now`, its next
// sequence number (persisted first), departure time `now`, the accepted functions and
// recovery mode, systemId `system_id`. Refused with kUnsignedBind, whose message is a
// sentence for the log and the refusal: no usable key, an unreadable key, a system id the
// profile refuses. With `keys`
// the key's PEM text is parsed once and kept there (parsed_key_cache.h); without, per call.
Result<cmip::LnpAccessControl> signBindResponse(
    db::Database& db, const std::string& system_id, db::TimeMs now,
    associations::FunctionMask functions, bool recovery_mode,
    associations::ParsedKeyCache* keys = nullptr);

}  // namespace npac::npacd
