// GET /health and GET /ready (docs/API.md "Health and readiness"), cheap and without a
// token, for process supervisors and load balancers (the split of Envoy's /ready and a
// liveness probe).
//
//   /health  200 "alive": the API thread answers. No provider data, no database access.
//   /ready   200 "ready" only when (1) the database takes writes — the process-wide
//            storage health (db/storage_health.h: the last write that reached the file
//            or the storage failure after it, named; a PostgreSQL server that does not
//            answer, and for how long; no write per probe) and the core's
//            DeliveryStore backlog —, (2) the association listener is accepting, and
//            (3) npacd is not draining at shutdown. Otherwise 503 naming each failing
//            condition. The core's part comes from CoreService::metrics(providers=false),
//            which answers from the core thread: a core that cannot run a posted handler
//            is not ready either (the probe's own timeout says so).
//            A warning follows the first line when something is wrong that does not
//            stop npacd serving associations: "warning: api-certificate: ..." while the
//            admin API's TLS certificate is expired or not yet valid (tls_context.h).
#include <string>
#include <vector>

#include "db/storage_health.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

namespace {

ApiResponse textResponse(ApiStatus status, std::string body) {
  ApiResponse response;
  response.status = status;
  response.content_type = "text/plain; charset=utf-8";
  response.set("Cache-Control", "no-store");
  response.body = std::move(body);
  return response;
}

ApiResponse readiness(const std::vector<std::string>& failing, const std::vector<std::string>& warnings) {
  std::string body = failing.empty() ? "ready" : "not ready:";
  for (const std::string& f : failing) body += "\n  " + f;
  for (const std::string& w : warnings) body += "\nwarning: " + w;
  return textResponse(failing.empty() ? ApiStatus::kOk : ApiStatus::kServiceUnavailable, body + "\n");
}

}  // namespace

ApiResponse healthProbe(ApiContext&, ApiRequest&) { return textResponse(ApiStatus::kOk, "alive\n"); }

void readyProbe(ApiContext& api, ApiRequest&, ApiResponder& respond) {
  std::vector<std::string> failing;
  std::vector<std::string> warnings;
  if (api.api_certificate) {
    if (std::optional<std::string> problem = certificateValidityProblem(*api.api_certificate, api.clock())) {
      warnings.push_back("api-certificate: " + *problem);
    }
  }
  const db::StorageHealth& storage = db::StorageHealth::process();
  if (storage.failing()) {
    failing.push_back("database-writable: the database refuses writes (" +
                      std::to_string(storage.failuresSinceHealthy()) +
                      " storage failure(s) since it was last writable): " + storage.cause());
  }
  if (api.core == nullptr) {
    failing.push_back("core: the association core is not attached");
    return respond(readiness(failing, warnings));
  }
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->metrics(/*providers=*/false, [post, answer, failing, warnings](db::Result<CoreMetrics> core) mutable {
    post([answer = std::move(answer), failing = std::move(failing), warnings = std::move(warnings),
          core = std::move(core)]() mutable {
      if (!core.isOk()) {
        failing.push_back("core: " + core.status().toString());
      } else {
        const CoreMetrics& c = core.value();
        if (c.draining) failing.push_back("draining: npacd is shutting down");
        if (!c.listening && !c.draining) failing.push_back("listener: the association listener is not accepting");
        const bool storage_named = !failing.empty() && failing.front().starts_with("database-writable");
        if (!c.storage_ok && !storage_named) {
          failing.push_back("database-writable: delivery progress is waiting to be written (the core's "
                            "delivery store is unhealthy)");
        }
      }
      answer(readiness(failing, warnings));
    });
  });
}

}  // namespace npac::npacd
