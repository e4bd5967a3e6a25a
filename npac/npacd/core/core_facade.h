// CoreFacade: the CoreService (core_service.h) of one core thread — the admin API's
// entry into an AssociationManager. Each call arrives on the API thread, is posted onto
// the manager's io_context and there reads or changes what the manager keeps: its
// providers' cores, its InboundBroker, its DeliveryStore, its Listener and bind counters.
// The facade keeps no state of its own; it holds only the manager it serves.
//
// Threading: every method may be called from any thread (the API's in npacd) and only
// posts; the work runs on the manager's core thread, so it never races the manager's own
// work. Completions are invoked from the core thread, or from the QueueWriter's thread
// for submit(). With npacd --threads N, CoreShards is the API's CoreService and calls
// each manager's facade (core_shards.h).
//
// Every AssociationManager is its own CoreFacade (a base class): what hands a manager to
// the API (AdminApi::attachCore) hands it as a CoreService. The manager outlives its
// facade's posted work as it outlives every post onto its io_context.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "db/queue_writer.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

class AssociationManager;

// Commits `messages` through `writer` as one submission (CoreService::submit), completes
// `done`, then hands the rows it added (not the duplicates) to `announce` — on the
// QueueWriter's thread. The one body of CoreFacade::submit and CoreShards::submit.
using AnnounceSubmitted = std::function<void(std::vector<db::QueuedMessage> rows)>;
void submitToQueue(db::QueueWriter& writer, std::vector<OutboundMessage> messages,
                   CoreService::SubmitDone done, AnnounceSubmitted announce);

class CoreFacade : public CoreService {
 public:
  CoreFacade(const CoreFacade&) = delete;
  CoreFacade& operator=(const CoreFacade&) = delete;

  void submit(std::vector<OutboundMessage> messages, SubmitDone done) override;
  void pollInbound(InboundPoll poll, PollDone done) override;
  void respond(InboundRequestId id, InboundResponse response, RespondDone done) override;
  void listAssociations(ListDone done) override;
  void queueView(std::string spid, QueueViewDone done) override;
  void egressView(std::string spid, EgressViewDone done) override;
  void abortAssociation(db::AssociationId id, std::string actor, StatusDone done) override;
  void releaseProvider(std::string spid, std::string reason, CountDone done) override;
  void metrics(bool providers, MetricsDone done) override;

 protected:
  // Only an AssociationManager is one: `core` is the manager itself (not constructed
  // yet; the facade only keeps the reference).
  explicit CoreFacade(AssociationManager& core) : core_(core) {}
  ~CoreFacade() override = default;

 private:
  AssociationManager& core_;
};

}  // namespace npac::npacd
