// AssociationManager: the CoreService the admin API calls (core_service.h). Every call
// arrives on the API thread and is posted onto the core io_context; completions are
// invoked from the core thread (or the QueueWriter's thread for submit).
#include <algorithm>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "npac/npacd/core/association_manager.h"

#include "db/provider_store.h"
#include "npac/npacd/core/core_shards.h"

namespace npac::npacd {
namespace asio = boost::asio;
namespace as = npac::associations;

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

// ---- CoreService -------------------------------------------------------------------

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

void AssociationManager::submit(std::vector<OutboundMessage> messages, SubmitDone done) {
  submitToQueue(writer_, std::move(messages), std::move(done),
                [this](std::vector<db::QueuedMessage> rows) { announceSubmitted(std::move(rows)); });
}

void AssociationManager::announceSubmitted(std::vector<db::QueuedMessage> rows) {
  asio::post(io_, [this, rows = std::move(rows)]() mutable {
    std::map<std::string, std::vector<db::QueuedMessage>> by_spid;
    for (db::QueuedMessage& row : rows) {
      std::string spid = row.spid;
      by_spid[spid].push_back(std::move(row));
    }
    for (auto& [spid, committed] : by_spid) {
      std::vector<db::MessageId> ids;
      ids.reserve(committed.size());
      for (const db::QueuedMessage& row : committed) ids.push_back(row.id);
      // The store keeps them for delivery whether or not the provider has a core now.
      store_.committed(spid, std::move(committed));
      // A provider that never bound in this run has no core yet: its rows wait queued.
      if (ProviderCore* provider = core(spid)) provider->onSubmitted(ids);
    }
  });
}

void AssociationManager::announceAnswer(db::QueuedMessage row) {
  asio::post(io_, [this, row = std::move(row)]() mutable {
    const std::string spid = row.spid;
    std::vector<db::QueuedMessage> rows;
    rows.push_back(std::move(row));
    store_.committed(spid, std::move(rows));
    // Not onSubmitted(): a provider in recovery is answered, not held (NANC 351).
    wakeDelivery(spid);
  });
}

void AssociationManager::pollInbound(InboundPoll poll, PollDone done) {
  asio::post(io_, [this, poll = std::move(poll), done = std::move(done)]() mutable {
    if (stopping_) {
      done(db::Status::shutdown("npacd is stopping"));
      return;
    }
    inbound_.poll(std::move(poll), std::move(done));
  });
}

void AssociationManager::respond(InboundRequestId id, InboundResponse response, RespondDone done) {
  asio::post(io_, [this, id, response = std::move(response), done = std::move(done)] {
    std::optional<InboundRequest> taken = inbound_.take(id);
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
    writer_.submitCommitted(std::move(rows), [this, request, done](
                                                 db::Result<std::vector<db::AppendOutcome>> outcomes,
                                                 std::vector<db::NewMessage> submitted, db::TimeMs created_at) {
      db::Result<std::vector<db::MessageId>> result =
          outcomes.isOk() ? db::Result<std::vector<db::MessageId>>(std::vector<db::MessageId>{outcomes->front().id})
                          : db::Result<std::vector<db::MessageId>>(outcomes.status());
      if (outcomes.isOk()) {
        // The committed answer goes to its provider's core thread with its PDU, like a
        // submission (DeliveryStore::committed): delivery does not read it back.
        ownerOf(request.spid)
            .announceAnswer(db::committedMessage(std::move(submitted.front()), outcomes->front().id, created_at));
      }
      asio::post(io_, [this, request, done, result = std::move(result)] {
        if (!result.isOk()) {
          const db::Status& status = result.status();
          // Not accepted: the request is open again, so the application may answer again.
          spdlog::error("SPID {}: the answer to inbound request {} was not stored: {}",
                        request.spid, request.id, status.toString());
          inbound_.reopen(request);
          done(status);
          return;
        }
        done(result.value().front());  // one row submitted: one id
      });
    });
  });
}

void AssociationManager::listAssociations(ListDone done) {
  asio::post(io_, [this, done = std::move(done)] {
    std::vector<AssociationInfo> list;
    for (const auto& [spid, provider] : cores_) provider->describe(list);
    for (AssociationInfo& info : list) info.core_thread = shard_index_;
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    done(std::move(list));
  });
}

void AssociationManager::queueView(std::string spid, QueueViewDone done) {
  asio::post(io_, [this, spid = std::move(spid), done = std::move(done)] {
    if (ProviderCore* provider = core(spid)) {
      done(provider->view());
      return;
    }
    ProviderQueueView view;  // never bound in this run: the API reports not-bound
    view.spid = spid;
    view.storage_ok = store_.healthy();
    if (auto group = throttleGroupOf(spid)) view.throttle_group = group->name();
    done(std::move(view));
  });
}

void AssociationManager::egressView(std::string spid, EgressViewDone done) {
  asio::post(io_, [this, spid = std::move(spid), done = std::move(done)] {
    if (ProviderCore* provider = core(spid)) return done(provider->egressView());
    done(db::Status::notFound("SPID " + spid + " has not bound in this run"));
  });
}

void AssociationManager::abortAssociation(db::AssociationId id, std::string actor, StatusDone done) {
  asio::post(io_, [this, id, actor = std::move(actor), done = std::move(done)] {
    for (auto& [spid, provider] : cores_) {
      if (provider->abort(id, "aborted by operator " + actor)) {
        done(db::Status::ok());
        return;
      }
    }
    done(db::Status::notFound("association " + std::to_string(id) + " is not live"));
  });
}

void AssociationManager::releaseProvider(std::string spid, std::string reason, CountDone done) {
  asio::post(io_, [this, spid = std::move(spid), reason = std::move(reason), done = std::move(done)] {
    ProviderCore* provider = core(spid);
    if (provider == nullptr || !provider->bound()) {
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

void AssociationManager::postWakeAll() {
  asio::post(io_, [this] {
    store_.forgetAllReady();
    for (auto& [spid, c] : cores_) wakeDelivery(spid);
  });
}

void AssociationManager::postProviderChanged(std::string spid) {
  asio::post(io_, [this, spid = std::move(spid)] {
    ProviderCore* provider = core(spid);
    if (provider == nullptr || !provider->bound() || provider->allReleasing()) return;
    auto stored = db::ProviderStore(db_).get(spid);
    if (stored.isOk() && stored->enabled) return;
    if (!stored.isOk() && !stored.status().isNotFound()) {
      spdlog::warn("SPID {}: changed on another node, but its record cannot be read: {}", spid,
                   stored.status().toString());
      return;
    }
    spdlog::info("SPID {}: disabled on another npacd node: releasing its {} association(s) once their "
                 "outstanding requests are answered; undelivered messages stay queued",
                 spid, provider->associationCount());
    provider->releaseAll(kReleaseProviderDisabled);
  });
}

void AssociationManager::setCounting(bool on) {
  counting_ = on;
  admission_.setCounting(on);
  for (auto& [spid, provider] : cores_) provider->setCounting(on);
}

void AssociationManager::metrics(bool providers, MetricsDone done) {
  asio::post(io_, [this, providers, done = std::move(done)] {
    CoreMetrics out;
    out.counting = counting_;
    out.listening = !stopping_ && listener_.accepting();
    out.draining = stopping_;
    out.storage_ok = store_.healthy();
    out.delivery_rounds_memory = store_.readyRounds();
    out.delivery_rounds_database = store_.databaseRounds();
    if (providers) {
      const BindAdmission::Counters& binds = admission_.counters();
      out.binds_accepted = binds.accepted;
      out.bind_commits = binds.commits;
      out.binds_refused = binds.refused;
      const Listener::Counters& c = listener_.counters();
      out.connections_accepted = c.accepted;
      out.connections_dropped = c.dropped_over_cap + c.dropped_at_fd_limit + c.shed_at_fd_limit;
      out.bind_timeouts = c.bind_timeouts;
      out.unbound_connections = listener_.unboundCount();
      out.providers.reserve(cores_.size());
      for (auto& [spid, provider] : cores_) out.providers.push_back(provider->metrics());
    }
    done(std::move(out));
  });
}

}  // namespace npac::npacd
