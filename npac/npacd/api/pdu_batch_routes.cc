// POST /v1/pdu-batches: messages the application already encoded (pdu_batch.h), queued
// exactly as POST /v1/messages queues them — every record checked first, one submission
// to the core's group commit, and the ids answered only after the COMMIT.
#include <span>

#include "npac/npacd/api/pdu_batch.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

using nlohmann::json;

// Reached only with a PDU batch body: the route says RouteBody::kPduBatch, and handle()
// answers any other body 415.
void submitPduBatch(ApiContext& api, ApiRequest& r, ApiResponder& respond) {
  const auto* octets = reinterpret_cast<const std::uint8_t*>(r.raw_body.data());
  Result<std::vector<OutboundMessage>> parsed = parsePduBatch(std::span(octets, r.raw_body.size()));
  if (!parsed.isOk()) return respond(statusResponse(parsed.status()));
  if (ApiResponse error; !requireProviders(api, parsed.value(), &error)) return respond(std::move(error));
  if (api.core == nullptr) return respond(coreUnavailable());
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->submit(std::move(parsed).value(), [post, answer](db::Result<std::vector<db::AppendOutcome>> outcomes) mutable {
    post([answer = std::move(answer), outcomes = std::move(outcomes)]() {
      if (!outcomes.isOk()) return answer(statusResponse(outcomes.status()));
      // The ids in record order, and the records that repeated a stored message (same
      // provider, idempotency key and content): 201 when a row was added, else 200.
      json ids = json::array(), duplicates = json::array();
      for (std::size_t i = 0; i < outcomes->size(); ++i) {
        ids.push_back((*outcomes)[i].id);
        if ((*outcomes)[i].duplicate) duplicates.push_back(i);
      }
      const bool created = duplicates.size() < outcomes->size();
      answer(jsonResponse(created ? ApiStatus::kCreated : ApiStatus::kOk,
                          {{"ids", std::move(ids)}, {"duplicates", std::move(duplicates)}}));
    });
  });
}

}  // namespace npac::npacd
