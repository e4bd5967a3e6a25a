// The npac-keys routes: the NPAC's own signing keys (db/npac_key_store.h). npacd
// generates each pair itself; the API shows and exports only the public half. Each change
// and its audit entry commit in one transaction.
#include "db/audit_store.h"
#include "db/npac_key_store.h"
#include "db/transaction.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/npac_keys.h"
#include "tunables/registry.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

constexpr std::int64_t kMaxNpacKeyNumber = 2147483647;  // listId, keyId INTEGER (0..2^31-1)

ApiResponse invalidKey(const std::string& message) {
  return errorResponse(ApiStatus::kBadRequest, "invalid_key", message);
}

// A path segment naming a list or key id: decimal digits, 0..2147483647.
bool parseNpacId(const std::string& text, std::int64_t* out) {
  if (text.empty() || text.size() > 10) return false;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > kMaxNpacKeyNumber) return false;
  *out = v;
  return true;
}

std::string subject(std::int64_t list_id, std::int64_t key_id) {
  return "npac key " + std::to_string(list_id) + "/" + std::to_string(key_id);
}

}  // namespace

ApiResponse addNpacKey(ApiContext& api, ApiRequest& r) {
  if (!r.body.is_object()) return invalidKey("the body must be a JSON object");
  NewNpacKey request;
  for (const char* field : {"key_list_id", "key_id"}) {
    const json& v = r.body.value(field, json());
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > kMaxNpacKeyNumber) {
      return invalidKey(std::string(field) + " must be an integer 0..2147483647");
    }
    (std::string(field) == "key_id" ? request.key_id : request.list_id) = v.get<std::int64_t>();
  }
  const json& algorithm = r.body.value("algorithm", json("ed25519"));
  auto parsed = algorithm.is_string() ? associations::signatureAlgorithmFromString(algorithm.get<std::string>())
                                      : std::nullopt;
  if (!parsed) return invalidKey("algorithm must be ed25519 (the default) or rsa-sha256");
  request.algorithm = *parsed;
  const db::TimeMs now = api.clock();
  request.not_before_at = now;
  if (r.body.contains("not_before")) {
    std::optional<db::TimeMs> t = parseTime(r.body["not_before"]);
    if (!t) return invalidKey("not_before must be an RFC 3339 UTC time (2026-11-29T15:00:00Z) or epoch ms");
    request.not_before_at = *t;
  }
  request.not_after_at = request.not_before_at + api.registry.get(tunables::kKeyLifetime).count();
  if (r.body.contains("not_after")) {
    std::optional<db::TimeMs> t = parseTime(r.body["not_after"]);
    if (!t) return invalidKey("not_after must be an RFC 3339 UTC time (2026-11-29T15:00:00Z) or epoch ms");
    request.not_after_at = *t;
  }
  if (request.not_after_at <= request.not_before_at) return invalidKey("not_after must be later than not_before");
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("adding an NPAC key");
  db::Result<db::NpacKey> key = createNpacKey(api.db, request, actor, now);
  if (!key.isOk()) {
    if (key.status().code() == db::Status::Code::kConstraint) {
      return errorResponse(ApiStatus::kConflict, "conflict",
                           subject(request.list_id, request.key_id) + " already exists");
    }
    return statusResponse(key.status());
  }
  return jsonResponse(ApiStatus::kCreated, npacKeyJson(key.value(), true));
}

ApiResponse listNpacKeys(ApiContext& api, ApiRequest&) {
  db::Result<std::vector<db::NpacKey>> keys = db::NpacKeyStore(api.db).list();
  if (!keys.isOk()) return statusResponse(keys.status());
  json out = json::array();
  for (const db::NpacKey& key : keys.value()) out.push_back(npacKeyJson(key));
  db::Result<db::NpacKey> signing = db::NpacKeyStore(api.db).signingKeyAt(api.clock());
  json body{{"npac_keys", out}};
  body["signing"] = signing.isOk() ? json{{"key_list_id", signing->list_id}, {"key_id", signing->key_id}} : json(nullptr);
  return jsonResponse(ApiStatus::kOk, body);
}

ApiResponse exportNpacKey(ApiContext& api, ApiRequest&, const std::string& list, const std::string& key) {
  std::int64_t list_id = 0, key_id = 0;
  if (!parseNpacId(list, &list_id) || !parseNpacId(key, &key_id)) {
    return invalidKey("key list id and key id must be integers 0..2147483647");
  }
  db::Result<db::NpacKey> found = db::NpacKeyStore(api.db).get(list_id, key_id);
  if (!found.isOk()) {
    if (found.status().isNotFound()) return errorResponse(ApiStatus::kNotFound, "key_not_found", "no " + subject(list_id, key_id));
    return statusResponse(found.status());
  }
  return jsonResponse(ApiStatus::kOk, npacKeyJson(found.value(), true));
}

ApiResponse revokeNpacKey(ApiContext& api, ApiRequest& r, const std::string& list, const std::string& key) {
  std::int64_t list_id = 0, key_id = 0;
  if (!parseNpacId(list, &list_id) || !parseNpacId(key, &key_id)) {
    return invalidKey("key list id and key id must be integers 0..2147483647");
  }
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("revoking an NPAC key");
  db::NpacKeyStore keys(api.db);
  db::Result<db::NpacKey> before = keys.get(list_id, key_id);
  if (!before.isOk()) {
    if (before.status().isNotFound()) return errorResponse(ApiStatus::kNotFound, "key_not_found", "no " + subject(list_id, key_id));
    return statusResponse(before.status());
  }
  // Associations bound with this key stay up: the NPAC's signature is checked at bind only.
  db::Transaction tx(api.db);
  db::Status status = tx.begin();
  if (status.isOk()) status = keys.setState(list_id, key_id, db::KeyState::kRevoked);
  if (status.isOk()) {
    db::AuditEntry entry{0, api.clock(), actor, "npac-key.revoke", subject(list_id, key_id),
                         db::toString(before->state), db::toString(db::KeyState::kRevoked)};
    db::Result<std::int64_t> id = db::AuditStore(api.db).append(entry);
    status = id.isOk() ? tx.commit() : id.status();
  }
  if (!status.isOk()) return statusResponse(status);
  db::NpacKey after = before.value();
  after.state = db::KeyState::kRevoked;
  return jsonResponse(ApiStatus::kOk, npacKeyJson(after));
}

}  // namespace npac::npacd
