// ApiContext: what the admin API's route handlers (the *_routes.cc files, declared in
// routes.h) work with — the API's database connection, the tunables, the clock, the
// association core and the other parts npacd attaches, the API thread (api_thread.h), and
// the little state some route areas keep between requests (the open event streams, the
// latest /metrics rendering, the backup under way). The AdminApi owns one and hands it to
// every handler with the request; nothing in it knows HTTP, so the route files compile
// without Boost.Beast or Asio.
//
// Threading: the API thread only, like the AdminApi that owns it (admin_api.h); `post`
// may be copied and called from any thread (api_thread.h). Attached parts may be nullptr:
// a handler checks before use (a route the core answers says 503 core_unavailable).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "db/clock.h"
#include "db/database.h"
#include "npac/npacd/api/api_response.h"
#include "npac/npacd/api/api_thread.h"
#include "npac/npacd/api/event_stream.h"
#include "npac/npacd/api/tls_context.h"

namespace npac::db {
class QueueWriter;
class WalCheckpointer;
}  // namespace npac::db

namespace npac::tunables {
class TunableRegistry;
}  // namespace npac::tunables

namespace npac::npacd {

class CoreService;        // core/core_service.h
class ThrottleGroups;     // core/throttle_groups.h
struct OutboundMessage;   // core/core_service.h
class EventFeed;          // event_routes.cc
struct EventSnapshot;     // event_routes.cc
struct MetricsRendering;  // metrics_routes.cc
class DatabaseBackup;     // database_backup.h

// What the API's own machinery counted, for GET /metrics (metrics_exposition.h): the
// requests refused before a handler ran (access control, connection limits, TLS
// handshakes, expensive reads) and the connections npacd closed, each by reason.
struct ApiServerCounts {
  std::vector<std::pair<std::string, std::uint64_t>> refusals;
  std::vector<std::pair<std::string, std::uint64_t>> connections_closed;
};

struct ApiContext {
  ApiContext(db::Database& database, tunables::TunableRegistry& tunables, db::Clock api_clock,
             PostToApiThread post_to_api, MakeApiTimer make_timer)
      : db(database), registry(tunables), clock(std::move(api_clock)), started_at(clock()),
        post(std::move(post_to_api)), timer(std::move(make_timer)) {}
  ApiContext(const ApiContext&) = delete;
  ApiContext& operator=(const ApiContext&) = delete;

  // The API's own connection (not shared with another thread).
  db::Database& db;
  // Shared with the core: set/clear on the API thread (the registry's own connection),
  // reads anywhere.
  tunables::TunableRegistry& registry;
  db::Clock clock;
  const db::TimeMs started_at;  // npacd_process_start_time_seconds
  PostToApiThread post;         // core completions come back through it
  MakeApiTimer timer;

  // Attached by npacd's wiring (AdminApi::attach*); nullptr: none.
  CoreService* core = nullptr;  // the message, inbound, association and queue routes
  const db::QueueWriter* writer = nullptr;             // GET /metrics
  const db::WalCheckpointer* checkpointer = nullptr;   // GET /metrics (SQLite only)
  const ThrottleGroups* throttle_groups = nullptr;     // live state; reloaded after a change

  // The validity of the certificate the API serves over TLS (tls_context.h); nullopt in
  // plain HTTP. GET /ready warns outside it; GET /metrics counts the days to its end.
  std::optional<CertificateValidity> api_certificate;
  // GET /v1/events: the quiet time after which a stream gets a ": keepalive" comment.
  std::chrono::milliseconds event_keepalive = kEventKeepalive;
  std::function<ApiServerCounts()> server_counts;  // set by the AdminApi

  // event_routes.cc: the open event streams, each owned here until it closes, and what
  // they all publish, built at most once per kMinEventInterval (made at the first tick).
  std::unordered_map<EventFeed*, std::shared_ptr<EventFeed>> event_feeds;
  std::shared_ptr<EventSnapshot> event_snapshot;
  // metrics_routes.cc: the latest GET /metrics rendering (made at the first scrape),
  // shared with the completions that fill it, which may outlive the API.
  std::shared_ptr<MetricsRendering> metrics_rendering;
  // backup_routes.cc: the backup being copied or streamed, if any (one at a time).
  std::shared_ptr<DatabaseBackup> backup;
};

// True if `spid` is a provisioned provider; otherwise false and `*error` says why (400
// invalid_spid, 404 provider_not_found, or the database's error).
bool requireProvider(ApiContext& api, const std::string& spid, ApiResponse* error);
// requireProvider for each provider `messages` are for, once each in the order first
// named: false and `*error` for the first that is not provisioned. A submission's
// unknown provider is refused so, with a clear answer, rather than as a constraint
// failure of the whole submission in the writer.
bool requireProviders(ApiContext& api, const std::vector<OutboundMessage>& messages, ApiResponse* error);

}  // namespace npac::npacd
