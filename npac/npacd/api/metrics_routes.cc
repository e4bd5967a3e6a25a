// GET /metrics: npacd's metrics in the Prometheus text format 0.0.4 (docs/API.md
// "Metrics", docs/OPERATIONS.md "Metrics"). Each owner is asked for a snapshot on its own
// thread: the queue counts from SQLite here on the API thread (db::summarizeQueue per
// provisioned provider, the counts of GET /v1/providers/{spid}/queue), the QueueWriter's
// under its lock, the core's through CoreService::metrics() on the core thread, whose
// completion is posted back here and captures only the ApiResponder and the inputs (never
// the ApiContext), as in queue_routes.cc.
//
// A rendering costs in proportion to the whole data set (every provider's queue counts,
// every association's series: 0.2 s and 195 KB at 700 providers and 137,000 queued
// rows), so reader and application tokens are answered the latest one again while it is
// younger than the tunable metrics_cache_interval, with its Age (RFC 9111 §5.1): a
// flood of scrapes costs one rendering per interval (docs/API.md "Expensive reads"). An
// operator's scrape always renders, and its rendering serves the others after it.
#include <memory>
#include <string>

#include "db/provider_store.h"
#include "db/queue_summary.h"
#include "db/storage_health.h"
#include "npac/npacd/api/metrics_exposition.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/throttle_groups.h"
#include "tunables/registry.h"

namespace npac::npacd {

// The latest rendering (API thread only), kept by the ApiContext and by the completions
// that fill it.
struct MetricsRendering {
  std::shared_ptr<const std::string> text;  // nullptr until the first rendering
  db::TimeMs rendered_at = 0;                // the clock when its inputs were read
};

namespace {

// `age_seconds` set: an earlier rendering answered again, with its Age.
ApiResponse metricsResponse(const std::string& text, std::optional<db::TimeMs> age_seconds = std::nullopt) {
  ApiResponse response;
  // The exposition format's media type (Prometheus "Exposition formats", text 0.0.4).
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  if (age_seconds) response.set("Age", std::to_string(*age_seconds));
  response.body = text;
  return response;
}

// Renders `in`, keeps it as the latest rendering and answers it.
void answerRendering(const MetricsInputs& in, MetricsRendering& latest, const ApiResponder& answer) {
  auto text = std::make_shared<const std::string>(renderMetrics(in));
  if (in.now >= latest.rendered_at) {
    latest.text = text;
    latest.rendered_at = in.now;
  }
  answer(metricsResponse(*text));
}

// What a rendering shows but the core's part, read now on the API thread.
std::shared_ptr<MetricsInputs> readInputs(ApiContext& api, db::TimeMs now) {
  auto in = std::make_shared<MetricsInputs>();
  in->now = now;
  in->process_start_seconds = static_cast<double>(api.started_at) / 1000.0;
  const db::StorageHealth& health = db::StorageHealth::process();
  in->storage_failing = health.failing();
  in->storage_failures = health.failuresSinceHealthy();
  if (api.writer != nullptr) in->writer = api.writer->metrics();
  if (api.checkpointer != nullptr) in->checkpointer = api.checkpointer->metrics();
  // Refusals before a handler ran: the access control's 401/403 (access.h), the HTTP
  // server's connection limits and TLS handshakes (http_server.h) and the expensive
  // reads' 429s (expensive_reads.h); connections the server closed itself.
  if (api.server_counts) {
    ApiServerCounts counts = api.server_counts();
    in->api_refusals = std::move(counts.refusals);
    in->api_connections_closed = std::move(counts.connections_closed);
  }
  if (api.api_certificate) in->api_certificate = *api.api_certificate;
  if (api.throttle_groups != nullptr) {
    for (const auto& group : api.throttle_groups->all()) {
      in->throttle_groups.push_back(group->view(api.throttle_groups->clock().now()));
    }
  }
  // The queue counts: while storage fails they are left out (an unreadable file answers
  // nothing true), and npacd_storage_writable says why.
  db::ProviderStore providers(api.db);
  if (db::Result<std::vector<db::ServiceProvider>> list = providers.list(); list.isOk()) {
    for (const db::ServiceProvider& provider : list.value()) {
      in->provisioned.push_back(provider.spid);
      // Only the oldest queued row is shown: the acknowledged groups' oldest is not looked for.
      db::Result<db::QueueSummary> summary = db::summarizeQueue(api.db, provider.spid, db::SummaryOldest::kQueued);
      if (summary.isOk()) in->queues.emplace_back(provider.spid, std::move(summary).value());
    }
  }
  return in;
}

}  // namespace

void scrapeMetrics(ApiContext& api, ApiRequest& r, ApiResponder& respond) {
  // The exposition takes no parameters; a scraper configured with some (`params:`) is
  // told so rather than answered as if they had an effect.
  if (!r.query.empty()) {
    return respond(errorResponse(ApiStatus::kBadRequest, "bad_query",
                                 "GET /metrics takes no query parameters (got '" + r.query.begin()->first +
                                     "'); it always answers every family"));
  }
  const db::TimeMs now = api.clock();
  if (api.metrics_rendering == nullptr) api.metrics_rendering = std::make_shared<MetricsRendering>();
  const std::shared_ptr<MetricsRendering> latest = api.metrics_rendering;
  const db::TimeMs interval_ms = api.registry.get(tunables::kMetricsCacheInterval).count();
  if (r.token_role != db::TokenRole::kOperator && interval_ms > 0 && latest->text != nullptr &&
      now >= latest->rendered_at && now - latest->rendered_at < interval_ms) {
    return respond(metricsResponse(*latest->text, (now - latest->rendered_at) / 1000));
  }
  std::shared_ptr<MetricsInputs> in = readInputs(api, now);
  if (api.core == nullptr) return answerRendering(*in, *latest, respond);
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->metrics(/*providers=*/true, [post, answer, in, latest](db::Result<CoreMetrics> core) mutable {
    post([answer = std::move(answer), in = std::move(in), latest = std::move(latest), core = std::move(core)]() {
      // A core that did not answer leaves its families out (npacd_core_up 0).
      if (core.isOk()) in->core = &core.value();
      answerRendering(*in, *latest, answer);
    });
  });
}

}  // namespace npac::npacd
