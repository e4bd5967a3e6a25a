// AdminApi: npacd's local HTTP/JSON API (default 127.0.0.1:10180) for the NPAC
// application that produces messages and for operators (npacctl). docs/API.md lists every
// route with examples.
//
//   provisioning  providers, their NSAPs and keys        SQLite, on the API thread
//   npac-keys     the NPAC's own signing keys            SQLite, on the API thread
//   tunables      catalogue, get/set/clear, srr          TunableRegistry (validated, audited)
//   messages      submit (ids once committed), status    CoreService / SQLite
//   broadcasts    one message for many providers         SQLite providers + CoreService
//   inbound       long-poll providers' requests, answer  CoreService
//   associations  list, abort                            CoreService
//   queue view    a provider's queue and why it waits    SQLite counts + CoreService
//   backup        a consistent copy of the SQLite file   a worker thread (database_backup.h)
//
// Every answer is JSON. An error is {"error":{"code":"...","message":"..."}} with a
// status saying whose fault it is: 400 bad JSON or a refused value (with the
// tunables/db reason), 404 unknown route/provider/tunable/message, 409 conflict
// (duplicate), 413 body over the limit, 503 core not attached or overloaded, 500 storage.
// Every request but the public probes carries a bearer token whose role the route allows
// (access.h: 401 unauthenticated, 403 forbidden). The actor of every change is that token's
// name — a body "actor" or an X-Npac-Actor header is ignored — and the change is written
// with an audit entry in the same transaction (tunables: by the registry).
// The expensive reads of reader and application tokens (GET /metrics, long log pages) are
// bounded per token and run one at a time (expensive_reads.h), and their GET /metrics is
// answered from a rendering up to metrics_cache_interval old, so that no such token can
// starve an operator; an operator's requests run as they arrive (docs/API.md "Expensive
// reads").
//
// Threading: the AdminApi, its HttpServer, `db` and every store call run on the thread
// that runs `io` (the API thread). `db` is the API's own connection (not shared with
// another thread). The TunableRegistry is shared with the core: the API calls set/clear
// on the API thread (the registry uses its own connection for those); reads are safe
// anywhere. CoreService completions arrive on any thread and are posted onto `io` before
// anything else is done with them (core_service.h). attachCore() and stop() must be
// called on the API thread (or before `io` runs / after it stopped).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/http/verb.hpp>

#include "db/clock.h"
#include "db/database.h"
#include "db/queue_writer.h"
#include "db/status.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/api/access.h"
#include "npac/npacd/api/event_stream.h"
#include "npac/npacd/api/expensive_reads.h"
#include "npac/npacd/api/http_server.h"
#include "npac/npacd/api/tls_context.h"
#include "tunables/registry.h"

namespace npac::db {
class WalCheckpointer;
struct ThrottleGroupDefinition;
}  // namespace npac::db

namespace npac::npacd {

namespace http = boost::beast::http;
struct ApiRequest;        // admin_api_request.h
class ThrottleGroups;     // core/throttle_groups.h
class EventFeed;          // event_routes.cc
struct EventSnapshot;     // event_routes.cc
struct MetricsRendering;  // metrics_routes.cc
class DatabaseBackup;     // database_backup.h

inline constexpr std::uint16_t kDefaultAdminApiPort = 10180;
// Longest wait a long poll may ask for (GET /v1/inbound?wait=): below common proxy and
// client idle timeouts.
inline constexpr std::chrono::seconds kMaxInboundWait{60};
inline constexpr std::size_t kMaxInboundBatch = 1000;

class AdminApi {
 public:
  struct Options {
    HttpServer::Options http;  // address, port (0 = ephemeral), body limit, timeouts
    // GET /v1/events: the quiet time after which a stream gets a ": keepalive" comment.
    std::chrono::milliseconds event_keepalive = kEventKeepalive;
  };

  static db::Result<std::unique_ptr<AdminApi>> start(boost::asio::io_context& io, Options options,
                                                     db::Database& db,
                                                     tunables::TunableRegistry& registry,
                                                     db::Clock clock);
  ~AdminApi();
  AdminApi(const AdminApi&) = delete;
  AdminApi& operator=(const AdminApi&) = delete;

  // The core answering the message, inbound and association routes; nullptr detaches
  // (those routes then answer 503).
  void attachCore(CoreService* core) { core_ = core; }
  // The QueueWriter whose backlog and commit latency GET /metrics shows; nullptr: none.
  void attachQueueWriter(const db::QueueWriter* writer) { writer_ = writer; }
  // The WAL checkpointer whose checkpoints GET /metrics shows; nullptr: none (PostgreSQL).
  void attachCheckpointer(const db::WalCheckpointer* checkpointer) { checkpointer_ = checkpointer; }
  // The throttle groups in force (core/throttle_groups.h): their live state in the
  // throttle-group routes and /metrics, and a reload after each change. None: the routes
  // show definitions only.
  void attachThrottleGroups(const ThrottleGroups* groups) { throttle_groups_ = groups; }
  std::uint16_t port() const { return server_->port(); }
  // Ends every event stream (GET /v1/events), then closes the server and its sessions.
  void stop();

  // The route table as data: each method and path pattern ("/v1/providers/{spid}", a
  // "{...}" segment matching any one segment) with the role it needs. Tests walk it so
  // no route goes without a declared role; docs/API.md "Authentication" lists it.
  struct RouteInfo {
    http::verb method;
    std::string pattern;
    RouteAccess access;
  };
  static std::vector<RouteInfo> routes();
  static bool matches(std::string_view pattern, const std::vector<std::string>& path);

  // Refusals so far (401 and 403), for npacd_api_refusals_total. Any thread.
  AccessCounters accessCounters() const { return access_.counters(); }

 private:
  AdminApi(boost::asio::io_context& io, db::Database& db, tunables::TunableRegistry& registry,
           db::Clock clock);

  // The media type of the body a route takes: JSON (or no body), or the binary PDU batch
  // (pdu_batch.h). handle() answers a body of the other type 415 before the handler runs.
  enum class RouteBody { kJson, kPduBatch };
  // What a read's work grows with: bounded (one provider, one message...), the whole data
  // set (every provider's queue counts and series: GET /metrics), or the rows its ?limit=
  // asks for (a log page: expensive past kCheapLogRows). Expensive reads of non-operator
  // tokens go through ExpensiveReads (expensive_reads.h).
  enum class ReadCost { kBounded, kWholeDataSet, kLimitRows };
  // One route: the handler answers through `respond`, at once or later.
  struct Route {
    http::verb method;
    const char* pattern;
    RouteAccess access;
    void (*run)(AdminApi& api, ApiRequest& request, Responder& respond);
    RouteBody body = RouteBody::kJson;
    ReadCost cost = ReadCost::kBounded;
  };
  static const std::vector<Route>& routeTable();
  static bool isExpensive(const Route& route, const ApiRequest& request);

  void handle(HttpRequest&& request, Responder respond);

  // admin_api_provisioning.cc
  HttpResponse addProvider(ApiRequest& r);
  HttpResponse listProviders(ApiRequest& r);
  HttpResponse showProvider(ApiRequest& r, const std::string& spid);
  HttpResponse setProviderEnabled(ApiRequest& r, const std::string& spid, bool enabled);
  HttpResponse addNsap(ApiRequest& r, const std::string& spid);
  HttpResponse listNsaps(ApiRequest& r, const std::string& spid);
  HttpResponse removeNsap(ApiRequest& r, const std::string& spid, const std::string& nsap);
  HttpResponse addKey(ApiRequest& r, const std::string& spid);
  HttpResponse listKeys(ApiRequest& r, const std::string& spid);
  HttpResponse revokeKey(ApiRequest& r, const std::string& spid, const std::string& list,
                         const std::string& key);
  // admin_api_npac_keys.cc: the NPAC's own signing keys (the private half never leaves)
  HttpResponse addNpacKey(ApiRequest& r);
  HttpResponse listNpacKeys(ApiRequest& r);
  HttpResponse exportNpacKey(ApiRequest& r, const std::string& list, const std::string& key);
  HttpResponse revokeNpacKey(ApiRequest& r, const std::string& list, const std::string& key);
  // admin_api_tunables.cc
  HttpResponse listTunables(ApiRequest& r);
  HttpResponse getTunable(ApiRequest& r, const std::string& name);
  HttpResponse setTunable(ApiRequest& r, const std::string& name);
  HttpResponse clearTunable(ApiRequest& r, const std::string& name);
  HttpResponse setSrr(ApiRequest& r, const std::string& spid);
  // admin_api_core.cc (answer through `respond`, possibly later)
  void submitMessages(ApiRequest& r, Responder& respond);
  // broadcast_routes.cc: one message for many providers, one submission (broadcast.h)
  void submitBroadcast(ApiRequest& r, Responder& respond);
  // pdu_batch_routes.cc: messages already encoded, in the binary PDU batch (pdu_batch.h)
  void submitPduBatch(ApiRequest& r, Responder& respond);
  // A queued message's status carries its wait reason, which needs the core's view.
  void messageStatus(ApiRequest& r, const std::string& id, Responder& respond);
  void pollInbound(ApiRequest& r, Responder& respond);
  void respondInbound(ApiRequest& r, const std::string& id, Responder& respond);
  void listAssociations(ApiRequest& r, Responder& respond);
  void abortAssociation(ApiRequest& r, const std::string& id, Responder& respond);

  // queue_routes.cc: GET /v1/providers/{spid}/queue (queue_view.h)
  void providerQueue(ApiRequest& r, const std::string& spid, Responder& respond);
  // The egress policy in force and the latest PDUs with their associations.
  void providerEgress(ApiRequest& r, const std::string& spid, Responder& respond);

  // admin_api_logs.cc
  HttpResponse associationLog(ApiRequest& r);
  HttpResponse auditLog(ApiRequest& r);

  // log_level_routes.cc: GET/PUT /v1/log-level (the level at run time, audited)
  HttpResponse getLogLevel(ApiRequest& r);
  HttpResponse setLogLevel(ApiRequest& r);

  // metrics_routes.cc: GET /metrics (Prometheus text 0.0.4). health_routes.cc: GET
  // /health (alive) and GET /ready (database writable, listener up, not draining).
  void metrics(ApiRequest& r, Responder& respond);
  HttpResponse health(ApiRequest& r);
  void ready(ApiRequest& r, Responder& respond);

  // backup_routes.cc: POST /v1/backup, the SQLite file copied while npacd runs and
  // streamed (database_backup.h); one at a time.
  void backupDatabase(ApiRequest& r, Responder& respond);

  // throttle_group_routes.cc: provisioned egress throttle groups (DSR ETG/ETL)
  HttpResponse addThrottleGroup(ApiRequest& r);
  HttpResponse listThrottleGroups(ApiRequest& r);
  HttpResponse showThrottleGroup(ApiRequest& r, const std::string& name);
  HttpResponse setThrottleGroup(ApiRequest& r, const std::string& name);
  HttpResponse removeThrottleGroup(ApiRequest& r, const std::string& name);
  // requireProvider for each member of `group`.
  bool requireMembers(ApiRequest& r, const db::ThrottleGroupDefinition& group, HttpResponse* error);

  // token_routes.cc: the admin API's bearer tokens (db/token_store.h)
  HttpResponse createToken(ApiRequest& r);
  HttpResponse listTokens(ApiRequest& r);
  HttpResponse revokeToken(ApiRequest& r, const std::string& name);

  // console_routes.cc: GET /v1/whoami (the caller's token name and role) and the
  // console's embedded files (GET /console redirects to /console/, its index.html).
  HttpResponse whoami(ApiRequest& r);
  HttpResponse consoleIndex(ApiRequest& r);
  HttpResponse consoleFile(ApiRequest& r, const std::string& name);
  // event_routes.cc: GET /v1/events, server-sent events of the associations and providers.
  void events(ApiRequest& r, Responder& respond);
  friend class EventFeed;
  void forgetFeed(EventFeed* feed) { feeds_.erase(feed); }

  // True if `spid` is a provisioned provider; otherwise false and `*error` says why.
  bool requireProvider(ApiRequest& r, const std::string& spid, HttpResponse* error);
  // requireProvider for each provider `messages` are for, once each in the order first
  // named: false and `*error` for the first that is not provisioned. A submission's
  // unknown provider is refused so, with a clear answer, rather than as a constraint
  // failure of the whole submission in the writer.
  bool requireProviders(ApiRequest& r, const std::vector<OutboundMessage>& messages, HttpResponse* error);

  boost::asio::io_context& io_;
  db::Database& db_;
  tunables::TunableRegistry& registry_;
  db::Clock clock_;
  CoreService* core_ = nullptr;
  AccessControl access_;
  const db::QueueWriter* writer_ = nullptr;
  const db::WalCheckpointer* checkpointer_ = nullptr;
  const ThrottleGroups* throttle_groups_ = nullptr;
  const db::TimeMs started_at_ = clock_();  // npacd_process_start_time_seconds
  std::unordered_map<EventFeed*, std::shared_ptr<EventFeed>> feeds_;  // open event streams
  // What every event stream publishes, built at most once per kMinEventInterval for all
  // of them (event_routes.cc: made at the first tick), shared with the core's answer.
  std::shared_ptr<EventSnapshot> event_snapshot_;
  ExpensiveReads expensive_reads_{io_, clock_};
  // The latest GET /metrics rendering (metrics_routes.cc: made at the first scrape),
  // shared with the completions that fill it, which may outlive the AdminApi.
  std::shared_ptr<MetricsRendering> metrics_rendering_;
  // The validity of the certificate the API serves over TLS (tls_context.h); nullopt in
  // plain HTTP. GET /ready warns outside it; GET /metrics counts the days to its end.
  std::optional<CertificateValidity> api_certificate_;
  std::shared_ptr<DatabaseBackup> backup_;  // the backup being copied or streamed, if any
  std::chrono::milliseconds event_keepalive_ = kEventKeepalive;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace npac::npacd
