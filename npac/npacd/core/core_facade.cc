// CoreFacade: the CoreService the admin API calls (core_facade.h, core_service.h). Every
// call arrives on the API thread and is posted onto the manager's io_context; completions
// are invoked from the core thread (or the QueueWriter's thread for submit).
#include "npac/npacd/core/core_facade.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "npac/npacd/core/association_manager.h"
#include "npac/npacd/core/bind_admission.h"
#include "npac/npacd/core/core_inbox.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/inbound_broker.h"
#include "npac/npacd/core/listener.h"
#include "npac/npacd/core/provider_cores.h"
#include "npac/npacd/core/shard_route.h"

namespace npac::npacd {
namespace asio = boost::asio;

const char* waitReasonName(WaitReason reason) {
  switch (reason) {
    case WaitReason::kNotBound: return "not-bound";
    case WaitReason::kNoAssociationForFunction: return "no-association-for-function";
    case WaitReason::kAllCongested: return "all-congested";
    case WaitReason::kSilent: return "silent";
    case WaitReason::kRecovering: return "recovering";
    case WaitReason::kThrottled: return "throttled";
    case WaitReason::kReleasing: return "releasing";
    case WaitReason::kStorageUnavailable: return "storage-unavailable";
    case WaitReason::kLeaseNotValid: return "lease-not-valid";
    case WaitReason::kInvokeIdsExhausted: return "invoke-ids-exhausted";
  }
  return "unknown";
}

void submitToQueue(db::QueueWriter& writer, std::vector<OutboundMessage> messages,
                   CoreService::SubmitDone done, AnnounceSubmitted announce) {
  std::vector<db::NewMessage> rows;
  rows.reserve(messages.size());
  for (OutboundMessage& m : messages) rows.push_back(std::move(m.message));
  writer.submitCommitted(std::move(rows), [done = std::move(done), announce = std::move(announce)](
                                              db::Result<std::vector<db::AppendOutcome>> result,
                                              std::vector<db::NewMessage> submitted, db::TimeMs created_at) {
    // Only rows this submission added are new to the core: a duplicate's row was
    // announced when it was first committed (or found at start-up). The messages are
    // handed over as committed rows, their PDUs moved, not copied (core/ready_queue.h).
    std::vector<db::QueuedMessage> added;
    if (result.isOk()) {
      const std::vector<db::AppendOutcome>& outcomes = result.value();
      added.reserve(outcomes.size());
      for (std::size_t i = 0; i < outcomes.size() && i < submitted.size(); ++i) {
        if (outcomes[i].duplicate) continue;
        added.push_back(db::committedMessage(std::move(submitted[i]), outcomes[i].id, created_at));
      }
    }
    done(std::move(result));
    if (!added.empty()) announce(std::move(added));
  });
}

void CoreFacade::submit(std::vector<OutboundMessage> messages, SubmitDone done) {
  submitToQueue(parts_.writer, std::move(messages), std::move(done),
                [this](std::vector<db::QueuedMessage> rows) { parts_.inbox.announceSubmitted(std::move(rows)); });
}

void CoreFacade::pollInbound(InboundPoll poll, PollDone done) {
  asio::post(parts_.io, [this, poll = std::move(poll), done = std::move(done)]() mutable {
    if (parts_.stopping) {
      done(db::Status::shutdown("npacd is stopping"));
      return;
    }
    parts_.inbound.poll(std::move(poll), std::move(done));
  });
}

void CoreFacade::respond(InboundRequestId id, InboundResponse response, RespondDone done) {
  asio::post(parts_.io, [this, id, response = std::move(response), done = std::move(done)] {
    std::optional<InboundRequest> taken = parts_.inbound.take(id);
    if (!taken) {
      done(db::Status::notFound("inbound request " + std::to_string(id) +
                                " unknown or already answered"));
      return;
    }
    InboundRequest request = std::move(*taken);
    // The answer is committed to the outbound queue like any message (nothing lost while
    // the provider has no association, or across a restart), ahead of the provider's
    // queued messages, and leaves through the rotation (NANC 353 7.b.iv), so it may go
    // out on another association than the request came in on. It needs the function of
    // the association the request arrived on (NANC 111).
    db::NewMessage row;
    row.spid = request.spid;
    row.function_mask = 1u << static_cast<unsigned>(routingFunction(request.function_mask));
    row.priority = kResponsePriority;
    row.pdu = encodeInboundResponse(request, response);
    row.kind = db::MessageKind::kResponse;
    row.opcode = static_cast<int>(request.opcode);
    std::vector<db::NewMessage> rows;
    rows.push_back(std::move(row));
    parts_.writer.submitCommitted(std::move(rows), [this, request, done](
                                                       db::Result<std::vector<db::AppendOutcome>> outcomes,
                                                       std::vector<db::NewMessage> submitted, db::TimeMs created_at) {
      db::Result<std::vector<db::MessageId>> result =
          outcomes.isOk() ? db::Result<std::vector<db::MessageId>>(std::vector<db::MessageId>{outcomes->front().id})
                          : db::Result<std::vector<db::MessageId>>(outcomes.status());
      if (outcomes.isOk()) {
        // The committed answer goes to its provider's core thread with its PDU, like a
        // submission (DeliveryStore::committed): delivery does not read it back.
        parts_.route.ownerOf(request.spid)
            .inbox()
            .announceAnswer(db::committedMessage(std::move(submitted.front()), outcomes->front().id, created_at));
      }
      asio::post(parts_.io, [this, request, done, result = std::move(result)] {
        if (!result.isOk()) {
          const db::Status& status = result.status();
          // Not accepted: the request is open again, so the application may answer again.
          spdlog::error("SPID {}: the answer to inbound request {} was not stored: {}",
                        request.spid, request.id, status.toString());
          parts_.inbound.reopen(request);
          done(status);
          return;
        }
        done(result.value().front());  // one row submitted: one id
      });
    });
  });
}

void CoreFacade::listAssociations(ListDone done) {
  asio::post(parts_.io, [this, done = std::move(done)] {
    std::vector<AssociationInfo> list;
    for (const auto& [spid, provider] : parts_.providers.all()) provider->view().describe(list);
    for (AssociationInfo& info : list) info.core_thread = parts_.route.index();
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    done(std::move(list));
  });
}

void CoreFacade::queueView(std::string spid, QueueViewDone done) {
  asio::post(parts_.io, [this, spid = std::move(spid), done = std::move(done)] {
    if (ProviderCore* provider = parts_.providers.find(spid)) {
      done(provider->view().queue());
      return;
    }
    ProviderQueueView view;  // never bound in this run: the API reports not-bound
    view.spid = spid;
    view.storage_ok = parts_.store.healthy();
    if (auto group = parts_.providers.throttleGroupOf(spid)) view.throttle_group = group->name();
    done(std::move(view));
  });
}

void CoreFacade::egressView(std::string spid, EgressViewDone done) {
  asio::post(parts_.io, [this, spid = std::move(spid), done = std::move(done)] {
    if (ProviderCore* provider = parts_.providers.find(spid)) return done(provider->view().egress());
    done(db::Status::notFound("SPID " + spid + " has not bound in this run"));
  });
}

void CoreFacade::abortAssociation(db::AssociationId id, std::string actor, StatusDone done) {
  asio::post(parts_.io, [this, id, actor = std::move(actor), done = std::move(done)] {
    for (auto& [spid, provider] : parts_.providers.all()) {
      if (provider->abort(id, "aborted by operator " + actor)) {
        done(db::Status::ok());
        return;
      }
    }
    done(db::Status::notFound("association " + std::to_string(id) + " is not live"));
  });
}

void CoreFacade::releaseProvider(std::string spid, std::string reason, CountDone done) {
  asio::post(parts_.io, [this, spid = std::move(spid), reason = std::move(reason), done = std::move(done)] {
    ProviderCore* provider = parts_.providers.find(spid);
    if (provider == nullptr || provider->associationCount() == 0) {
      done(0);
      return;
    }
    spdlog::info("SPID {}: {}: releasing its {} association(s) once their outstanding requests "
                 "are answered; undelivered messages stay queued",
                 spid, reason, provider->associationCount());
    // The only caller is disabling the provider (AdminApi); `reason` names the actor.
    done(provider->releaseAll(kReleaseProviderDisabled));
  });
}

void CoreFacade::metrics(bool providers, MetricsDone done) {
  asio::post(parts_.io, [this, providers, done = std::move(done)] {
    CoreMetrics out;
    out.counting = parts_.providers.counting();
    out.listening = !parts_.stopping && parts_.listener.accepting();
    out.draining = parts_.stopping;
    out.storage_ok = parts_.store.healthy();
    const DeliveryStore::Figures store = parts_.store.figures();
    out.delivery_rounds_memory = store.ready_rounds;
    out.delivery_rounds_database = store.database_rounds;
    if (providers) {
      const BindAdmission::Counters& binds = parts_.admission.counters();
      out.binds_accepted = binds.accepted;
      out.bind_commits = binds.commits;
      out.binds_refused = binds.refused;
      const Listener::Counters& c = parts_.listener.counters();
      out.connections_accepted = c.accepted;
      out.connections_dropped = c.dropped_over_cap + c.dropped_at_fd_limit + c.shed_at_fd_limit;
      out.bind_timeouts = c.bind_timeouts;
      out.unbound_connections = parts_.listener.unboundCount();
      out.providers.reserve(parts_.providers.all().size());
      for (auto& [spid, provider] : parts_.providers.all()) out.providers.push_back(provider->view().metrics());
    }
    done(std::move(out));
  });
}

}  // namespace npac::npacd
