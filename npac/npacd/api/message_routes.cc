// The routes served by the association core (core_service.h): message submission,
// inbound requests and associations; and message status, read from SQLite. Core
// completions arrive on any thread and are posted onto the API thread before the answer
// is built; they capture only the Responder (never the AdminApi), so an answer that comes
// back after the API stopped is dropped harmlessly.
#include <charconv>

#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/queue_view.h"
#include "tunables/value.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

bool parseInt64(const std::string& text, std::int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out >= 0;
}

}  // namespace

void AdminApi::submitMessages(ApiRequest& r, Responder& respond) {
  Parsed<std::vector<OutboundMessage>> parsed = parseMessages(r.body);
  if (!parsed.ok()) return respond(errorResponse(http::status::bad_request, parsed.error.code, parsed.error.message));
  if (HttpResponse error; !requireProviders(r, *parsed.value, &error)) return respond(std::move(error));
  if (core_ == nullptr) return respond(coreUnavailable());
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->submit(std::move(*parsed.value), [io, answer](db::Result<std::vector<db::AppendOutcome>> outcomes) mutable {
    boost::asio::post(*io, [answer = std::move(answer), outcomes = std::move(outcomes)]() {
      if (!outcomes.isOk()) return answer(dbErrorResponse(outcomes.status()));
      // 201 when the submission added a row; 200 when every message was a duplicate of
      // a stored one (a retry of a submission whose answer was lost): nothing created.
      json ids = json::array(), messages = json::array();
      bool created = false;
      for (const db::AppendOutcome& outcome : outcomes.value()) {
        ids.push_back(outcome.id);
        messages.push_back({{"id", outcome.id}, {"duplicate", outcome.duplicate}});
        created = created || !outcome.duplicate;
      }
      answer(jsonResponse(created ? http::status::created : http::status::ok,
                          {{"ids", ids}, {"messages", messages}}));
    });
  });
}

void AdminApi::messageStatus(ApiRequest&, const std::string& id_text, Responder& respond) {
  std::int64_t id = 0;
  if (!parseInt64(id_text, &id)) {
    return respond(
        errorResponse(http::status::bad_request, "invalid_message_id", "'" + id_text + "' is not a message id"));
  }
  db::OutboundQueue queue(db_);
  db::Result<db::QueuedMessage> message = queue.get(id);
  if (!message.isOk()) {
    if (message.status().isNotFound()) {
      return respond(errorResponse(http::status::not_found, "message_not_found",
                                   "no message " + id_text + " (never accepted, or purged after queue_retention)"));
    }
    return respond(dbErrorResponse(message.status()));
  }
  json out = toJson(message.value());
  if (message->state != db::MessageState::kQueued) return respond(jsonResponse(http::status::ok, out));
  // A queued message says why it waits: the core's reason for the function it is routed
  // by (queue_view.h). Without a core, or when the core cannot answer now, it is
  // not-bound: status is read from SQLite and keeps working either way (docs/API.md).
  const associations::AssociationFunction function = waitFunctionOf(message->function_mask);
  if (core_ == nullptr) {
    out["wait_reason"] = *waitReasonFor(nullptr, function);  // always a reason without a view
    return respond(jsonResponse(http::status::ok, out));
  }
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->queueView(message->spid, [io, answer, out, function](db::Result<ProviderQueueView> view) mutable {
    boost::asio::post(*io, [answer = std::move(answer), out = std::move(out), view = std::move(view), function]() mutable {
      std::optional<std::string> reason = waitReasonFor(view.isOk() ? &view.value() : nullptr, function);
      out["wait_reason"] = reason ? json(*reason) : json(nullptr);
      // Held by a throttle: which one and at what level (the provider's throttle group,
      // or its own throttle_* tunables).
      if (reason && *reason == "throttled") out["throttle"] = throttleJson(view.value());
      answer(jsonResponse(http::status::ok, out));
    });
  });
}

void AdminApi::pollInbound(ApiRequest& r, Responder& respond) {
  InboundPoll poll;
  poll.spid = r.queryValue("spid").value_or("");
  if (!poll.spid.empty() && !db::isValidSpid(poll.spid)) {
    return respond(errorResponse(http::status::bad_request, "invalid_spid", "'" + poll.spid + "' is not a SPID"));
  }
  if (auto wait = r.queryValue("wait")) {
    tunables::Duration d{0};
    tunables::Status status = tunables::parseDuration(*wait, &d);
    if (!status.isOk() || d > kMaxInboundWait) {
      return respond(errorResponse(http::status::bad_request, "invalid_wait",
                                   "wait must be a duration 0..60s (\"30s\", \"500ms\"), got '" + *wait + "'"));
    }
    poll.wait = d;
  }
  if (auto max = r.queryValue("max")) {
    std::int64_t n = 0;
    if (!parseInt64(*max, &n) || n < 1 || n > static_cast<std::int64_t>(kMaxInboundBatch)) {
      return respond(errorResponse(http::status::bad_request, "invalid_max", "max must be an integer 1..1000"));
    }
    poll.max = static_cast<std::size_t>(n);
  }
  if (core_ == nullptr) return respond(coreUnavailable());
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->pollInbound(poll, [io, answer](db::Result<std::vector<InboundRequest>> requests) mutable {
    boost::asio::post(*io, [answer = std::move(answer), requests = std::move(requests)]() {
      if (!requests.isOk()) return answer(dbErrorResponse(requests.status()));
      json list = json::array();
      for (const InboundRequest& request : requests.value()) list.push_back(toJson(request));
      answer(jsonResponse(http::status::ok, {{"requests", list}}));
    });
  });
}

void AdminApi::respondInbound(ApiRequest& r, const std::string& id_text, Responder& respond) {
  std::int64_t id = 0;
  if (!parseInt64(id_text, &id)) {
    return respond(errorResponse(http::status::bad_request, "invalid_request_id", "'" + id_text + "' is not a request id"));
  }
  Parsed<InboundResponse> parsed = parseInboundResponse(r.body);
  if (!parsed.ok()) return respond(errorResponse(http::status::bad_request, parsed.error.code, parsed.error.message));
  parsed.value->actor = r.actor();
  if (core_ == nullptr) return respond(coreUnavailable());
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->respond(static_cast<InboundRequestId>(id), std::move(*parsed.value),
                 [io, answer, id_text, id](db::Result<db::MessageId> queued) mutable {
                   boost::asio::post(*io, [answer = std::move(answer), queued = std::move(queued), id_text, id]() {
                     if (queued.status().isNotFound()) {
                       return answer(errorResponse(http::status::not_found, "request_not_found",
                                                   "no unanswered inbound request " + id_text));
                     }
                     if (!queued.isOk()) return answer(dbErrorResponse(queued.status()));
                     // The answer is an outbound message like any other: its id lets the
                     // application follow its delivery with GET /v1/messages/{id}.
                     answer(jsonResponse(http::status::ok,
                                         {{"request", id}, {"committed", true}, {"message_id", queued.value()}}));
                   });
                 });
}

void AdminApi::listAssociations(ApiRequest&, Responder& respond) {
  if (core_ == nullptr) return respond(coreUnavailable());
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->listAssociations([io, answer](db::Result<std::vector<AssociationInfo>> list) mutable {
    boost::asio::post(*io, [answer = std::move(answer), list = std::move(list)]() {
      if (!list.isOk()) return answer(dbErrorResponse(list.status()));
      json out = json::array();
      for (const AssociationInfo& a : list.value()) out.push_back(toJson(a));
      answer(jsonResponse(http::status::ok, {{"associations", out}}));
    });
  });
}

void AdminApi::abortAssociation(ApiRequest& r, const std::string& id_text, Responder& respond) {
  std::int64_t id = 0;
  if (!parseInt64(id_text, &id)) {
    return respond(errorResponse(http::status::bad_request, "invalid_association_id",
                                 "'" + id_text + "' is not an association id"));
  }
  std::string actor = r.actor();
  if (actor.empty()) return respond(actorRequired("aborting an association"));
  if (core_ == nullptr) return respond(coreUnavailable());
  Responder answer = std::move(respond);
  boost::asio::io_context* io = &io_;
  core_->abortAssociation(id, actor, [io, answer, id](db::Status status) mutable {
    boost::asio::post(*io, [answer = std::move(answer), status = std::move(status), id]() {
      if (status.isNotFound()) {
        return answer(errorResponse(http::status::not_found, "association_not_found",
                                    "no live association " + std::to_string(id)));
      }
      if (!status.isOk()) return answer(dbErrorResponse(status));
      answer(jsonResponse(http::status::ok, {{"aborted", id}}));
    });
  });
}

}  // namespace npac::npacd
