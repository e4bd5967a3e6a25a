// ApiRequest and the response helpers shared by the admin API's route files
// (admin_api*.cc): the parsed target (path segments, query), the JSON body, the actor,
// and the mapping of db / tunables errors to HTTP statuses and JSON error codes.
//
// Threading: used on the API thread only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "db/status.h"
#include "db/token_store.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/http_server.h"
#include "tunables/status.h"

namespace npac::npacd {

namespace http = boost::beast::http;

struct ApiRequest {
  http::verb method = http::verb::get;
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

// Parses `request` into `out`: method, target (path, query), X-Npac-Actor and the JSON
// body, each string checked to be UTF-8. nullopt when the request is usable; otherwise the
// reason for a 400 (bad_target, bad_utf8 naming the part, bad_json). Pure: no I/O, no
// state, so the admin API fuzz target drives it directly.
std::optional<ApiError> parseApiRequest(const HttpRequest& request, ApiRequest* out);

// value.dump() that cannot throw: bytes that are not UTF-8 become U+FFFD.
std::string dumpJson(const nlohmann::json& value);

HttpResponse jsonResponse(http::status status, const nlohmann::json& body);
HttpResponse errorResponse(http::status status, const std::string& code, const std::string& message);
// db::Status → 404 not_found, 400 invalid_argument, 409 conflict, 503 overloaded (busy,
// overloaded) / shutting_down / database_unavailable (PostgreSQL unreachable), 500 storage
// otherwise. The message is the Status's full text, after "<context>: " when one is given.
// Every route and the token check answer a database failure through this one mapping.
HttpResponse dbErrorResponse(const db::Status& status, const std::string& context = {});
// tunables::Status → 404 unknown_tunable, 400 wrong_type / out_of_range / wrong_scope /
// unknown_enum_value / invalid_provider / inconsistent / no_actor, 500 storage.
HttpResponse tunableErrorResponse(const tunables::Status& status);
// 400 actor_required: "<what> changes the configuration: it needs ... a token" (a change
// reached without an admitted token: a route table mistake, never a caller's).
HttpResponse actorRequired(const std::string& what);
// 503 core_unavailable, "retry later": a route the association core answers (core_service.h)
// reached while no core is attached (npacd starting, stopping or running without it).
HttpResponse coreUnavailable();

}  // namespace npac::npacd
