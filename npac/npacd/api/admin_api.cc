#include "npac/npacd/api/admin_api.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "npac/npacd/api/connection_priority.h"
#include "npac/npacd/asio_timers.h"
#include "npac/npacd/api/http_adapter.h"
#include "npac/npacd/api/pdu_batch.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"

namespace npac::npacd {

namespace http = boost::beast::http;

namespace {

// The media type of the body a route takes: JSON (or no body), or the binary PDU batch
// (pdu_batch.h). handle() answers a body of the other type 415 before the handler runs.
enum class RouteBody { kJson, kPduBatch };
// What a read's work grows with: bounded (one provider, one message...), the whole data
// set (every provider's queue counts and series: GET /metrics), or the rows its ?limit=
// asks for (a log page: expensive past kCheapLogRows). Expensive reads of non-operator
// tokens go through ExpensiveReads (expensive_reads.h).
enum class ReadCost { kBounded, kWholeDataSet, kLimitRows };
// One route: the handler (routes.h) answers through `respond`, at once or later.
struct Route {
  ApiMethod method;
  const char* pattern;
  RouteAccess access;
  void (*run)(ApiContext& api, ApiRequest& request, ApiResponder& respond);
  RouteBody body = RouteBody::kJson;
  ReadCost cost = ReadCost::kBounded;
};

// Route table: method + path shape → the role it needs and its handler. Paths are matched
// segment by segment; a "{...}" segment matches any one segment. Every route declares its
// role (docs/API.md "Authentication" has the table; tests/npac/npacd/api/admin_api_access_test.cc
// walks this one). reader: every GET but the inbound poll; application: reader plus
// submitting messages and taking and answering providers' requests; operator: the rest.
// A route takes a JSON body unless it says RouteBody::kPduBatch.
using M = ApiMethod;
using A = RouteAccess;
// Handlers answering at once, and handlers answering through `respond` (maybe later).
#define NPAC_NOW(call) [](ApiContext& api, ApiRequest& r, ApiResponder& respond) { respond(call); }
#define NPAC_LATER(call) [](ApiContext& api, ApiRequest& r, ApiResponder& respond) { call; }
const Route kRoutes[] = {
    {M::kPost, "/v1/providers", A::kOperator, NPAC_NOW(addProvider(api, r))},
    {M::kGet, "/v1/providers", A::kReader, NPAC_NOW(listProviders(api, r))},
    {M::kGet, "/v1/providers/{spid}", A::kReader, NPAC_NOW(showProvider(api, r, r.path[2]))},
    {M::kPost, "/v1/providers/{spid}/disable", A::kOperator, NPAC_NOW(setProviderEnabled(api, r, r.path[2], false))},
    {M::kPost, "/v1/providers/{spid}/enable", A::kOperator, NPAC_NOW(setProviderEnabled(api, r, r.path[2], true))},
    {M::kPut, "/v1/providers/{spid}/srr", A::kOperator, NPAC_NOW(setSrr(api, r, r.path[2]))},
    {M::kGet, "/v1/providers/{spid}/queue", A::kReader, NPAC_LATER(providerQueue(api, r, r.path[2], respond))},
    {M::kGet, "/v1/providers/{spid}/egress", A::kReader, NPAC_LATER(providerEgress(api, r, r.path[2], respond))},
    {M::kPost, "/v1/providers/{spid}/nsaps", A::kOperator, NPAC_NOW(addNsap(api, r, r.path[2]))},
    {M::kGet, "/v1/providers/{spid}/nsaps", A::kReader, NPAC_NOW(listNsaps(api, r, r.path[2]))},
    {M::kDelete, "/v1/providers/{spid}/nsaps/{nsap}", A::kOperator, NPAC_NOW(removeNsap(api, r, r.path[2], r.path[4]))},
    {M::kPost, "/v1/providers/{spid}/keys", A::kOperator, NPAC_NOW(addKey(api, r, r.path[2]))},
    {M::kGet, "/v1/providers/{spid}/keys", A::kReader, NPAC_NOW(listKeys(api, r, r.path[2]))},
    {M::kPost, "/v1/providers/{spid}/keys/{list}/{key}/revoke", A::kOperator,
     NPAC_NOW(revokeKey(api, r, r.path[2], r.path[4], r.path[5]))},
    {M::kPost, "/v1/npac-keys", A::kOperator, NPAC_NOW(addNpacKey(api, r))},
    {M::kGet, "/v1/npac-keys", A::kReader, NPAC_NOW(listNpacKeys(api, r))},
    {M::kGet, "/v1/npac-keys/{list}/{key}/public", A::kReader, NPAC_NOW(exportNpacKey(api, r, r.path[2], r.path[3]))},
    {M::kPost, "/v1/npac-keys/{list}/{key}/revoke", A::kOperator, NPAC_NOW(revokeNpacKey(api, r, r.path[2], r.path[3]))},
    {M::kGet, "/v1/tunables", A::kReader, NPAC_NOW(listTunables(api, r))},
    {M::kGet, "/v1/tunables/{name}", A::kReader, NPAC_NOW(getTunable(api, r, r.path[2]))},
    {M::kPut, "/v1/tunables/{name}", A::kOperator, NPAC_NOW(setTunable(api, r, r.path[2]))},
    {M::kDelete, "/v1/tunables/{name}", A::kOperator, NPAC_NOW(clearTunable(api, r, r.path[2]))},
    {M::kPost, "/v1/messages", A::kApplication, NPAC_LATER(submitMessages(api, r, respond))},
    {M::kPost, "/v1/broadcasts", A::kApplication, NPAC_LATER(submitBroadcast(api, r, respond))},
    {M::kPost, "/v1/pdu-batches", A::kApplication, NPAC_LATER(submitPduBatch(api, r, respond)), RouteBody::kPduBatch},
    {M::kGet, "/v1/messages/{id}", A::kReader, NPAC_LATER(messageStatus(api, r, r.path[2], respond))},
    // Taking providers' requests is the application's job, not a reader's.
    {M::kGet, "/v1/inbound", A::kApplication, NPAC_LATER(pollInbound(api, r, respond))},
    {M::kPost, "/v1/inbound/{id}/response", A::kApplication, NPAC_LATER(respondInbound(api, r, r.path[2], respond))},
    {M::kGet, "/v1/associations", A::kReader, NPAC_LATER(listAssociations(api, r, respond))},
    {M::kPost, "/v1/associations/{id}/abort", A::kOperator, NPAC_LATER(abortAssociation(api, r, r.path[2], respond))},
    {M::kGet, "/v1/association-log", A::kReader, NPAC_NOW(associationLog(api, r)), RouteBody::kJson, ReadCost::kLimitRows},
    {M::kGet, "/v1/audit-log", A::kReader, NPAC_NOW(auditLog(api, r)), RouteBody::kJson, ReadCost::kLimitRows},
    {M::kPost, "/v1/throttle-groups", A::kOperator, NPAC_NOW(addThrottleGroup(api, r))},
    {M::kGet, "/v1/throttle-groups", A::kReader, NPAC_NOW(listThrottleGroups(api, r))},
    {M::kGet, "/v1/throttle-groups/{name}", A::kReader, NPAC_NOW(showThrottleGroup(api, r, r.path[2]))},
    {M::kPut, "/v1/throttle-groups/{name}", A::kOperator, NPAC_NOW(setThrottleGroup(api, r, r.path[2]))},
    {M::kDelete, "/v1/throttle-groups/{name}", A::kOperator, NPAC_NOW(removeThrottleGroup(api, r, r.path[2]))},
    {M::kGet, "/v1/log-level", A::kReader, NPAC_NOW(showLogLevel(api, r))},
    {M::kPut, "/v1/log-level", A::kOperator, NPAC_NOW(changeLogLevel(api, r))},
    {M::kPost, "/v1/tokens", A::kOperator, NPAC_NOW(createToken(api, r))},
    {M::kGet, "/v1/tokens", A::kOperator, NPAC_NOW(listTokens(api, r))},
    {M::kPost, "/v1/tokens/{name}/revoke", A::kOperator, NPAC_NOW(revokeToken(api, r, r.path[2]))},
    // The whole database, NPAC private keys and token digests included: operators only.
    {M::kPost, "/v1/backup", A::kOperator, NPAC_LATER(backupDatabase(api, r, respond))},
    // The console (console_routes.cc, event_routes.cc): who the caller is, the page's
    // files (public: they hold no data) and the live event stream.
    {M::kGet, "/v1/whoami", A::kReader, NPAC_NOW(whoami(api, r))},
    {M::kGet, "/v1/events", A::kReader, NPAC_LATER(eventStream(api, r, respond))},
    {M::kGet, "/console", A::kPublic, NPAC_NOW(consoleIndex(api, r))},
    {M::kGet, "/console/{file}", A::kPublic, NPAC_NOW(consoleFile(api, r, r.path[1]))},
    // Probes and the scrape, outside /v1 where their tools look (metrics_routes.cc,
    // health_routes.cc).
    {M::kGet, "/metrics", A::kReader, NPAC_LATER(scrapeMetrics(api, r, respond)), RouteBody::kJson,
     ReadCost::kWholeDataSet},
    {M::kGet, "/health", A::kPublic, NPAC_NOW(healthProbe(api, r))},
    {M::kGet, "/ready", A::kPublic, NPAC_LATER(readyProbe(api, r, respond))},
};
#undef NPAC_NOW
#undef NPAC_LATER

bool isExpensive(const Route& route, const ApiRequest& request) {
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

// The route a request asks for, if any, and the role a caller needs to be answered.
struct RouteMatch {
  const Route* found = nullptr;
  bool path_known = false;  // some route has the path (405 if none has the method)
  RouteAccess need = RouteAccess::kReader;
};

RouteMatch findRoute(const ApiRequest& r) {
  RouteMatch match;
  RouteAccess path_access = RouteAccess::kOperator;  // the least any method on the path needs
  for (const Route& route : kRoutes) {
    if (!AdminApi::matches(route.pattern, r.path)) continue;
    match.path_known = true;
    path_access = std::min(path_access, route.access);
    if (route.method == r.method) match.found = &route;
  }
  // Who may learn that a path or method does not exist: whoever may use the path, and
  // for a path that does not exist at all, any reader — never an anonymous caller. Under
  // /console/ every name is public: the browser asks for the page's files without a token,
  // and what is not one of them is a 404 to anyone (console_routes.cc).
  const bool console_path = !r.path.empty() && r.path[0] == "console";
  match.need = match.found != nullptr ? match.found->access
               : match.path_known     ? path_access
               : console_path         ? RouteAccess::kPublic
                                      : RouteAccess::kReader;
  return match;
}

// 415 when the body's media type is not the one `route` takes (RFC 9110 §15.5.16).
std::optional<ApiResponse> wrongBodyType(const Route& route, const ApiRequest& r, const std::string& route_name) {
  if (r.pdu_batch && route.body != RouteBody::kPduBatch) {
    std::string takers;  // the routes that do take it, "POST /v1/pdu-batches"
    for (const Route& taker : kRoutes) {
      if (taker.body != RouteBody::kPduBatch) continue;
      takers += (takers.empty() ? "" : ", ") + std::string(toString(taker.method)) + " " + taker.pattern;
    }
    return errorResponse(ApiStatus::kUnsupportedMediaType, "unsupported_media_type",
                         std::string(kPduBatchMediaType) + " is taken by " + takers + " only; " + route_name +
                             " takes JSON");
  }
  if (!r.pdu_batch && route.body == RouteBody::kPduBatch) {
    return errorResponse(ApiStatus::kUnsupportedMediaType, "unsupported_media_type",
                         route_name + " takes Content-Type: " + std::string(kPduBatchMediaType) +
                             " (docs/API.md \"PDU batches\"); JSON messages go to POST /v1/messages");
  }
  return std::nullopt;
}

// "/v1/providers/0001" from its segments ("/" for none).
std::string joinedPath(const std::vector<std::string>& segments) {
  std::string path;
  for (const std::string& s : segments) path += "/" + s;
  return path.empty() ? "/" : path;
}

// The API thread as the route files see it (api_thread.h): its io_context, which
// outlives the AdminApi, and timers on it.
PostToApiThread postingTo(boost::asio::io_context& io) {
  return [&io](std::function<void()> work) { boost::asio::post(io, std::move(work)); };
}

MakeApiTimer timersOn(boost::asio::io_context& io) {
  return [timers = std::make_shared<AsioTimers>(io)]() -> std::unique_ptr<ApiTimer> { return timers->makeTimer(); };
}

// What GET /metrics shows of the API's own counts, by reason.
ApiServerCounts serverCounts(const AccessCounters& access, const HttpServerCounters& http,
                             const ExpensiveReadCounters& expensive) {
  ApiServerCounts counts;
  counts.refusals = {{"unauthenticated", access.unauthenticated},
                     {"forbidden", access.forbidden},
                     {"max-connections", http.refused_max_connections},
                     {"per-client-limit", http.refused_per_client},
                     {"per-credential-limit", http.refused_per_credential},
                     {"operator-reserve", http.refused_operator_reserve},
                     {"tls-handshake", http.tls_handshake_failures},
                     {"expensive-read-rate", expensive.refused_rate},
                     {"expensive-read-waiting", expensive.refused_waiting}};
  counts.connections_closed = {{"idle-for-room", http.closed_idle_for_room},
                               {"slow-stream", http.streams_closed_slow}};
  return counts;
}

}  // namespace

AdminApi::AdminApi(boost::asio::io_context& io, db::Database& db, tunables::TunableRegistry& registry,
                   db::Clock clock)
    : context_(db, registry, clock, postingTo(io), timersOn(io)),
      access_(db, clock),
      expensive_reads_(io, std::move(clock)) {}

AdminApi::~AdminApi() { stop(); }

Result<std::unique_ptr<AdminApi>> AdminApi::start(boost::asio::io_context& io, Options options,
                                                      db::Database& db,
                                                      tunables::TunableRegistry& registry,
                                                      db::Clock clock) {
  std::unique_ptr<AdminApi> api(new AdminApi(io, db, registry, std::move(clock)));
  AdminApi* self = api.get();
  ApiContext& context = api->context_;
  context.event_keepalive = options.event_keepalive;
  if (options.http.tls) {
    // A certificate outside its validity starts all the same (a renewal may be on its
    // way), but says so now, in GET /ready and in GET /metrics.
    context.api_certificate = certificateValidity(*options.http.tls);
    if (!context.api_certificate) {
      spdlog::warn("admin API: cannot read the validity dates of the certificate (--api-cert)");
    } else if (std::optional<std::string> problem = certificateValidityProblem(*context.api_certificate, context.clock())) {
      spdlog::warn("{}", *problem);
    }
  }
  // The operator reserve (http_server.h) sorts requests by their token's role.
  if (!options.http.classify) options.http.classify = [&db](const HttpRequest& r) { return classifyByToken(db, r); };
  Result<std::unique_ptr<HttpServer>> server = HttpServer::start(
      io, options.http,
      [self](HttpRequest&& request, Responder respond) { self->handle(std::move(request), std::move(respond)); });
  if (!server.isOk()) return server.status();
  api->server_ = std::move(server.value());
  context.server_counts = [self] {
    return serverCounts(self->access_.counters(), self->server_->counters(), self->expensive_reads_.counters());
  };
  return api;
}

void AdminApi::stop() {
  // Each event stream sends its "end" and lets go of the context before the server closes
  // the sessions; a backup still copying is interrupted (one streaming is cut by the
  // server's stop: its client sees the body end short of X-Npac-Backup-Bytes).
  stopEventStreams(context_);
  expensive_reads_.stop();
  cancelBackup(context_);
  if (server_) server_->stop();
}

std::vector<AdminApi::RouteInfo> AdminApi::routes() {
  std::vector<RouteInfo> out;
  for (const Route& route : kRoutes) out.push_back(RouteInfo{toVerb(route.method), route.pattern, route.access});
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
  const std::string method(http::to_string(request.method()));
  // At --log-level debug (or PUT /v1/log-level), each request is logged as it arrives.
  spdlog::debug("admin API: {} {}", method, std::string(request.target()));
  ApiRequest r;
  if (Status refused = parseApiRequest(request, &r); !refused.isOk()) {
    return respond(toHttpResponse(statusResponse(refused)));
  }
  const std::string route_name = method + " " + printableAscii(joinedPath(r.path));
  const RouteMatch match = findRoute(r);
  AccessControl::Decision decision = access_.admit(request, match.need, route_name);
  if (decision.refusal) return respond(std::move(*decision.refusal));
  r.token_name = std::move(decision.actor);
  r.token_role = decision.role;

  ApiResponder answer = toApiResponder(respond);
  if (match.found == nullptr && match.path_known) {
    return answer(errorResponse(ApiStatus::kMethodNotAllowed, "method_not_allowed",
                                method + " is not allowed on this route"));
  }
  if (match.found == nullptr) {
    return answer(errorResponse(ApiStatus::kNotFound, "unknown_route", "no route " + route_name + " (see docs/API.md)"));
  }
  const Route* route = match.found;
  if (std::optional<ApiResponse> refused = wrongBodyType(*route, r, route_name)) return answer(std::move(*refused));
  if (isExpensive(*route, r) && r.token_role != db::TokenRole::kOperator) {
    // A reader's or application's expensive read waits its turn (expensive_reads.h).
    auto queued = std::make_shared<ApiRequest>(std::move(r));
    return expensive_reads_.submit(queued->token_name, route_name,
                                   context_.registry.get(tunables::kApiExpensiveReadRate), std::move(respond),
                                   [this, route, queued](Responder& done) {
                                     ApiResponder read_answer = toApiResponder(done);
                                     route->run(context_, *queued, read_answer);
                                   });
  }
  route->run(context_, r, answer);
}

}  // namespace npac::npacd
