// GET /metrics: npacd's metrics in the Prometheus text format 0.0.4 (docs/API.md
// "Metrics", docs/OPERATIONS.md "Metrics"). Each owner is asked for a snapshot on its own
// thread: the queue counts from SQLite here on the API thread (db::summarizeQueue per
// provisioned provider, the counts of GET /v1/providers/{spid}/queue), the QueueWriter's
// under its lock, the core's through CoreService::metrics() on the core thread, whose
// completion is posted back here and captures only the Responder and the inputs (never
// the AdminApi), as in queue_routes.cc.
#include <memory>

#include <boost/asio/post.hpp>

#include "db/provider_store.h"
#include "db/queue_summary.h"
#include "db/storage_health.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/api/metrics_exposition.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {

namespace {

HttpResponse metricsResponse(const MetricsInputs& in) {
  HttpResponse response{http::status::ok, 11};
  // The exposition format's media type (Prometheus "Exposition formats", text 0.0.4).
  response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
  response.body() = renderMetrics(in);
  response.prepare_payload();
  return response;
}

}  // namespace

void AdminApi::metrics(ApiRequest& r, Responder& respond) {
  // The exposition takes no parameters; a scraper configured with some (`params:`) is
  // told so rather than answered as if they had an effect.
  if (!r.query.empty()) {
    return respond(errorResponse(http::status::bad_request, "bad_query",
                                 "GET /metrics takes no query parameters (got '" + r.query.begin()->first +
                                     "'); it always answers every family"));
  }
  auto in = std::make_shared<MetricsInputs>();
  in->now = clock_();
  in->process_start_seconds = static_cast<double>(started_at_) / 1000.0;
  const db::StorageHealth& health = db::StorageHealth::process();
  in->storage_failing = health.failing();
  in->storage_failures = health.failuresSinceHealthy();
  if (writer_ != nullptr) in->writer = writer_->metrics();
  // Refusals before a handler ran: the access control's 401/403 (access.h) and the HTTP
  // server's connection limits and TLS handshakes (http_server.h).
  const AccessCounters access = accessCounters();
  const HttpServerCounters http_counters = server_->counters();
  in->api_refusals = {{"unauthenticated", access.unauthenticated},
                      {"forbidden", access.forbidden},
                      {"max-connections", http_counters.refused_max_connections},
                      {"per-client-limit", http_counters.refused_per_client},
                      {"per-credential-limit", http_counters.refused_per_credential},
                      {"operator-reserve", http_counters.refused_operator_reserve},
                      {"tls-handshake", http_counters.tls_handshake_failures}};
  in->api_connections_closed = {{"idle-for-room", http_counters.closed_idle_for_room},
                                {"slow-stream", http_counters.streams_closed_slow}};
  // The queue counts: while storage fails they are left out (an unreadable file answers
  // nothing true), and npacd_storage_writable says why.
  db::ProviderStore providers(db_);
  if (db::Result<std::vector<db::ServiceProvider>> list = providers.list(); list.isOk()) {
    for (const db::ServiceProvider& provider : list.value()) {
      in->provisioned.push_back(provider.spid);
      db::Result<db::QueueSummary> summary = db::summarizeQueue(db_, provider.spid);
      if (summary.isOk()) in->queues.emplace_back(provider.spid, std::move(summary).value());
    }
  }
  if (core_ == nullptr) return respond(metricsResponse(*in));
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->metrics(/*providers=*/true, [io, answer, in](db::Result<CoreMetrics> core) mutable {
    boost::asio::post(*io, [answer = std::move(answer), in = std::move(in), core = std::move(core)]() {
      // A core that did not answer leaves its families out (npacd_core_up 0).
      if (core.isOk()) in->core = &core.value();
      answer(metricsResponse(*in));
    });
  });
}

}  // namespace npac::npacd
