#include "npac/npacd/npac_keys.h"

#include <spdlog/spdlog.h>

#include "associations/cmip_bind.h"
#include "common/utc_time.h"
#include "db/audit_store.h"
#include "db/transaction.h"

namespace npac::npacd {
namespace as = npac::associations;

namespace {

db::KeyAlgorithm toDb(as::SignatureAlgorithm algorithm) {
  return algorithm == as::SignatureAlgorithm::kEd25519 ? db::KeyAlgorithm::kEd25519
                                                       : db::KeyAlgorithm::kRsaSha256;
}

as::SignatureAlgorithm fromDb(db::KeyAlgorithm algorithm) {
  return algorithm == db::KeyAlgorithm::kEd25519 ? as::SignatureAlgorithm::kEd25519
                                                 : as::SignatureAlgorithm::kRsaSha256;
}

// Why the bind response cannot be signed (common/status.h, the association group).
Status unsignedBind(std::string why) { return Status::error(StatusCode::kUnsignedBind, std::move(why)); }

std::string subjectOf(const db::NpacKey& key) {
  return "npac key " + std::to_string(key.list_id) + "/" + std::to_string(key.key_id);
}

}  // namespace

nlohmann::json npacKeyJson(const db::NpacKey& key, bool with_public_pem) {
  nlohmann::json out = {{"key_list_id", key.list_id},
                        {"key_id", key.key_id},
                        {"algorithm", db::toString(key.algorithm)},
                        {"not_before", common::formatUtcMillis(key.not_before_at)},
                        {"not_after", common::formatUtcMillis(key.not_after_at)},
                        {"state", db::toString(key.state)},
                        {"created_at", common::formatUtcMillis(key.created_at)},
                        {"last_sequence", key.last_sequence}};
  auto fingerprint = as::publicKeyFingerprint(key.public_key_pem);
  out["fingerprint"] = fingerprint.isOk() ? fingerprint.value() : "unreadable: " + fingerprint.status().message();
  if (with_public_pem) out["public_key_pem"] = key.public_key_pem;
  return out;
}

db::Result<db::NpacKey> createNpacKey(db::Database& db, const NewNpacKey& request,
                                      const std::string& actor, db::TimeMs now) {
  auto pair = as::generateKeyPair(request.algorithm);
  if (!pair.isOk()) return db::Status::internal("generating the NPAC key pair failed: " + pair.status().message());
  db::NpacKey key;
  key.list_id = request.list_id;
  key.key_id = request.key_id;
  key.algorithm = toDb(request.algorithm);
  key.public_key_pem = pair.value().public_pem;
  key.private_key_pem = pair.value().private_pem;
  key.not_before_at = request.not_before_at;
  key.not_after_at = request.not_after_at;
  key.state = db::KeyState::kActive;
  key.created_at = now;
  db::Transaction tx(db);
  if (db::Status status = tx.begin(); !status.isOk()) return status;
  if (db::Status status = db::NpacKeyStore(db).add(key); !status.isOk()) return status;
  db::AuditEntry entry{0, now, actor, "npac-key.add", subjectOf(key), std::nullopt, npacKeyJson(key).dump()};
  db::Result<std::int64_t> id = db::AuditStore(db).append(entry);
  if (!id.isOk()) return id.status();
  if (db::Status status = tx.commit(); !status.isOk()) return status;
  return key;
}

db::Result<db::NpacKey> ensureNpacKey(db::Database& db, db::TimeMs now, std::int64_t lifetime_ms) {
  db::NpacKeyStore store(db);
  db::Result<db::NpacKey> current = store.signingKeyAt(now);
  if (current.isOk() || !current.status().isNotFound()) return current;
  db::Result<std::vector<db::NpacKey>> all = store.list();
  if (!all.isOk()) return all.status();
  NewNpacKey request;
  for (const db::NpacKey& k : all.value()) {
    if (k.list_id == request.list_id && k.key_id >= request.key_id) request.key_id = k.key_id + 1;
  }
  request.not_before_at = now;
  request.not_after_at = now + lifetime_ms;
  db::Result<db::NpacKey> created = createNpacKey(db, request, "npacd", now);
  if (!created.isOk()) return created;
  auto fingerprint = as::publicKeyFingerprint(created->public_key_pem);
  spdlog::info("no usable NPAC key: created NPAC key {}/{} (ed25519, valid until {}), public key {}; "
               "providers verify bind responses with it (npacctl npac-key export {} {})",
               created->list_id, created->key_id, common::formatUtcMillis(created->not_after_at),
               fingerprint.isOk() ? fingerprint.value() : "(unreadable)",
               created->list_id, created->key_id);
  return created;
}

Result<cmip::LnpAccessControl> signBindResponse(db::Database& db, const std::string& system_id, db::TimeMs now,
                                                as::FunctionMask functions, bool recovery_mode,
                                                as::ParsedKeyCache* keys) {
  db::NpacKeyStore store(db);
  db::Result<db::NpacKey> key = store.signingKeyAt(now);
  if (!key.isOk()) return unsignedBind("no NPAC key to sign the bind response: " + key.status().toString());
  auto signer = keys != nullptr ? keys->signer(fromDb(key->algorithm), key->private_key_pem)
                                : as::SignatureSigner::fromPem(fromDb(key->algorithm), key->private_key_pem);
  if (!signer.isOk()) return unsignedBind(subjectOf(*key) + " is unusable: " + signer.status().toString());
  db::Result<std::int64_t> sequence = store.nextSequence(key->list_id, key->key_id);
  if (!sequence.isOk()) {
    return unsignedBind("no sequence number for " + subjectOf(*key) + ": " + sequence.status().toString());
  }
  as::NpacAccessControlFields fields;
  fields.system_id = system_id;
  fields.key_list_id = key->list_id;
  fields.key_id = key->key_id;
  fields.sequence_number = *sequence;
  fields.departure_time = as::WallTime(std::chrono::milliseconds(now));
  fields.functions = functions;
  fields.recovery_mode = recovery_mode;
  auto signed_ac = as::signedNpacAccessControl(fields, signer.value());
  if (!signed_ac.isOk()) return unsignedBind(signed_ac.status().message());
  return std::move(signed_ac).value();
}

}  // namespace npac::npacd
