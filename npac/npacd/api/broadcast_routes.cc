// POST /v1/broadcasts (broadcast.h): one message for many providers, answered once every
// provider's row is committed. The recipients are resolved from SQLite on the API thread;
// the rows go to the core as ONE CoreService::submit, which the QueueWriter commits whole
// (one savepoint: all rows or none), and the answer is built only from its completion,
// posted back onto the API thread (core_service.h). The completion captures only the
// ApiResponder, as the message routes' do.
#include "db/provider_store.h"
#include "npac/npacd/api/broadcast.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

using nlohmann::json;

void submitBroadcast(ApiContext& api, ApiRequest& r, ApiResponder& respond) {
  Result<BroadcastRequest> parsed = parseBroadcast(r.body);
  if (!parsed.isOk()) return respond(statusResponse(parsed.status()));
  db::ProviderStore store(api.db);
  db::Result<std::vector<db::ServiceProvider>> provisioned = store.list();
  if (!provisioned.isOk()) return respond(statusResponse(provisioned.status()));
  Result<std::vector<std::string>> recipients = resolveRecipients(parsed.value(), provisioned.value());
  if (!recipients.isOk()) return respond(statusResponse(recipients.status()));
  if (api.core == nullptr) return respond(coreUnavailable());
  std::vector<OutboundMessage> rows = broadcastMessages(parsed.value(), recipients.value());
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->submit(std::move(rows), [post, answer, spids = std::move(recipients).value()](
                                        db::Result<std::vector<db::AppendOutcome>> outcomes) mutable {
    post([answer = std::move(answer), spids = std::move(spids), outcomes = std::move(outcomes)]() {
      if (!outcomes.isOk()) return answer(statusResponse(outcomes.status()));
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
      answer(jsonResponse(created ? ApiStatus::kCreated : ApiStatus::kOk,
                          {{"providers", messages.size()}, {"messages", messages}}));
    });
  });
}

}  // namespace npac::npacd
