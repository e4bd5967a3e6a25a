// CoreFacade: the CoreService (core_service.h) of one core thread — the admin API's
// entry into an AssociationManager. Each call arrives on the API thread, is posted onto
// the manager's io_context and there reads or changes the manager's parts it is given
// (CoreFacade::Parts): its providers' cores, its InboundBroker, its DeliveryStore, its
// Listener and bind counters. The facade keeps no state of its own.
//
// Threading: every method may be called from any thread (the API's in npacd) and only
// posts; the work runs on the manager's core thread, so it never races the manager's own
// work. Completions are invoked from the core thread, or from the QueueWriter's thread
// for submit(). With npacd --threads N, CoreShards is the API's CoreService and calls
// each manager's facade (core_shards.h).
//
// Every AssociationManager owns one CoreFacade (AssociationManager::service()); that is
// what is handed to the API (AdminApi::attachCore) or to CoreShards. The manager and its
// parts outlive the facade's posted work as they outlive every post onto its io_context.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "db/queue_writer.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

class BindAdmission;
class CoreInbox;
class DeliveryStore;
class InboundBroker;
class Listener;
class ProviderCores;
class ShardRoute;

// Commits `messages` through `writer` as one submission (CoreService::submit), completes
// `done`, then hands the rows it added (not the duplicates) to `announce` — on the
// QueueWriter's thread. The one body of CoreFacade::submit and CoreShards::submit.
using AnnounceSubmitted = std::function<void(std::vector<db::QueuedMessage> rows)>;
void submitToQueue(db::QueueWriter& writer, std::vector<OutboundMessage> messages,
                   CoreService::SubmitDone done, AnnounceSubmitted announce);

class CoreFacade : public CoreService {
 public:
  // The parts of the manager the facade answers from; every one outlives the facade and
  // is only touched on the core thread (`io`'s), except `writer` and `self`'s
  // thread-safe posts.
  struct Parts {
    boost::asio::io_context& io;
    db::QueueWriter& writer;
    CoreInbox& inbox;  // the manager's thread-safe posts (announceSubmitted)
    const ShardRoute& route;
    ProviderCores& providers;
    InboundBroker& inbound;
    DeliveryStore& store;
    const Listener& listener;
    const BindAdmission& admission;
    const bool& stopping;  // the manager's: shutdown() began
  };

  explicit CoreFacade(const Parts& parts) : parts_(parts) {}
  ~CoreFacade() override = default;
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

 private:
  Parts parts_;
};

}  // namespace npac::npacd
