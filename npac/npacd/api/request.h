// ApiRequest and the answers shared by the admin API's route files (*_routes.cc): the
// parsed request (method, path segments, query, JSON body, the admitted token) and the
// responses every route builds the same way — a JSON body, a JSON error, and the mapping
// of db / tunables errors to statuses and JSON error codes. No HTTP library: the request
// is parsed from the server's message, and the response turned into one, in one place
// (http_adapter.h).
//
// Threading: used on the API thread only (the pure functions anywhere).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "db/token_store.h"
#include "npac/npacd/api/api_response.h"

namespace npac::npacd {

// The request methods the route table names; any other is kOther (405 on a known path).
enum class ApiMethod { kGet, kPost, kPut, kDelete, kOther };
const char* toString(ApiMethod method);  // "GET", "POST", "PUT", "DELETE", "OTHER"

struct ApiRequest {
  ApiMethod method = ApiMethod::kGet;
  std::vector<std::string> path;              // "/v1/providers/0001" → v1, providers, 0001
  std::map<std::string, std::string> query;   // percent-decoded
  nlohmann::json body;                        // object ({} when the request had no body)
  std::string header_actor;                   // X-Npac-Actor (checked, not used: see actor())
  std::string token_name;                     // the caller's token (AccessControl), "" if public
  std::optional<db::TokenRole> token_role;    // its role, nullopt if public
  std::string target;                         // the request target as sent ("/console/?x")
  bool pdu_batch = false;                     // Content-Type is the binary PDU batch (pdu_batch.h)
  std::string raw_body;                       // its octets as sent (only when pdu_batch)

  // The actor of a change: the name of the token the request was admitted with. A body
  // "actor" or an X-Npac-Actor header is ignored, so the audit log names who holds the
  // token, not what a caller typed (docs/API.md "Authentication").
  std::string actor() const;
  std::optional<std::string> queryValue(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
};

// Splits "/a/b%20c?x=1&y" into segments and query; false for a target that is not a path.
bool parseTarget(const std::string& target, std::vector<std::string>* path,
                 std::map<std::string, std::string>* query);

// value.dump() that cannot throw: bytes that are not UTF-8 become U+FFFD.
std::string dumpJson(const nlohmann::json& value);

// `body` as application/json, ended by a newline.
ApiResponse jsonResponse(ApiStatus status, const nlohmann::json& body);
// {"error":{"code":..,"message":..}}; the message loses a leading repeat of its code's
// words ("unknown tunable: ..." under unknown_tunable).
ApiResponse errorResponse(ApiStatus status, const std::string& code, const std::string& message);
// The one mapping of a Status (common/status.h) to an HTTP answer; every route and the
// token check answer a failure through it.
// Storage codes → 404 not_found, 400 invalid_argument, 409 conflict, 503 overloaded
// (busy, overloaded) / shutting_down / database_unavailable (PostgreSQL unreachable),
// 500 storage otherwise; the message is the Status's full text, after "<context>: " when
// one is given.
// Tunable codes → 404 unknown_tunable, 400 wrong_type / out_of_range / wrong_scope /
// unknown_enum_value / invalid_provider / inconsistent / actor_required, 409 reentrant,
// 500 storage; the message is the registry's own.
// Request codes (a body or target the client got wrong, api/json.h) → 400 under the code's
// own name (invalid_message, bad_json, ...), but a broadcast's 404 provider_not_found,
// 409 function_not_allowed / no_recipients and 413 too_many_recipients; the message is the
// Status's, after "<context>: " when one is given.
ApiResponse statusResponse(const Status& status, const std::string& context = {});
// 400 actor_required: "<what> changes the configuration: it needs ... a token" (a change
// reached without an admitted token: a route table mistake, never a caller's).
ApiResponse actorRequired(const std::string& what);
// 503 core_unavailable, "retry later": a route the association core answers (core_service.h)
// reached while no core is attached (npacd starting, stopping or running without it).
ApiResponse coreUnavailable();

}  // namespace npac::npacd
