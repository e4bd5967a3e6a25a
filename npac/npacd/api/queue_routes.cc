// GET /v1/providers/{spid}/queue: a provider's queue for operators (docs/API.md "Provider
// queue"). The counts come from SQLite on the API thread (db::summarizeQueue); the live
// part (wait reasons, throttle, storage, load per association) from the core's
// queueView(), whose completion is posted back onto the API thread and captures only the
// ApiResponder, the counts and the clock (never the ApiContext), as in message_routes.cc.
#include "db/queue_summary.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/queue_view.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/core/core_service.h"
#include "tunables/registry.h"

namespace npac::npacd {

void providerQueue(ApiContext& api, ApiRequest&, const std::string& spid, ApiResponder& respond) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return respond(std::move(error));
  db::Result<db::QueueSummary> summary = db::summarizeQueue(api.db, spid);
  if (!summary.isOk()) return respond(statusResponse(summary.status()));
  // Without a core the counts still answer; every queued function then waits for
  // not-bound, and what only the core knows is null.
  if (api.core == nullptr) {
    return respond(jsonResponse(ApiStatus::kOk, queueViewJson(spid, summary.value(), nullptr, api.clock())));
  }
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->queueView(spid, [post, answer, spid, counts = std::move(summary).value(),
                             clock = api.clock](db::Result<ProviderQueueView> view) mutable {
    post([answer = std::move(answer), spid = std::move(spid), counts = std::move(counts), clock = std::move(clock),
          view = std::move(view)]() {
      if (!view.isOk()) return answer(statusResponse(view.status()));
      answer(jsonResponse(ApiStatus::kOk, queueViewJson(spid, counts, &view.value(), clock())));
    });
  });
}

void providerEgress(ApiContext& api, ApiRequest&, const std::string& spid, ApiResponder& respond) {
  ApiResponse error;
  if (!requireProvider(api, spid, &error)) return respond(std::move(error));
  // What a provider that has not bound in this run shows: its egress_policy tunable.
  std::string provisioned;
  if (!api.registry.getText("egress_policy", spid, &provisioned).isOk()) provisioned.clear();
  const auto notBound = [spid, provisioned] {
    ProviderEgressView view;
    view.spid = spid;
    view.policy = provisioned;
    return view;
  };
  if (api.core == nullptr) return respond(jsonResponse(ApiStatus::kOk, toJson(notBound(), false)));
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->egressView(spid, [post, answer, notBound](db::Result<ProviderEgressView> view) mutable {
    post([answer = std::move(answer), notBound, view = std::move(view)]() {
      if (view.status().isNotFound()) return answer(jsonResponse(ApiStatus::kOk, toJson(notBound(), false)));
      if (!view.isOk()) return answer(statusResponse(view.status()));
      answer(jsonResponse(ApiStatus::kOk, toJson(view.value(), true)));
    });
  });
}

}  // namespace npac::npacd
