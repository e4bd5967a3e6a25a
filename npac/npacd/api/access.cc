#include "npac/npacd/api/access.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "db/audit_store.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/http_adapter.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {
namespace {

constexpr db::TimeMs kAuditWindowMs = 60'000;
constexpr const char* kHowToAuthenticate =
    "send 'Authorization: Bearer <token>' (npacd writes its first operator token to <db>.token; "
    "docs/API.md \"Authentication\")";

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string hexByte(unsigned char c) {
  static constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[c >> 4] + kDigits[c & 0xf];
}

RouteAccess accessOf(db::TokenRole role) {
  switch (role) {
    case db::TokenRole::kReader: return RouteAccess::kReader;
    case db::TokenRole::kApplication: return RouteAccess::kApplication;
    case db::TokenRole::kOperator: return RouteAccess::kOperator;
  }
  return RouteAccess::kReader;
}

}  // namespace

const char* toString(RouteAccess access) {
  switch (access) {
    case RouteAccess::kPublic: return "public";
    case RouteAccess::kReader: return "reader";
    case RouteAccess::kApplication: return "application";
    case RouteAccess::kOperator: return "operator";
  }
  return "operator";
}

BearerCredentials parseBearerAuthorization(std::optional<std::string_view> header) {
  BearerCredentials out;
  if (!header) {
    out.error = std::string("no Authorization header: ") + kHowToAuthenticate;
    return out;
  }
  std::string_view value = *header;
  if (value.size() > kMaxAuthorizationBytes) {
    out.error = "the Authorization header is " + std::to_string(value.size()) + " bytes, more than " +
                std::to_string(kMaxAuthorizationBytes) + ": an npacd token is " +
                std::to_string(db::kTokenLength) + " characters";
    return out;
  }
  // RFC 7230 §3.2.6 lets a field value carry obs-text; a token never does, and echoing
  // such bytes back would not be ASCII. Tabs are whitespace there, so they pass.
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if ((c < 0x20 && c != '\t') || c > 0x7e) {
      out.error = "the Authorization header holds " + hexByte(c) + " at offset " + std::to_string(i) +
                  ", which is not printable ASCII: " + kHowToAuthenticate;
      return out;
    }
  }
  auto isSpace = [](char c) { return c == ' ' || c == '\t'; };
  while (!value.empty() && isSpace(value.front())) value.remove_prefix(1);
  while (!value.empty() && isSpace(value.back())) value.remove_suffix(1);
  if (value.empty()) {
    out.error = std::string("the Authorization header is empty: ") + kHowToAuthenticate;
    return out;
  }
  std::size_t space = 0;
  while (space < value.size() && !isSpace(value[space])) ++space;
  const std::string_view scheme = value.substr(0, space);
  if (space == value.size()) {
    out.error = equalsIgnoringCase(scheme, "Bearer")
                    ? std::string("the Authorization header names the Bearer scheme but no token: ") +
                          kHowToAuthenticate
                    : std::string("the Authorization header has no scheme (it is one word): ") + kHowToAuthenticate;
    return out;
  }
  if (!equalsIgnoringCase(scheme, "Bearer")) {
    std::string shown(scheme.substr(0, 32));
    out.error = "the Authorization scheme '" + shown + "' is not accepted: npacd takes only 'Bearer <token>' "
                "(RFC 6750 section 2.1)";
    return out;
  }
  std::string_view token = value.substr(space);
  while (!token.empty() && isSpace(token.front())) token.remove_prefix(1);
  for (char c : token) {
    if (isSpace(c)) {
      out.error = "the bearer token holds a space: a token is one word (\"npac_\" and 64 hex digits)";
      return out;
    }
  }
  out.token = std::string(token);
  return out;
}

AccessControl::Decision AccessControl::admit(const HttpRequest& request, RouteAccess need,
                                             const std::string& route) {
  Decision decision;
  if (need == RouteAccess::kPublic) return decision;
  std::optional<std::string_view> header;
  if (auto it = request.find(boost::beast::http::field::authorization); it != request.end()) {
    header = std::string_view(it->value().data(), it->value().size());
  }
  BearerCredentials credentials = parseBearerAuthorization(header);
  if (!credentials.ok()) {
    decision.refusal = refuseUnauthenticated(route, "anonymous", credentials.error, header.has_value());
    return decision;
  }
  db::TokenStore tokens(db_);
  db::Result<db::ApiToken> token = tokens.verify(credentials.token);
  if (!token) {
    const db::Status& status = token.status();
    if (status.code() == db::Status::Code::kInvalidArgument) {
      decision.refusal = refuseUnauthenticated(route, "anonymous", "the bearer token is " + status.message(), true);
    } else if (status.isNotFound()) {
      decision.refusal = refuseUnauthenticated(
          route, "anonymous", "unknown token: npacd has issued no token with this secret", true);
    } else {
      // The database cannot say who this is: not the caller's fault, and not a refusal.
      // Answered as every route answers that failure (503 database_unavailable while
      // PostgreSQL is unreachable), so a client retries on one code, not two.
      decision.refusal = toHttpResponse(statusResponse(status, "cannot check the token"));
    }
    return decision;
  }
  if (token->revoked_at) {
    decision.refusal = refuseUnauthenticated(
        route, token->name, "token '" + token->name + "' was revoked at " + formatTime(*token->revoked_at), true);
    return decision;
  }
  if (accessOf(token->role) < need) {
    decision.refusal = refuseForbidden(route, *token, need);
    return decision;
  }
  decision.actor = token->name;
  decision.role = token->role;
  return decision;
}

HttpResponse AccessControl::refuseUnauthenticated(const std::string& route, const std::string& actor,
                                                  const std::string& why, bool token_presented) {
  unauthenticated_.fetch_add(1, std::memory_order_relaxed);
  audit(actor, route, 401, why);
  HttpResponse response =
      jsonErrorResponse(boost::beast::http::status::unauthorized, "unauthenticated", route + ": " + why);
  // RFC 6750 §3: no error attribute when the request carried no credentials at all.
  response.set(boost::beast::http::field::www_authenticate,
               token_presented ? "Bearer realm=\"npacd\", error=\"invalid_token\"" : "Bearer realm=\"npacd\"");
  return response;
}

HttpResponse AccessControl::refuseForbidden(const std::string& route, const db::ApiToken& token, RouteAccess need) {
  forbidden_.fetch_add(1, std::memory_order_relaxed);
  const std::string why = route + " needs the " + toString(need) + " role; token '" + token.name + "' has the " +
                          db::toString(token.role) + " role";
  audit(token.name, route, 403, why);
  return jsonErrorResponse(boost::beast::http::status::forbidden, "forbidden", why);
}

void AccessControl::audit(const std::string& actor, const std::string& route, int status, const std::string& why) {
  const db::TimeMs now = clock_();
  if (now - audit_window_start_ >= kAuditWindowMs || now < audit_window_start_) {
    audit_window_start_ = now;
    audited_in_window_ = 0;
  }
  if (audited_in_window_ >= kAuditedRefusalsPerMinute) {
    ++unaudited_;
    return;
  }
  ++audited_in_window_;
  nlohmann::json value{{"status", status}, {"reason", why}};
  if (unaudited_ > 0) value["unaudited_before"] = unaudited_;
  db::AuditStore store(db_);
  db::Result<std::int64_t> appended =
      store.append(db::AuditEntry{0, now, actor, "api.refused", route, std::nullopt, dumpJson(value)});
  if (!appended) {
    // The refusal stands; only its record is lost, and the counters still have it.
    spdlog::warn("admin API: cannot audit a refused request ({}): {}", route, appended.status().toString());
    ++unaudited_;
    return;
  }
  unaudited_ = 0;
}

}  // namespace npac::npacd
