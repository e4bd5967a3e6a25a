// The routes served by the association core (core_service.h): message submission,
// inbound requests and associations; and message status, read from SQLite. Core
// completions arrive on any thread and are posted onto the API thread before the answer
// is built; they capture only the ApiResponder (never the ApiContext), so an answer that
// comes back after the API stopped is dropped harmlessly.
#include <charconv>

#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/queue_view.h"
#include "npac/npacd/core/core_service.h"
#include "tunables/value.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

bool parseInt64(const std::string& text, std::int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out >= 0;
}

}  // namespace

void submitMessages(ApiContext& api, ApiRequest& r, ApiResponder& respond) {
  Result<std::vector<OutboundMessage>> parsed = parseMessages(r.body);
  if (!parsed.isOk()) return respond(statusResponse(parsed.status()));
  if (ApiResponse error; !requireProviders(api, parsed.value(), &error)) return respond(std::move(error));
  if (api.core == nullptr) return respond(coreUnavailable());
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->submit(std::move(parsed).value(), [post, answer](db::Result<std::vector<db::AppendOutcome>> outcomes) mutable {
    post([answer = std::move(answer), outcomes = std::move(outcomes)]() {
      if (!outcomes.isOk()) return answer(statusResponse(outcomes.status()));
      // 201 when the submission added a row; 200 when every message was a duplicate of
      // a stored one (a retry of a submission whose answer was lost): nothing created.
      json ids = json::array(), messages = json::array();
      bool created = false;
      for (const db::AppendOutcome& outcome : outcomes.value()) {
        ids.push_back(outcome.id);
        messages.push_back({{"id", outcome.id}, {"duplicate", outcome.duplicate}});
        created = created || !outcome.duplicate;
      }
      answer(jsonResponse(created ? ApiStatus::kCreated : ApiStatus::kOk,
                          {{"ids", ids}, {"messages", messages}}));
    });
  });
}

void messageStatus(ApiContext& api, ApiRequest&, const std::string& id_text, ApiResponder& respond) {
  std::int64_t id = 0;
  if (!parseInt64(id_text, &id)) {
    return respond(
        errorResponse(ApiStatus::kBadRequest, "invalid_message_id", "'" + id_text + "' is not a message id"));
  }
  db::OutboundQueue queue(api.db);
  db::Result<db::QueuedMessage> message = queue.get(id);
  if (!message.isOk()) {
    if (message.status().isNotFound()) {
      return respond(errorResponse(ApiStatus::kNotFound, "message_not_found",
                                   "no message " + id_text + " (never accepted, or purged after queue_retention)"));
    }
    return respond(statusResponse(message.status()));
  }
  json out = toJson(message.value());
  if (message->state != db::MessageState::kQueued) return respond(jsonResponse(ApiStatus::kOk, out));
  // A queued message says why it waits: the core's reason for the function it is routed
  // by (queue_view.h). Without a core, or when the core cannot answer now, it is
  // not-bound: status is read from SQLite and keeps working either way (docs/API.md).
  const associations::AssociationFunction function = waitFunctionOf(message->function_mask);
  if (api.core == nullptr) {
    out["wait_reason"] = *waitReasonFor(nullptr, function);  // always a reason without a view
    return respond(jsonResponse(ApiStatus::kOk, out));
  }
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->queueView(message->spid, [post, answer, out, function](db::Result<ProviderQueueView> view) mutable {
    post([answer = std::move(answer), out = std::move(out), view = std::move(view), function]() mutable {
      std::optional<std::string> reason = waitReasonFor(view.isOk() ? &view.value() : nullptr, function);
      out["wait_reason"] = reason ? json(*reason) : json(nullptr);
      // Held by a throttle: which one and at what level (the provider's throttle group,
      // or its own throttle_* tunables).
      if (reason && *reason == "throttled") out["throttle"] = throttleJson(view.value());
      answer(jsonResponse(ApiStatus::kOk, out));
    });
  });
}

void pollInbound(ApiContext& api, ApiRequest& r, ApiResponder& respond) {
  InboundPoll poll;
  poll.spid = r.queryValue("spid").value_or("");
  if (!poll.spid.empty() && !db::isValidSpid(poll.spid)) {
    return respond(errorResponse(ApiStatus::kBadRequest, "invalid_spid", "'" + poll.spid + "' is not a SPID"));
  }
  if (auto wait = r.queryValue("wait")) {
    tunables::Duration d{0};
    tunables::Status status = tunables::parseDuration(*wait, &d);
    if (!status.isOk() || d > kMaxInboundWait) {
      return respond(errorResponse(ApiStatus::kBadRequest, "invalid_wait",
                                   "wait must be a duration 0..60s (\"30s\", \"500ms\"), got '" + *wait + "'"));
    }
    poll.wait = d;
  }
  if (auto max = r.queryValue("max")) {
    std::int64_t n = 0;
    if (!parseInt64(*max, &n) || n < 1 || n > static_cast<std::int64_t>(kMaxInboundBatch)) {
      return respond(errorResponse(ApiStatus::kBadRequest, "invalid_max", "max must be an integer 1..1000"));
    }
    poll.max = static_cast<std::size_t>(n);
  }
  if (api.core == nullptr) return respond(coreUnavailable());
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->pollInbound(poll, [post, answer](db::Result<std::vector<InboundRequest>> requests) mutable {
    post([answer = std::move(answer), requests = std::move(requests)]() {
      if (!requests.isOk()) return answer(statusResponse(requests.status()));
      json list = json::array();
      for (const InboundRequest& request : requests.value()) list.push_back(toJson(request));
      answer(jsonResponse(ApiStatus::kOk, {{"requests", list}}));
    });
  });
}

void respondInbound(ApiContext& api, ApiRequest& r, const std::string& id_text, ApiResponder& respond) {
  std::int64_t id = 0;
  if (!parseInt64(id_text, &id)) {
    return respond(errorResponse(ApiStatus::kBadRequest, "invalid_request_id", "'" + id_text + "' is not a request id"));
  }
  Result<InboundResponse> parsed = parseInboundResponse(r.body);
  if (!parsed.isOk()) return respond(statusResponse(parsed.status()));
  parsed->actor = r.actor();
  if (api.core == nullptr) return respond(coreUnavailable());
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->respond(static_cast<InboundRequestId>(id), std::move(parsed).value(),
                    [post, answer, id_text, id](db::Result<db::MessageId> queued) mutable {
                      post([answer = std::move(answer), queued = std::move(queued), id_text, id]() {
                        if (queued.status().isNotFound()) {
                          return answer(errorResponse(ApiStatus::kNotFound, "request_not_found",
                                                      "no unanswered inbound request " + id_text));
                        }
                        if (!queued.isOk()) return answer(statusResponse(queued.status()));
                        // The answer is an outbound message like any other: its id lets the
                        // application follow its delivery with GET /v1/messages/{id}.
                        answer(jsonResponse(ApiStatus::kOk,
                                            {{"request", id}, {"committed", true}, {"message_id", queued.value()}}));
                      });
                    });
}

void listAssociations(ApiContext& api, ApiRequest&, ApiResponder& respond) {
  if (api.core == nullptr) return respond(coreUnavailable());
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->listAssociations([post, answer](db::Result<std::vector<AssociationInfo>> list) mutable {
    post([answer = std::move(answer), list = std::move(list)]() {
      if (!list.isOk()) return answer(statusResponse(list.status()));
      json out = json::array();
      for (const AssociationInfo& a : list.value()) out.push_back(toJson(a));
      answer(jsonResponse(ApiStatus::kOk, {{"associations", out}}));
    });
  });
}

void abortAssociation(ApiContext& api, ApiRequest& r, const std::string& id_text, ApiResponder& respond) {
  std::int64_t id = 0;
  if (!parseInt64(id_text, &id)) {
    return respond(errorResponse(ApiStatus::kBadRequest, "invalid_association_id",
                                 "'" + id_text + "' is not an association id"));
  }
  std::string actor = r.actor();
  if (actor.empty()) return respond(actorRequired("aborting an association"));
  if (api.core == nullptr) return respond(coreUnavailable());
  ApiResponder answer = std::move(respond);
  PostToApiThread post = api.post;
  api.core->abortAssociation(id, actor, [post, answer, id](db::Status status) mutable {
    post([answer = std::move(answer), status = std::move(status), id]() {
      if (status.isNotFound()) {
        return answer(errorResponse(ApiStatus::kNotFound, "association_not_found",
                                    "no live association " + std::to_string(id)));
      }
      if (!status.isOk()) return answer(statusResponse(status));
      answer(jsonResponse(ApiStatus::kOk, {{"aborted", id}}));
    });
  });
}

}  // namespace npac::npacd
