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

}  // namespace npac::npacd
