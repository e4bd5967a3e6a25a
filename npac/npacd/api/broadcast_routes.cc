// POST /v1/broadcasts (broadcast.h): one message for many providers, answered once every
// provider's row is committed. The recipients are resolved from SQLite on the API thread;
// the rows go to the core as ONE CoreService::submit, which the QueueWriter commits whole
// (one savepoint: all rows or none), and the answer is built only from its completion,
// posted back onto the API thread (core_service.h). The completion captures only the
// Responder, as the message routes' do.
#include <boost/asio/post.hpp>

#include "db/provider_store.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/api/broadcast.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {

using nlohmann::json;

void AdminApi::submitBroadcast(ApiRequest& r, Responder& respond) {
  Parsed<BroadcastRequest> parsed = parseBroadcast(r.body);
  if (!parsed.ok()) {
    const http::status status = parsed.error.code == "too_many_recipients" ? http::status::payload_too_large
                                                                           : http::status::bad_request;
    return respond(errorResponse(status, parsed.error.code, parsed.error.message));
  }
  db::ProviderStore store(db_);
  db::Result<std::vector<db::ServiceProvider>> provisioned = store.list();
  if (!provisioned.isOk()) return respond(dbErrorResponse(provisioned.status()));
  BroadcastRecipients recipients = resolveRecipients(*parsed.value, provisioned.value());
  if (!recipients.ok()) {
    return respond(errorResponse(static_cast<http::status>(*recipients.status), recipients.error.code,
                                 recipients.error.message));
  }
  if (core_ == nullptr) return respond(coreUnavailable());
  std::vector<OutboundMessage> rows = broadcastMessages(*parsed.value, recipients.spids);
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->submit(std::move(rows), [io, answer, spids = std::move(recipients.spids)](
                                     db::Result<std::vector<db::AppendOutcome>> outcomes) mutable {
    boost::asio::post(*io, [answer = std::move(answer), spids = std::move(spids), outcomes = std::move(outcomes)]() {
      if (!outcomes.isOk()) return answer(dbErrorResponse(outcomes.status()));
      // As POST /v1/messages: 201 when a row was added, 200 when every provider's row was
      // already stored under the idempotency key (a retry of a broadcast whose answer was
      // lost), so nothing was created.
      json messages = json::array();
      bool created = false;
      for (std::size_t i = 0; i < outcomes.value().size() && i < spids.size(); ++i) {
        const db::AppendOutcome& outcome = outcomes.value()[i];
        messages.push_back({{"spid", spids[i]}, {"id", outcome.id}, {"duplicate", outcome.duplicate}});
        created = created || !outcome.duplicate;
      }
      answer(jsonResponse(created ? http::status::created : http::status::ok,
                          {{"providers", messages.size()}, {"messages", messages}}));
    });
  });
}

}  // namespace npac::npacd
