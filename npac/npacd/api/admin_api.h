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
// Shape: the AdminApi is the HTTP side only — it starts the HttpServer, parses each
// request into an ApiRequest and turns answers back into HTTP (http_adapter.h), finds the
// route in its table (admin_api.cc), checks the caller's token (access.h), the body's
// media type and the cost of expensive reads, then calls the route's handler: a free
// function of a route file (routes.h) given the ApiContext (api_context.h), which holds
// what the handlers use and knows no HTTP library.
//
// Threading: the AdminApi, its HttpServer, the ApiContext's `db` and every store call run
// on the thread that runs `io` (the API thread). `db` is the API's own connection (not
// shared with another thread). The TunableRegistry is shared with the core: the API calls
// set/clear on the API thread (the registry uses its own connection for those); reads are
// safe anywhere. CoreService completions arrive on any thread and are posted onto `io`
// before anything else is done with them (core_service.h, api_thread.h). attachCore() and
// stop() must be called on the API thread (or before `io` runs / after it stopped).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/http/verb.hpp>

#include "db/clock.h"
#include "db/database.h"
#include "db/queue_writer.h"
#include "db/status.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/api/access.h"
#include "npac/npacd/api/api_context.h"
#include "npac/npacd/api/event_stream.h"
#include "npac/npacd/api/expensive_reads.h"
#include "npac/npacd/api/http_server.h"
#include "npac/npacd/api/tls_context.h"
#include "tunables/registry.h"

namespace npac::db {
class WalCheckpointer;
}  // namespace npac::db

namespace npac::npacd {

namespace http = boost::beast::http;
class ThrottleGroups;  // core/throttle_groups.h

inline constexpr std::uint16_t kDefaultAdminApiPort = 10180;

class AdminApi {
 public:
  struct Options {
    HttpServer::Options http;  // address, port (0 = ephemeral), body limit, timeouts
    // GET /v1/events: the quiet time after which a stream gets a ": keepalive" comment.
    std::chrono::milliseconds event_keepalive = kEventKeepalive;
  };

  static Result<std::unique_ptr<AdminApi>> start(boost::asio::io_context& io, Options options,
                                                     db::Database& db,
                                                     tunables::TunableRegistry& registry,
                                                     db::Clock clock);
  ~AdminApi();
  AdminApi(const AdminApi&) = delete;
  AdminApi& operator=(const AdminApi&) = delete;

  // The core answering the message, inbound and association routes; nullptr detaches
  // (those routes then answer 503).
  void attachCore(CoreService* core) { context_.core = core; }
  // The QueueWriter whose backlog and commit latency GET /metrics shows; nullptr: none.
  void attachQueueWriter(const db::QueueWriter* writer) { context_.writer = writer; }
  // The WAL checkpointer whose checkpoints GET /metrics shows; nullptr: none (PostgreSQL).
  void attachCheckpointer(const db::WalCheckpointer* checkpointer) { context_.checkpointer = checkpointer; }
  // The throttle groups in force (core/throttle_groups.h): their live state in the
  // throttle-group routes and /metrics, and a reload after each change. None: the routes
  // show definitions only.
  void attachThrottleGroups(const ThrottleGroups* groups) { context_.throttle_groups = groups; }
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

  // Admits `request` to its route (admin_api.cc's table) and runs the route's handler.
  void handle(HttpRequest&& request, Responder respond);

  ApiContext context_;  // what the route handlers use (routes.h)
  AccessControl access_;
  ExpensiveReads expensive_reads_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace npac::npacd
