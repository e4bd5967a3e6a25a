// GET /v1/providers/{spid}/queue: a provider's queue for operators (docs/API.md "Provider
// queue"). The counts come from SQLite on the API thread (db::summarizeQueue); the live
// part (wait reasons, throttle, storage, load per association) from the core's
// queueView(), whose completion is posted back onto the API thread and captures only the
// Responder, the counts and the clock (never the AdminApi), as in message_routes.cc.
#include <boost/asio/post.hpp>

#include "db/queue_summary.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/api/queue_view.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {

void AdminApi::providerQueue(ApiRequest& r, const std::string& spid, Responder& respond) {
  HttpResponse error;
  if (!requireProvider(r, spid, &error)) return respond(std::move(error));
  db::Result<db::QueueSummary> summary = db::summarizeQueue(db_, spid);
  if (!summary.isOk()) return respond(dbErrorResponse(summary.status()));
  // Without a core the counts still answer; every queued function then waits for
  // not-bound, and what only the core knows is null.
  if (core_ == nullptr) {
    return respond(jsonResponse(http::status::ok, queueViewJson(spid, summary.value(), nullptr, clock_())));
  }
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->queueView(spid, [io, answer, spid, counts = std::move(summary).value(),
                          clock = clock_](db::Result<ProviderQueueView> view) mutable {
    boost::asio::post(*io, [answer = std::move(answer), spid = std::move(spid), counts = std::move(counts),
                            clock = std::move(clock), view = std::move(view)]() {
      if (!view.isOk()) return answer(dbErrorResponse(view.status()));
      answer(jsonResponse(http::status::ok, queueViewJson(spid, counts, &view.value(), clock())));
    });
  });
}

void AdminApi::providerEgress(ApiRequest& r, const std::string& spid, Responder& respond) {
  HttpResponse error;
  if (!requireProvider(r, spid, &error)) return respond(std::move(error));
  // What a provider that has not bound in this run shows: its egress_policy tunable.
  std::string provisioned;
  if (!registry_.getText("egress_policy", spid, &provisioned).isOk()) provisioned.clear();
  const auto notBound = [spid, provisioned] {
    ProviderEgressView view;
    view.spid = spid;
    view.policy = provisioned;
    return view;
  };
  if (core_ == nullptr) return respond(jsonResponse(http::status::ok, toJson(notBound(), false)));
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->egressView(spid, [io, answer, notBound](db::Result<ProviderEgressView> view) mutable {
    boost::asio::post(*io, [answer = std::move(answer), notBound, view = std::move(view)]() {
      if (view.status().isNotFound()) return answer(jsonResponse(http::status::ok, toJson(notBound(), false)));
      if (!view.isOk()) return answer(dbErrorResponse(view.status()));
      answer(jsonResponse(http::status::ok, toJson(view.value(), true)));
    });
  });
}

}  // namespace npac::npacd
