// InboundBroker: the providers' requests for the NPAC application (CoreService
// pollInbound/respond), between their arrival on an association and the application's
// answer. A request waits until a long poll takes it (each request to one poll only,
// oldest first, a poll's SPID filter honoured), then stays open until answered.
//
// The requests live in memory only — the provider retries an unanswered ROSE Invoke, and
// the answer itself is committed to the durable queue by the AssociationManager — so at
// stop every poll is answered kShutdown and each provider whose requests are left is
// named in a warning (reportUnanswered).
//
// Threading: the core thread of shard 0 (AssociationManager posts every call there);
// not synchronised. The poll timers are made from the TimerFactory given.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>


#include "common/timer.h"
#include "db/status.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

class InboundBroker {
 public:
  // `timers`: the long polls' expiries, on the core thread.
  explicit InboundBroker(common::TimerFactory& timers) : timers_(timers) {}

  // A provider's request arrived: it is numbered (InboundRequest::id) and handed to a
  // waiting poll if one takes it.
  void add(InboundRequest request);
  // The application asks for requests: answered at once when some wait (or poll.wait is
  // 0), else when one arrives or poll.wait elapses (an empty list).
  void poll(InboundPoll poll, CoreService::PollDone done);
  // The open request `id`, removed so it is answered once; nullopt if unknown or answered.
  std::optional<InboundRequest> take(InboundRequestId id);
  // An answer that could not be stored: `request` is open again, to be answered again.
  void reopen(InboundRequest request);
  // Every waiting poll answered kShutdown.
  void stop();
  // A warning per provider whose requests this stop leaves unanswered.
  void reportUnanswered() const;

 private:
  struct PendingPoll {
    InboundPoll poll;
    CoreService::PollDone done;
    std::unique_ptr<common::Timer> timer;
  };
  void answerPolls();

  common::TimerFactory& timers_;
  std::map<InboundRequestId, InboundRequest> waiting_;  // not yet handed out
  std::map<InboundRequestId, InboundRequest> open_;     // handed out, unanswered
  InboundRequestId next_id_ = 1;
  std::vector<std::shared_ptr<PendingPoll>> polls_;
};

}  // namespace npac::npacd
