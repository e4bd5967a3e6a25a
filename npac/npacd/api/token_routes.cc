// The tokens routes (operator only): create a bearer token — its secret is in this one
// answer and nowhere else —, list tokens (never a secret), revoke one. Each change and its
// audit entry commit in one transaction; the audit entry never holds the secret.
#include "db/audit_store.h"
#include "db/token_store.h"
#include "npac/npacd/api/audited.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

json tokenJson(const db::ApiToken& token) {
  return json{{"name", token.name},
              {"role", db::toString(token.role)},
              {"created_at", formatTime(token.created_at)},
              {"created_by", token.created_by},
              {"revoked_at", token.revoked_at ? json(formatTime(*token.revoked_at)) : json(nullptr)}};
}

ApiResponse invalidToken(const std::string& message) {
  return errorResponse(ApiStatus::kBadRequest, "invalid_token_request", message);
}

}  // namespace

ApiResponse createToken(ApiContext& api, ApiRequest& r) {
  if (!r.body.contains("name") || !r.body["name"].is_string()) {
    return invalidToken("body must be {\"name\": \"...\", \"role\": \"operator|application|reader\"}");
  }
  const std::string name = r.body["name"].get<std::string>();
  if (!db::isValidTokenName(name)) {
    // std::string("'"): GCC 12's -Wrestrict misreads "'" + std::string&& here (GCC bug 105329).
    return invalidToken(std::string("'") + printableAscii(name) + "' is not a token name: 1 to " +
                        std::to_string(db::kMaxTokenNameLength) + " visible ASCII characters, no spaces");
  }
  std::optional<db::TokenRole> role;
  if (r.body.contains("role") && r.body["role"].is_string()) role = db::parseTokenRole(r.body["role"].get<std::string>());
  if (!role) return invalidToken("role must be \"operator\", \"application\" or \"reader\"");

  db::TokenStore tokens(api.db);
  const db::TimeMs now = api.clock();
  std::optional<db::IssuedToken> issued;
  db::Status status = audited(
      api.db,
      {0, now, r.actor(), "token.create", "token " + name, std::nullopt,
       json{{"name", name}, {"role", db::toString(*role)}}.dump()},
      [&]() -> db::Status {
        db::Result<db::IssuedToken> created = tokens.create(name, *role, r.actor(), now);
        if (!created) return created.status();
        issued = std::move(created).value();
        return db::Status::ok();
      });
  if (status.code() == db::Status::Code::kConstraint) {
    return errorResponse(ApiStatus::kConflict, "token_exists",
                         "a token named '" + name + "' exists or existed (names are never reused)");
  }
  if (!status) return statusResponse(status);
  json body = tokenJson(issued->token);
  body["token"] = issued->secret;  // shown once: npacd keeps only its SHA-256
  return jsonResponse(ApiStatus::kCreated, body);
}

ApiResponse listTokens(ApiContext& api, ApiRequest&) {
  db::TokenStore tokens(api.db);
  db::Result<std::vector<db::ApiToken>> listed = tokens.list();
  if (!listed) return statusResponse(listed.status());
  json out = json::array();
  for (const db::ApiToken& token : *listed) out.push_back(tokenJson(token));
  return jsonResponse(ApiStatus::kOk, json{{"tokens", out}});
}

ApiResponse revokeToken(ApiContext& api, ApiRequest& r, const std::string& name) {
  db::TokenStore tokens(api.db);
  const db::TimeMs now = api.clock();
  std::optional<db::ApiToken> revoked;
  db::Status status = audited(api.db, {0, now, r.actor(), "token.revoke", "token " + name, "active", "revoked"},
                              [&]() -> db::Status {
                                db::Result<db::ApiToken> done = tokens.revoke(name, now);
                                if (!done) return done.status();
                                revoked = std::move(done).value();
                                return db::Status::ok();
                              });
  if (status.isNotFound()) {
    return errorResponse(ApiStatus::kNotFound, "token_not_found", "no token named '" + printableAscii(name) + "'");
  }
  if (status.code() == db::Status::Code::kConstraint) {
    return errorResponse(ApiStatus::kConflict, "token_revoked", "token '" + name + "' is revoked already");
  }
  if (!status) return statusResponse(status);
  return jsonResponse(ApiStatus::kOk, tokenJson(*revoked));
}

}  // namespace npac::npacd
