// GET /metrics: npacd's metrics in the Prometheus text format 0.0.4 (docs/API.md
// "Metrics", docs/OPERATIONS.md "Metrics"). Each owner is asked for a snapshot on its own
// thread: the queue counts from SQLite here on the API thread (db::summarizeQueue per
// provisioned provider, the counts of GET /v1/providers/{spid}/queue), the QueueWriter's
// under its lock, the core's through CoreService::metrics() on the core thread, whose
// completion is posted back here and captures only the Responder and the inputs (never
// the AdminApi), as in queue_routes.cc.
//
// A rendering costs in proportion to the whole data set (every provider's queue counts,
// every association's series: 0.2 s and 195 KB at 700 providers and 137,000 queued
// rows), so reader and application tokens are answered the latest one again while it is
// younger than the tunable metrics_cache_interval, with its Age (RFC 9111 §5.1): a
// flood of scrapes costs one rendering per interval (docs/API.md "Expensive reads"). An
// operator's scrape always renders, and its rendering serves the others after it.
#include <memory>
#include <string>

#include <boost/asio/post.hpp>

#include "db/provider_store.h"
#include "db/queue_summary.h"
#include "db/storage_health.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/api/metrics_exposition.h"
#include "npac/npacd/core/throttle_groups.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {

// The latest rendering (API thread only), kept by the AdminApi and by the completions
// that fill it.
struct MetricsRendering {
  std::shared_ptr<const std::string> text;  // nullptr until the first rendering
  db::TimeMs rendered_at = 0;                // the clock when its inputs were read
};

namespace {

// `age_seconds` set: an earlier rendering answered again, with its Age.
HttpResponse metricsResponse(const std::string& text, std::optional<db::TimeMs> age_seconds = std::nullopt) {
  HttpResponse response{http::status::ok, 11};
  // The exposition format's media type (Prometheus "Exposition formats", text 0.0.4).
  response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
  if (age_seconds) response.set(http::field::age, std::to_string(*age_seconds));
  response.body() = text;
  response.prepare_payload();
  return response;
}

// Renders `in`, keeps it as the latest rendering and answers it.
void answerRendering(const MetricsInputs& in, MetricsRendering& latest, const Responder& answer) {
  auto text = std::make_shared<const std::string>(renderMetrics(in));
  if (in.now >= latest.rendered_at) {
    latest.text = text;
    latest.rendered_at = in.now;
  }
  answer(metricsResponse(*text));
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
  const db::TimeMs now = clock_();
  if (metrics_rendering_ == nullptr) metrics_rendering_ = std::make_shared<MetricsRendering>();
  const std::shared_ptr<MetricsRendering> latest = metrics_rendering_;
  const db::TimeMs interval_ms = registry_.get(tunables::kMetricsCacheInterval).count();
  if (r.token_role != db::TokenRole::kOperator && interval_ms > 0 && latest->text != nullptr &&
      now >= latest->rendered_at && now - latest->rendered_at < interval_ms) {
    return respond(metricsResponse(*latest->text, (now - latest->rendered_at) / 1000));
  }
  auto in = std::make_shared<MetricsInputs>();
  in->now = now;
  in->process_start_seconds = static_cast<double>(started_at_) / 1000.0;
  const db::StorageHealth& health = db::StorageHealth::process();
  in->storage_failing = health.failing();
  in->storage_failures = health.failuresSinceHealthy();
  if (writer_ != nullptr) in->writer = writer_->metrics();
  if (checkpointer_ != nullptr) in->checkpointer = checkpointer_->metrics();
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
  const ExpensiveReadCounters expensive = expensive_reads_.counters();
  in->api_refusals.emplace_back("expensive-read-rate", expensive.refused_rate);
  in->api_refusals.emplace_back("expensive-read-waiting", expensive.refused_waiting);
  in->api_connections_closed = {{"idle-for-room", http_counters.closed_idle_for_room},
                                {"slow-stream", http_counters.streams_closed_slow}};
  if (api_certificate_) in->api_certificate = *api_certificate_;
  if (throttle_groups_ != nullptr) {
    for (const auto& group : throttle_groups_->all()) in->throttle_groups.push_back(group->view(throttle_groups_->clock().now()));
  }
  // The queue counts: while storage fails they are left out (an unreadable file answers
  // nothing true), and npacd_storage_writable says why.
  db::ProviderStore providers(db_);
  if (db::Result<std::vector<db::ServiceProvider>> list = providers.list(); list.isOk()) {
    for (const db::ServiceProvider& provider : list.value()) {
      in->provisioned.push_back(provider.spid);
      // Only the oldest queued row is shown: the acknowledged groups' oldest is not looked for.
      db::Result<db::QueueSummary> summary = db::summarizeQueue(db_, provider.spid, db::SummaryOldest::kQueued);
      if (summary.isOk()) in->queues.emplace_back(provider.spid, std::move(summary).value());
    }
  }
  if (core_ == nullptr) return answerRendering(*in, *latest, respond);
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->metrics(/*providers=*/true, [io, answer, in, latest](db::Result<CoreMetrics> core) mutable {
    boost::asio::post(*io, [answer = std::move(answer), in = std::move(in), latest = std::move(latest),
                            core = std::move(core)]() {
      // A core that did not answer leaves its families out (npacd_core_up 0).
      if (core.isOk()) in->core = &core.value();
      answerRendering(*in, *latest, answer);
    });
  });
}

}  // namespace npac::npacd
