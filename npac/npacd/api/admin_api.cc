#include "npac/npacd/api/admin_api.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "db/provider_store.h"
#include "npac/npacd/api/connection_priority.h"
#include "npac/npacd/api/database_backup.h"
#include "npac/npacd/api/pdu_batch.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percentDecode(std::string_view in, std::string* out, bool plus_is_space) {
  out->clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = hexDigit(in[i + 1]), lo = hexDigit(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (in[i] == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(in[i]);
    }
  }
  return true;
}

}  // namespace

std::string ApiRequest::actor() const { return token_name; }

bool parseTarget(const std::string& target, std::vector<std::string>* path,
                 std::map<std::string, std::string>* query) {
  if (target.empty() || target[0] != '/') return false;
  std::size_t q = target.find('?');
  std::string_view p = std::string_view(target).substr(0, q);
  std::size_t start = 1;
  while (start <= p.size()) {
    std::size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    if (end > start) {
      std::string segment;
      if (!percentDecode(p.substr(start, end - start), &segment, false)) return false;
      path->push_back(std::move(segment));
    }
    start = end + 1;
  }
  if (q == std::string::npos) return true;
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    std::size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    std::size_t eq = pair.find('=');
    std::string key, value;
    if (!percentDecode(pair.substr(0, eq), &key, true)) return false;
    if (eq != std::string_view::npos && !percentDecode(pair.substr(eq + 1), &value, true)) return false;
    if (!key.empty()) (*query)[key] = value;
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return true;
}

std::optional<ApiError> parseApiRequest(const HttpRequest& request, ApiRequest* out) {
  out->method = request.method();
  const std::string target(request.target());
  out->target = target;
  if (!parseTarget(target, &out->path, &out->query)) {
    return ApiError{"bad_target", "request target is not a valid path: " + printableAscii(target)};
  }
  // Every string taken in must be UTF-8 before it can be echoed into an answer or stored
  // (RFC 8259 §8.1): percent-decoding can produce any byte.
  for (std::size_t i = 0; i < out->path.size(); ++i) {
    if (auto at = invalidUtf8At(out->path[i])) {
      return ApiError{"bad_utf8", describeInvalidUtf8("path segment " + std::to_string(i + 1) +
                                                          " (after percent-decoding)", out->path[i], *at)};
    }
  }
  for (const auto& [key, value] : out->query) {
    if (auto at = invalidUtf8At(key)) {
      return ApiError{"bad_utf8", describeInvalidUtf8("a query key (after percent-decoding)", key, *at)};
    }
    if (auto at = invalidUtf8At(value)) {
      return ApiError{"bad_utf8",
                      describeInvalidUtf8("the query value of '" + key + "' (after percent-decoding)", value, *at)};
    }
  }
  auto actor = request.find("X-Npac-Actor");
  if (actor != request.end()) {
    out->header_actor = std::string(actor->value());
    if (auto at = invalidUtf8At(out->header_actor)) {
      return ApiError{"bad_utf8", describeInvalidUtf8("the X-Npac-Actor header", out->header_actor, *at)};
    }
  }
  out->body = json::object();
  // A binary PDU batch (pdu_batch.h) is kept as sent; only its own route reads it.
  auto content_type = request.find(http::field::content_type);
  if (content_type != request.end() && isPduBatchMediaType(std::string_view(content_type->value().data(), content_type->value().size()))) {
    out->pdu_batch = true;
    out->raw_body = request.body();
    return std::nullopt;
  }
  if (!request.body().empty()) {
    if (auto at = invalidUtf8At(request.body())) {
      return ApiError{"bad_utf8", describeInvalidUtf8("the request body", request.body(), *at)};
    }
    out->body = json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
    if (out->body.is_discarded()) return ApiError{"bad_json", "request body is not valid JSON"};
    if (!out->body.is_object()) return ApiError{"bad_json", "request body must be a JSON object"};
  }
  return std::nullopt;
}

std::string dumpJson(const json& value) {
  // A string read back from an older database may hold bytes that are not UTF-8; they
  // are answered as U+FFFD instead of making dump() throw (the input side refuses them).
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse jsonResponse(http::status status, const json& body) {
  HttpResponse response{status, 11};
  response.set(http::field::content_type, "application/json");
  response.body() = dumpJson(body) + "\n";
  response.prepare_payload();
  return response;
}

namespace {

// A message never repeats its code: a status whose text starts with its own kind
// ("unknown tunable: …", "shutting down: …") under the code saying the same
// (unknown_tunable, shutting_down) loses those words, so npacctl's "code: message" reads
// "unknown_tunable: no tunable named …", not "unknown_tunable: unknown tunable: …".
std::string withoutCodeWords(const std::string& code, const std::string& message) {
  std::string words = code;
  std::replace(words.begin(), words.end(), '_', ' ');
  words += ": ";
  if (message.size() <= words.size()) return message;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(message[i])) != words[i]) return message;
  }
  return message.substr(words.size());
}

}  // namespace

HttpResponse errorResponse(http::status status, const std::string& code, const std::string& message) {
  return jsonErrorResponse(status, code, withoutCodeWords(code, message));
}

HttpResponse dbErrorResponse(const db::Status& status, const std::string& context) {
  using Code = db::Status::Code;
  const std::string prefix = context.empty() ? std::string() : context + ": ";
  switch (status.code()) {
    case Code::kNotFound: return errorResponse(http::status::not_found, "not_found", prefix + status.message());
    case Code::kInvalidArgument:
      return errorResponse(http::status::bad_request, "invalid_argument", prefix + status.message());
    case Code::kConstraint: return errorResponse(http::status::conflict, "conflict", prefix + status.message());
    case Code::kBusy:
    case Code::kOverloaded:
      return errorResponse(http::status::service_unavailable, "overloaded", prefix + status.toString());
    case Code::kShutdown:
      return errorResponse(http::status::service_unavailable, "shutting_down", prefix + status.toString());
    case Code::kUnavailable:
      return errorResponse(http::status::service_unavailable, "database_unavailable", prefix + status.toString());
    default: return errorResponse(http::status::internal_server_error, "storage", prefix + status.toString());
  }
}

HttpResponse tunableErrorResponse(const tunables::Status& status) {
  using tunables::ErrorCode;
  // The code names the kind ("wrong_type"); the registry's message says what was wrong.
  const std::string text = status.message().empty() ? status.toString() : status.message();
  switch (status.code()) {
    case ErrorCode::kUnknownName: return errorResponse(http::status::not_found, "unknown_tunable", text);
    case ErrorCode::kWrongType: return errorResponse(http::status::bad_request, "wrong_type", text);
    case ErrorCode::kOutOfRange: return errorResponse(http::status::bad_request, "out_of_range", text);
    case ErrorCode::kWrongScope: return errorResponse(http::status::bad_request, "wrong_scope", text);
    case ErrorCode::kUnknownEnumValue:
      return errorResponse(http::status::bad_request, "unknown_enum_value", text);
    case ErrorCode::kInvalidProvider:
      return errorResponse(http::status::bad_request, "invalid_provider", text);
    case ErrorCode::kInconsistent: return errorResponse(http::status::bad_request, "inconsistent", text);
    case ErrorCode::kNoActor: return errorResponse(http::status::bad_request, "actor_required", text);
    case ErrorCode::kReentrant: return errorResponse(http::status::conflict, "reentrant", text);
    default: return errorResponse(http::status::internal_server_error, "storage", text);
  }
}

HttpResponse actorRequired(const std::string& what) {
  return errorResponse(http::status::bad_request, "actor_required",
                       what + " changes the configuration: it needs a request admitted with a token, "
                              "whose name goes to the audit log");
}

HttpResponse coreUnavailable() {
  return errorResponse(http::status::service_unavailable, "core_unavailable",
                       "the association core is not attached to this API (npacd is starting, "
                       "stopping or runs without it): retry later");
}

AdminApi::AdminApi(boost::asio::io_context& io, db::Database& db, tunables::TunableRegistry& registry,
                   db::Clock clock)
    : io_(io), db_(db), registry_(registry), clock_(clock), access_(db, std::move(clock)) {}

AdminApi::~AdminApi() { stop(); }

db::Result<std::unique_ptr<AdminApi>> AdminApi::start(boost::asio::io_context& io, Options options,
                                                      db::Database& db,
                                                      tunables::TunableRegistry& registry,
                                                      db::Clock clock) {
  std::unique_ptr<AdminApi> api(new AdminApi(io, db, registry, std::move(clock)));
  AdminApi* self = api.get();
  api->event_keepalive_ = options.event_keepalive;
  if (options.http.tls) {
    // A certificate outside its validity starts all the same (a renewal may be on its
    // way), but says so now, in GET /ready and in GET /metrics.
    api->api_certificate_ = certificateValidity(*options.http.tls);
    if (!api->api_certificate_) {
      spdlog::warn("admin API: cannot read the validity dates of the certificate (--api-cert)");
    } else if (std::optional<std::string> problem = certificateValidityProblem(*api->api_certificate_, api->clock_())) {
      spdlog::warn("{}", *problem);
    }
  }
  // The operator reserve (http_server.h) sorts requests by their token's role.
  if (!options.http.classify) options.http.classify = [&db](const HttpRequest& r) { return classifyByToken(db, r); };
  db::Result<std::unique_ptr<HttpServer>> server = HttpServer::start(
      io, options.http,
      [self](HttpRequest&& request, Responder respond) { self->handle(std::move(request), std::move(respond)); });
  if (!server.isOk()) return server.status();
  api->server_ = std::move(server.value());
  return api;
}

// Route table: method + path shape → the role it needs and its handler. Paths are matched
// segment by segment; a "{...}" segment matches any one segment. Every route declares its
// role (docs/API.md "Authentication" has the table; tests/npac/npacd/api/admin_api_access_test.cc
// walks this one). reader: every GET but the inbound poll; application: reader plus
// submitting messages and taking and answering providers' requests; operator: the rest.
// A route takes a JSON body unless it says RouteBody::kPduBatch.
const std::vector<AdminApi::Route>& AdminApi::routeTable() {
  using V = http::verb;
  using A = RouteAccess;
  // Handlers answering at once, and handlers answering through `respond` (maybe later).
#define NPAC_NOW(call) [](AdminApi& a, ApiRequest& r, Responder& respond) { respond(a.call); }
#define NPAC_LATER(call) [](AdminApi& a, ApiRequest& r, Responder& respond) { a.call; }
  static const std::vector<Route> table{
      {V::post, "/v1/providers", A::kOperator, NPAC_NOW(addProvider(r))},
      {V::get, "/v1/providers", A::kReader, NPAC_NOW(listProviders(r))},
      {V::get, "/v1/providers/{spid}", A::kReader, NPAC_NOW(showProvider(r, r.path[2]))},
      {V::post, "/v1/providers/{spid}/disable", A::kOperator, NPAC_NOW(setProviderEnabled(r, r.path[2], false))},
      {V::post, "/v1/providers/{spid}/enable", A::kOperator, NPAC_NOW(setProviderEnabled(r, r.path[2], true))},
      {V::put, "/v1/providers/{spid}/srr", A::kOperator, NPAC_NOW(setSrr(r, r.path[2]))},
      {V::get, "/v1/providers/{spid}/queue", A::kReader, NPAC_LATER(providerQueue(r, r.path[2], respond))},
      {V::get, "/v1/providers/{spid}/egress", A::kReader, NPAC_LATER(providerEgress(r, r.path[2], respond))},
      {V::post, "/v1/providers/{spid}/nsaps", A::kOperator, NPAC_NOW(addNsap(r, r.path[2]))},
      {V::get, "/v1/providers/{spid}/nsaps", A::kReader, NPAC_NOW(listNsaps(r, r.path[2]))},
      {V::delete_, "/v1/providers/{spid}/nsaps/{nsap}", A::kOperator, NPAC_NOW(removeNsap(r, r.path[2], r.path[4]))},
      {V::post, "/v1/providers/{spid}/keys", A::kOperator, NPAC_NOW(addKey(r, r.path[2]))},
      {V::get, "/v1/providers/{spid}/keys", A::kReader, NPAC_NOW(listKeys(r, r.path[2]))},
      {V::post, "/v1/providers/{spid}/keys/{list}/{key}/revoke", A::kOperator,
       NPAC_NOW(revokeKey(r, r.path[2], r.path[4], r.path[5]))},
      {V::post, "/v1/npac-keys", A::kOperator, NPAC_NOW(addNpacKey(r))},
      {V::get, "/v1/npac-keys", A::kReader, NPAC_NOW(listNpacKeys(r))},
      {V::get, "/v1/npac-keys/{list}/{key}/public", A::kReader, NPAC_NOW(exportNpacKey(r, r.path[2], r.path[3]))},
      {V::post, "/v1/npac-keys/{list}/{key}/revoke", A::kOperator, NPAC_NOW(revokeNpacKey(r, r.path[2], r.path[3]))},
      {V::get, "/v1/tunables", A::kReader, NPAC_NOW(listTunables(r))},
      {V::get, "/v1/tunables/{name}", A::kReader, NPAC_NOW(getTunable(r, r.path[2]))},
      {V::put, "/v1/tunables/{name}", A::kOperator, NPAC_NOW(setTunable(r, r.path[2]))},
      {V::delete_, "/v1/tunables/{name}", A::kOperator, NPAC_NOW(clearTunable(r, r.path[2]))},
      {V::post, "/v1/messages", A::kApplication, NPAC_LATER(submitMessages(r, respond))},
      {V::post, "/v1/broadcasts", A::kApplication, NPAC_LATER(submitBroadcast(r, respond))},
      {V::post, "/v1/pdu-batches", A::kApplication, NPAC_LATER(submitPduBatch(r, respond)), RouteBody::kPduBatch},
      {V::get, "/v1/messages/{id}", A::kReader, NPAC_LATER(messageStatus(r, r.path[2], respond))},
      // Taking providers' requests is the application's job, not a reader's.
      {V::get, "/v1/inbound", A::kApplication, NPAC_LATER(pollInbound(r, respond))},
      {V::post, "/v1/inbound/{id}/response", A::kApplication, NPAC_LATER(respondInbound(r, r.path[2], respond))},
      {V::get, "/v1/associations", A::kReader, NPAC_LATER(listAssociations(r, respond))},
      {V::post, "/v1/associations/{id}/abort", A::kOperator, NPAC_LATER(abortAssociation(r, r.path[2], respond))},
      {V::get, "/v1/association-log", A::kReader, NPAC_NOW(associationLog(r)), RouteBody::kJson, ReadCost::kLimitRows},
      {V::get, "/v1/audit-log", A::kReader, NPAC_NOW(auditLog(r)), RouteBody::kJson, ReadCost::kLimitRows},
      {V::post, "/v1/throttle-groups", A::kOperator, NPAC_NOW(addThrottleGroup(r))},
      {V::get, "/v1/throttle-groups", A::kReader, NPAC_NOW(listThrottleGroups(r))},
      {V::get, "/v1/throttle-groups/{name}", A::kReader, NPAC_NOW(showThrottleGroup(r, r.path[2]))},
      {V::put, "/v1/throttle-groups/{name}", A::kOperator, NPAC_NOW(setThrottleGroup(r, r.path[2]))},
      {V::delete_, "/v1/throttle-groups/{name}", A::kOperator, NPAC_NOW(removeThrottleGroup(r, r.path[2]))},
      {V::get, "/v1/log-level", A::kReader, NPAC_NOW(getLogLevel(r))},
      {V::put, "/v1/log-level", A::kOperator, NPAC_NOW(setLogLevel(r))},
      {V::post, "/v1/tokens", A::kOperator, NPAC_NOW(createToken(r))},
      {V::get, "/v1/tokens", A::kOperator, NPAC_NOW(listTokens(r))},
      {V::post, "/v1/tokens/{name}/revoke", A::kOperator, NPAC_NOW(revokeToken(r, r.path[2]))},
      // The whole database, NPAC private keys and token digests included: operators only.
      {V::post, "/v1/backup", A::kOperator, NPAC_LATER(backupDatabase(r, respond))},
      // The console (console_routes.cc, event_routes.cc): who the caller is, the page's
      // files (public: they hold no data) and the live event stream.
      {V::get, "/v1/whoami", A::kReader, NPAC_NOW(whoami(r))},
      {V::get, "/v1/events", A::kReader, NPAC_LATER(events(r, respond))},
      {V::get, "/console", A::kPublic, NPAC_NOW(consoleIndex(r))},
      {V::get, "/console/{file}", A::kPublic, NPAC_NOW(consoleFile(r, r.path[1]))},
      // Probes and the scrape, outside /v1 where their tools look (metrics_routes.cc,
      // health_routes.cc).
      {V::get, "/metrics", A::kReader, NPAC_LATER(metrics(r, respond)), RouteBody::kJson, ReadCost::kWholeDataSet},
      {V::get, "/health", A::kPublic, NPAC_NOW(health(r))},
      {V::get, "/ready", A::kPublic, NPAC_LATER(ready(r, respond))},
  };
#undef NPAC_NOW
#undef NPAC_LATER
  return table;
}

bool AdminApi::isExpensive(const Route& route, const ApiRequest& request) {
  switch (route.cost) {
    case ReadCost::kBounded: return false;
    case ReadCost::kWholeDataSet: return true;
    case ReadCost::kLimitRows: {
      // A limit that is not a number is refused 400 by the handler, cheaply.
      const std::optional<std::string> limit = request.queryValue("limit");
      std::size_t rows = 0;
      if (!limit) return false;
      auto [end, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), rows);
      return ec == std::errc() && end == limit->data() + limit->size() && rows > kCheapLogRows;
    }
  }
  return true;
}

std::vector<AdminApi::RouteInfo> AdminApi::routes() {
  std::vector<RouteInfo> out;
  for (const Route& route : routeTable()) out.push_back(RouteInfo{route.method, route.pattern, route.access});
  return out;
}

bool AdminApi::matches(std::string_view pattern, const std::vector<std::string>& path) {
  std::size_t i = 0;
  std::size_t start = 1;  // past the leading '/'
  while (start <= pattern.size()) {
    std::size_t end = pattern.find('/', start);
    if (end == std::string_view::npos) end = pattern.size();
    const std::string_view segment = pattern.substr(start, end - start);
    if (i >= path.size()) return false;
    if (segment.empty() || segment.front() != '{') {
      if (path[i] != segment) return false;
    }
    ++i;
    start = end + 1;
  }
  return i == path.size();
}

void AdminApi::handle(HttpRequest&& request, Responder respond) {
  // At --log-level debug (or PUT /v1/log-level), each request is logged as it arrives.
  spdlog::debug("admin API: {} {}", std::string(http::to_string(request.method())), std::string(request.target()));
  ApiRequest r;
  if (std::optional<ApiError> error = parseApiRequest(request, &r)) {
    return respond(errorResponse(http::status::bad_request, error->code, error->message));
  }
  std::string path;
  for (const std::string& s : r.path) path += "/" + s;
  if (path.empty()) path = "/";
  const std::string route_name = std::string(http::to_string(r.method)) + " " + printableAscii(path);

  const Route* found = nullptr;
  bool path_known = false;
  RouteAccess path_access = RouteAccess::kOperator;  // the least any method on the path needs
  for (const Route& route : routeTable()) {
    if (!matches(route.pattern, r.path)) continue;
    path_known = true;
    path_access = std::min(path_access, route.access);
    if (route.method == r.method) found = &route;
  }
  // Who may learn that a path or method does not exist: whoever may use the path, and
  // for a path that does not exist at all, any reader — never an anonymous caller. Under
  // /console/ every name is public: the browser asks for the page's files without a token,
  // and what is not one of them is a 404 to anyone (console_routes.cc).
  const bool console_path = !r.path.empty() && r.path[0] == "console";
  const RouteAccess need = found != nullptr ? found->access
                           : path_known     ? path_access
                           : console_path   ? RouteAccess::kPublic
                                            : RouteAccess::kReader;
  AccessControl::Decision decision = access_.admit(request, need, route_name);
  if (decision.refusal) return respond(std::move(*decision.refusal));
  r.token_name = std::move(decision.actor);
  r.token_role = decision.role;

  // The body's media type must be the one the route takes (RFC 9110 §15.5.16: 415).
  if (found != nullptr && r.pdu_batch && found->body != RouteBody::kPduBatch) {
    std::string takers;  // the routes that do take it, "POST /v1/pdu-batches"
    for (const Route& route : routeTable()) {
      if (route.body != RouteBody::kPduBatch) continue;
      takers += (takers.empty() ? "" : ", ") + std::string(http::to_string(route.method)) + " " + route.pattern;
    }
    return respond(errorResponse(http::status::unsupported_media_type, "unsupported_media_type",
                                 std::string(kPduBatchMediaType) + " is taken by " + takers + " only; " +
                                     route_name + " takes JSON"));
  }
  if (found != nullptr && !r.pdu_batch && found->body == RouteBody::kPduBatch) {
    return respond(errorResponse(http::status::unsupported_media_type, "unsupported_media_type",
                                 route_name + " takes Content-Type: " + std::string(kPduBatchMediaType) +
                                     " (docs/API.md \"PDU batches\"); JSON messages go to POST /v1/messages"));
  }
  if (found != nullptr && isExpensive(*found, r) && r.token_role != db::TokenRole::kOperator) {
    // A reader's or application's expensive read waits its turn (expensive_reads.h).
    auto request = std::make_shared<ApiRequest>(std::move(r));
    const Route* route = found;
    return expensive_reads_.submit(request->token_name, route_name,
                                   registry_.get(tunables::kApiExpensiveReadRate), std::move(respond),
                                   [this, route, request](Responder& answer) { route->run(*this, *request, answer); });
  }
  if (found != nullptr) return found->run(*this, r, respond);
  if (path_known) {
    return respond(errorResponse(http::status::method_not_allowed, "method_not_allowed",
                                 std::string(http::to_string(r.method)) + " is not allowed on this route"));
  }
  respond(errorResponse(http::status::not_found, "unknown_route",
                        "no route " + route_name + " (see docs/API.md)"));
}

bool AdminApi::requireProvider(ApiRequest&, const std::string& spid, HttpResponse* error) {
  if (!db::isValidSpid(spid)) {
    *error = errorResponse(http::status::bad_request, "invalid_spid",
                           "'" + spid + "' is not a SPID: 4 ASCII letters or digits");
    return false;
  }
  db::ProviderStore providers(db_);
  db::Result<db::ServiceProvider> provider = providers.get(spid);
  if (provider.isOk()) return true;
  if (provider.status().isNotFound()) {
    *error = errorResponse(http::status::not_found, "provider_not_found", "no provider " + spid + " is provisioned");
  } else {
    *error = dbErrorResponse(provider.status());
  }
  return false;
}

bool AdminApi::requireProviders(ApiRequest& r, const std::vector<OutboundMessage>& messages, HttpResponse* error) {
  std::vector<std::string> checked;
  for (const OutboundMessage& message : messages) {
    const std::string& spid = message.message.spid;
    if (std::find(checked.begin(), checked.end(), spid) != checked.end()) continue;
    if (!requireProvider(r, spid, error)) return false;
    checked.push_back(spid);
  }
  return true;
}

}  // namespace npac::npacd
