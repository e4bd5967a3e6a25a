// AccessControl: who may use which admin API route. Every request but the public probes
// (GET /health, GET /ready) presents "Authorization: Bearer <token>" (RFC 6750 §2.1); the
// token is looked up in the TokenStore (db/token_store.h) on every request — no cache, so
// a revocation is effective from the next request on — and its role is compared with the
// role the route table declares (AdminApi::routes()): operator ⊇ application ⊇ reader.
//
//   401 unauthenticated  no, malformed, unknown or revoked token (WWW-Authenticate: Bearer,
//                        RFC 6750 §3); the message says which of these it was
//   403 forbidden        a valid token whose role is below the route's; the message names
//                        both roles
//
// Every refusal is counted (counters(), for npacd_api_refusals_total) and written to the
// audit log as "api.refused" with the token's name as actor ("anonymous" without a valid
// token). A flood of refusals must not fill the disk: at most kAuditedRefusalsPerMinute
// rows a clock minute; the refusals past that are counted and the next row written says
// how many went unaudited ("unaudited_before"). The counters count every one.
//
// Threading: admit() runs on the API thread (it uses the API's Database). counters() is
// safe from any thread (atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "db/clock.h"
#include "db/database.h"
#include "db/token_store.h"
#include "npac/npacd/api/http_message.h"

namespace npac::npacd {

// What a route asks of its caller: nothing (the probes), or a token of at least a role.
enum class RouteAccess { kPublic, kReader, kApplication, kOperator };
const char* toString(RouteAccess access);  // "public", "reader", "application", "operator"

struct AccessCounters {
  std::uint64_t unauthenticated = 0;  // 401s
  std::uint64_t forbidden = 0;        // 403s
};

// The longest Authorization header looked at: an npacd token is kTokenLength (69)
// characters; anything much longer is refused without a lookup.
inline constexpr std::size_t kMaxAuthorizationBytes = 1024;
inline constexpr int kAuditedRefusalsPerMinute = 30;

// The token of an Authorization header value, or why there is none (a sentence for the
// 401 answer). `header` nullopt: no Authorization header. The scheme is matched without
// regard to case (RFC 7235 §2.1). Pure: no I/O, so the fuzz target drives it.
struct BearerCredentials {
  std::string token;
  std::string error;  // empty when `token` was found
  bool ok() const { return error.empty(); }
};
BearerCredentials parseBearerAuthorization(std::optional<std::string_view> header);

class AccessControl {
 public:
  AccessControl(db::Database& db, db::Clock clock) : db_(db), clock_(std::move(clock)) {}
  AccessControl(const AccessControl&) = delete;
  AccessControl& operator=(const AccessControl&) = delete;

  struct Decision {
    std::optional<HttpResponse> refusal;  // set: answer it and do nothing else
    std::string actor;                    // the token's name ("" for a public route)
    std::optional<db::TokenRole> role;    // the token's role (nullopt for a public route)
  };
  // Whether `request` may use a route needing `need`; `route` ("GET /v1/tokens", printable)
  // names it in the answer and the audit entry.
  Decision admit(const HttpRequest& request, RouteAccess need, const std::string& route);

  AccessCounters counters() const {
    return AccessCounters{unauthenticated_.load(std::memory_order_relaxed),
                          forbidden_.load(std::memory_order_relaxed)};
  }

 private:
  HttpResponse refuseUnauthenticated(const std::string& route, const std::string& actor, const std::string& why,
                                     bool token_presented);
  HttpResponse refuseForbidden(const std::string& route, const db::ApiToken& token, RouteAccess need);
  void audit(const std::string& actor, const std::string& route, int status, const std::string& why);

  db::Database& db_;
  db::Clock clock_;
  std::atomic<std::uint64_t> unauthenticated_{0};
  std::atomic<std::uint64_t> forbidden_{0};
  // The audit rate limit (API thread only).
  db::TimeMs audit_window_start_ = 0;
  int audited_in_window_ = 0;
  std::uint64_t unaudited_ = 0;
};

}  // namespace npac::npacd
