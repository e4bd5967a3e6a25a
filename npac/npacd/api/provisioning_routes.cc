// The provisioning routes: providers, their NSAPs and their keys. Each change and its
// audit entry commit in one transaction (db/audit_store.h).
#include <limits>

#include "associations/nsap.h"
#include "associations/signature.h"
#include "db/audit_store.h"
#include "db/key_store.h"
#include "db/nsap_store.h"
#include "db/provider_store.h"
#include "db/transaction.h"
#include "npac/npacd/api/audited.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/core/core_service.h"
#include "tunables/registry.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

std::string stringField(const json& body, const char* name) {
  return body.contains(name) && body[name].is_string() ? body[name].get<std::string>() : "";
}

ApiResponse invalid(const std::string& code, const std::string& message) {
  return errorResponse(ApiStatus::kBadRequest, code, message);
}

// An NSAP from the path or body: 24 hex digits of the RFC 1277 form, or an IPv4 address.
// Refused: the Nsap's code, with a message that quotes the text.
Result<associations::Nsap> nsapFromText(const std::string& text) {
  if (text.find('.') != std::string::npos || text.find(':') != std::string::npos) {
    auto nsap = associations::Nsap::fromAddressString(text);
    if (nsap.isOk()) return nsap;
    return Status::error(nsap.status().code(),
                         "'" + text + "' is not a usable IPv4 address: " + nsap.status().toString());
  }
  auto nsap = associations::Nsap::fromHex(text);
  if (nsap.isOk()) return nsap;
  return Status::error(nsap.status().code(), "'" + text + "' is not an NSAP: " + nsap.status().toString());
}

// Optional unsigned integer field in [min, max].
bool optionalUint(const json& body, const char* name, std::uint32_t min, std::uint32_t max,
                  std::optional<std::uint32_t>* out) {
  if (!body.contains(name) || body[name].is_null()) return true;
  if (!body[name].is_number_integer()) return false;
  std::int64_t v = body[name].get<std::int64_t>();
  if (v < min || v > max) return false;
  *out = static_cast<std::uint32_t>(v);
  return true;
}

bool parseId(const std::string& text, std::int64_t* out) {
  if (text.empty() || text.size() > 10) return false;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > std::numeric_limits<std::uint32_t>::max()) return false;
  *out = v;
  return true;
}

// The algorithm of a provider's key is the key's own (an Ed25519 or an RSA key);
// "algorithm", when given, must agree with it. nullopt and `*error` when the key cannot be
// read or the two disagree.
std::optional<db::KeyAlgorithm> keyAlgorithm(const json& body, const std::string& pem, ApiResponse* error) {
  auto read = associations::publicKeyAlgorithm(pem);
  if (!read.isOk()) {
    *error = invalid("invalid_key", "public_key_pem: " + read.status().toString());
    return std::nullopt;
  }
  const associations::SignatureAlgorithm algorithm = read.value();
  if (body.contains("algorithm") && !body["algorithm"].is_null()) {
    const json& named = body["algorithm"];
    auto parsed = named.is_string() ? associations::signatureAlgorithmFromString(named.get<std::string>())
                                    : std::nullopt;
    if (!parsed) {
      *error = invalid("invalid_key", std::string("algorithm must be ") + associations::kSignatureAlgorithmNames +
                                          ", or left out to read it from the key");
      return std::nullopt;
    }
    if (*parsed != algorithm) {
      *error = invalid("invalid_key", "public_key_pem: " +
                                          std::string(describe(StatusCode::kWrongAlgorithm)) +
                                          ": the key is " + std::string(associations::toString(algorithm)) +
                                          ", but algorithm says " + std::string(associations::toString(*parsed)) +
                                          " (leave algorithm out to read it from the key)");
      return std::nullopt;
    }
  }
  return algorithm == associations::SignatureAlgorithm::kEd25519 ? db::KeyAlgorithm::kEd25519
                                                                 : db::KeyAlgorithm::kRsaSha256;
}

}  // namespace

ApiResponse addProvider(ApiContext& api, ApiRequest& r) {
  db::ServiceProvider provider;
  provider.spid = stringField(r.body, "spid");
  provider.name = stringField(r.body, "name");
  if (!db::isValidSpid(provider.spid)) {
    return invalid("invalid_spid", "spid '" + provider.spid + "' is not a SPID: 4 ASCII letters or digits");
  }
  if (provider.name.empty()) return invalid("invalid_provider", "name is required");
  std::optional<db::SystemType> type = db::parseSystemType(stringField(r.body, "system_type"));
  if (!type) {
    return invalid("invalid_system_type", "system_type '" + stringField(r.body, "system_type") +
                                              "' is not one of " + common::systemTypeNames());
  }
  provider.system_type = *type;
  if (r.body.contains("enabled")) {
    if (!r.body["enabled"].is_boolean()) return invalid("invalid_provider", "enabled must be true or false");
    provider.enabled = r.body["enabled"].get<bool>();
  }
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("adding a provider");
  db::ProviderStore providers(api.db);
  db::Status status = audited(
      api.db, {0, api.clock(), actor, "provider.add", "provider " + provider.spid, std::nullopt, toJson(provider).dump()},
      [&] { return providers.add(provider); });
  if (status.code() == db::Status::Code::kConstraint) {
    return errorResponse(ApiStatus::kConflict, "provider_exists", "provider " + provider.spid + " already exists");
  }
  if (!status.isOk()) return statusResponse(status);
  return jsonResponse(ApiStatus::kCreated, toJson(provider));
}

ApiResponse listProviders(ApiContext& api, ApiRequest&) {
  db::ProviderStore providers(api.db);
  db::Result<std::vector<db::ServiceProvider>> list = providers.list();
  if (!list.isOk()) return statusResponse(list.status());
  json out = json::array();
  for (const db::ServiceProvider& p : list.value()) {
    json item = toJson(p);
    item["srr"] = api.registry.get(tunables::kSrr, p.spid);
    out.push_back(std::move(item));
  }
  return jsonResponse(ApiStatus::kOk, {{"providers", out}});
}

ApiResponse showProvider(ApiContext& api, ApiRequest&, const std::string& spid) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  db::ProviderStore providers(api.db);
  db::Result<db::ServiceProvider> provider = providers.get(spid);
  if (!provider.isOk()) return statusResponse(provider.status());
  json out = toJson(provider.value());
  out["srr"] = api.registry.get(tunables::kSrr, spid);
  db::NsapStore nsaps(api.db);
  auto nsap_list = nsaps.listForProvider(spid);
  if (!nsap_list.isOk()) return statusResponse(nsap_list.status());
  out["nsaps"] = json::array();
  for (const auto& n : nsap_list.value()) out["nsaps"].push_back(toJson(n));
  db::KeyStore keys(api.db);
  auto key_list = keys.listForProvider(spid);
  if (!key_list.isOk()) return statusResponse(key_list.status());
  out["keys"] = json::array();
  for (const auto& k : key_list.value()) {
    json item = toJson(k);
    item.erase("public_key_pem");
    out["keys"].push_back(std::move(item));
  }
  return jsonResponse(ApiStatus::kOk, out);
}

ApiResponse setProviderEnabled(ApiContext& api, ApiRequest& r, const std::string& spid, bool enabled) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired(enabled ? "enabling a provider" : "disabling a provider");
  db::ProviderStore providers(api.db);
  db::Result<db::ServiceProvider> before = providers.get(spid);
  if (!before.isOk()) return statusResponse(before.status());
  db::Status status = audited(
      api.db,
      {0, api.clock(), actor, enabled ? "provider.enable" : "provider.disable", "provider " + spid,
       before->enabled ? "enabled" : "disabled", enabled ? "enabled" : "disabled"},
      [&] { return providers.setEnabled(spid, enabled); });
  if (!status.isOk()) return statusResponse(status);
  db::ServiceProvider after = before.value();
  after.enabled = enabled;
  if (!enabled && api.core != nullptr) {
    // Its live associations end too (gracefully; nothing undelivered is lost).
    api.core->releaseProvider(spid, "provider disabled by " + actor, [](std::size_t) {});
  }
  return jsonResponse(ApiStatus::kOk, toJson(after));
}

ApiResponse addNsap(ApiContext& api, ApiRequest& r, const std::string& spid) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  std::string text = stringField(r.body, "nsap");
  if (text.empty()) text = stringField(r.body, "address");
  if (text.empty()) return invalid("invalid_nsap", "give \"nsap\" (24 hex digits, RFC 1277) or \"address\" (IPv4)");
  Result<associations::Nsap> nsap = nsapFromText(text);
  if (!nsap.isOk()) return invalid("invalid_nsap", nsap.status().message());
  db::ProvisionedNsap row{spid, db::Bytes(nsap->octets().begin(), nsap->octets().end()), {}, {}};
  if (!optionalUint(r.body, "weight", db::kMinNsapWeight, db::kMaxNsapWeight, &row.weight)) {
    return invalid("invalid_nsap", "weight must be an integer 1..99 (EAGLE weighted GTT weights)");
  }
  if (!optionalUint(r.body, "relative_cost", 0, std::numeric_limits<std::int32_t>::max(), &row.relative_cost)) {
    return invalid("invalid_nsap", "relative_cost must be a non-negative integer");
  }
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("adding an NSAP");
  db::NsapStore nsaps(api.db);
  db::Status status = audited(api.db,
                              {0, api.clock(), actor, "nsap.add", "nsap " + spid + "/" + nsap->toHex(),
                               std::nullopt, toJson(row).dump()},
                              [&] { return nsaps.add(row); });
  if (status.code() == db::Status::Code::kConstraint) {
    return errorResponse(ApiStatus::kConflict, "nsap_exists",
                         "NSAP " + nsap->toHex() + " is already provisioned for " + spid);
  }
  if (!status.isOk()) return statusResponse(status);
  return jsonResponse(ApiStatus::kCreated, toJson(row));
}

ApiResponse listNsaps(ApiContext& api, ApiRequest&, const std::string& spid) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  db::NsapStore nsaps(api.db);
  auto list = nsaps.listForProvider(spid);
  if (!list.isOk()) return statusResponse(list.status());
  json out = json::array();
  for (const auto& n : list.value()) out.push_back(toJson(n));
  return jsonResponse(ApiStatus::kOk, {{"nsaps", out}});
}

ApiResponse removeNsap(ApiContext& api, ApiRequest& r, const std::string& spid, const std::string& text) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  Result<associations::Nsap> nsap = nsapFromText(text);
  if (!nsap.isOk()) return invalid("invalid_nsap", nsap.status().message());
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("removing an NSAP");
  db::NsapStore nsaps(api.db);
  db::Status status = audited(
      api.db, {0, api.clock(), actor, "nsap.remove", "nsap " + spid + "/" + nsap->toHex(), nsap->toHex(), std::nullopt},
      [&] { return nsaps.remove(spid, nsap->octets()); });
  if (status.isNotFound()) {
    return errorResponse(ApiStatus::kNotFound, "nsap_not_found",
                         "NSAP " + nsap->toHex() + " is not provisioned for " + spid);
  }
  if (!status.isOk()) return statusResponse(status);
  return jsonResponse(ApiStatus::kOk, {{"removed", nsap->toHex()}});
}

ApiResponse addKey(ApiContext& api, ApiRequest& r, const std::string& spid) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  db::ProviderKey key;
  key.spid = spid;
  for (const char* field : {"key_list_id", "key_id"}) {
    const json& v = r.body.value(field, json());
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 ||
        v.get<std::int64_t>() > std::numeric_limits<std::uint32_t>::max()) {
      return invalid("invalid_key", std::string(field) + " must be an integer 0..4294967295");
    }
    (std::string(field) == "key_id" ? key.key_id : key.list_id) = v.get<std::int64_t>();
  }
  key.public_key_pem = stringField(r.body, "public_key_pem");
  std::optional<db::KeyAlgorithm> algorithm = keyAlgorithm(r.body, key.public_key_pem, &error);
  if (!algorithm) return error;
  key.algorithm = *algorithm;
  const db::TimeMs now = api.clock();
  key.not_before_at = now;
  if (r.body.contains("not_before")) {
    std::optional<db::TimeMs> t = parseTime(r.body["not_before"]);
    if (!t) return invalid("invalid_key", "not_before must be an RFC 3339 UTC time (2026-11-29T15:00:00Z) or epoch ms");
    key.not_before_at = *t;
  }
  key.not_after_at = key.not_before_at + api.registry.get(tunables::kKeyLifetime).count();
  if (r.body.contains("not_after")) {
    std::optional<db::TimeMs> t = parseTime(r.body["not_after"]);
    if (!t) return invalid("invalid_key", "not_after must be an RFC 3339 UTC time (2026-11-29T15:00:00Z) or epoch ms");
    key.not_after_at = *t;
  }
  if (key.not_after_at <= key.not_before_at) return invalid("invalid_key", "not_after must be later than not_before");
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("adding a key");
  std::string subject = "key " + spid + "/" + std::to_string(key.list_id) + "/" + std::to_string(key.key_id);
  json summary = toJson(key);
  summary.erase("public_key_pem");
  db::KeyStore keys(api.db);
  db::Status status = audited(api.db, {0, now, actor, "key.add", subject, std::nullopt, summary.dump()},
                              [&] { return keys.add(key); });
  if (status.code() == db::Status::Code::kConstraint) {
    return errorResponse(ApiStatus::kConflict, "key_exists", subject + " already exists");
  }
  if (!status.isOk()) return statusResponse(status);
  return jsonResponse(ApiStatus::kCreated, summary);
}

ApiResponse listKeys(ApiContext& api, ApiRequest&, const std::string& spid) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  db::KeyStore keys(api.db);
  auto list = keys.listForProvider(spid);
  if (!list.isOk()) return statusResponse(list.status());
  json out = json::array();
  for (const auto& k : list.value()) out.push_back(toJson(k));
  return jsonResponse(ApiStatus::kOk, {{"keys", out}});
}

ApiResponse revokeKey(ApiContext& api, ApiRequest& r, const std::string& spid, const std::string& list,
                      const std::string& key) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return error;
  std::int64_t list_id = 0, key_id = 0;
  if (!parseId(list, &list_id) || !parseId(key, &key_id)) {
    return invalid("invalid_key", "key list id and key id must be integers 0..4294967295");
  }
  std::string actor = r.actor();
  if (actor.empty()) return actorRequired("revoking a key");
  db::KeyStore keys(api.db);
  std::string subject = "key " + spid + "/" + list + "/" + key;
  db::Result<db::ProviderKey> before = keys.get(spid, list_id, key_id);
  if (!before.isOk()) {
    if (before.status().isNotFound()) return errorResponse(ApiStatus::kNotFound, "key_not_found", "no " + subject);
    return statusResponse(before.status());
  }
  db::Status status = audited(api.db, {0, api.clock(), actor, "key.revoke", subject, db::toString(before->state),
                               db::toString(db::KeyState::kRevoked)},
                              [&] { return keys.setState(spid, list_id, key_id, db::KeyState::kRevoked); });
  if (!status.isOk()) return statusResponse(status);
  db::ProviderKey after = before.value();
  after.state = db::KeyState::kRevoked;
  json out = toJson(after);
  out.erase("public_key_pem");
  return jsonResponse(ApiStatus::kOk, out);
}

}  // namespace npac::npacd
