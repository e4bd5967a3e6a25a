// CoreInbox: what other threads hand one core thread — a connection another core thread
// accepted (adopt), rows the QueueWriter committed (announceSubmitted, announceAnswer), a
// provider's request for the application gathered on thread 0 (postInbound), and what
// another npacd node did (postSubmittedElsewhere, postWakeAll, postProviderChanged; see
// db/notification_listener.h). Each call posts its work onto the core thread's io_context,
// where it reaches that thread's DeliveryStore, ProviderCores, DeliveryScheduler and
// InboundBroker; the inbox keeps no state of its own.
//
// Threading: every method may be called from any thread (it only posts); the posted work
// runs on the core thread. The manager that owns the inbox outlives everything posted.
#pragma once

#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/timer.h"
#include "db/database.h"
#include "db/outbound_queue.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/session.h"

namespace npac::npacd {

class DeliveryScheduler;
class DeliveryStore;
class InboundBroker;
class ProviderCores;
class ShardRoute;

class CoreInbox {
 public:
  // The core thread's parts the posted work reaches; each outlives the inbox. `owner`
  // is the SessionOwner of an adopted connection (the manager).
  struct Parts {
    boost::asio::io_context& io;
    common::TimerFactory& timers;
    db::Database& db;  // the decisions connection (a provider's record)
    DeliveryStore& store;
    ProviderCores& providers;
    DeliveryScheduler& delivery;
    InboundBroker& inbound;
    SessionOwner& owner;
    const ShardRoute& route;
  };

  explicit CoreInbox(const Parts& parts) : parts_(parts) {}
  CoreInbox(const CoreInbox&) = delete;
  CoreInbox& operator=(const CoreInbox&) = delete;

  void adopt(Session::Handoff handoff);  // a connection handed over by another core thread
  void announceSubmitted(std::vector<db::QueuedMessage> rows);  // committed rows, their PDUs moved
  void announceAnswer(db::QueuedMessage row);  // a committed answer to a provider's request
  void postInbound(InboundRequest request);  // thread 0: another thread's provider asks
  // Two sites (db/notification_listener.h): another node committed messages for `spid`;
  // what the store keeps of its queue in memory misses them, so it is read again.
  void postSubmittedElsewhere(std::string spid);
  // Two sites: every bound provider delivers soon, every provider's queue read again from
  // the database (the notifications of a lost LISTEN connection are unknown).
  void postWakeAll();
  // Another node changed the provider: if it is bound here and now disabled, its
  // associations are released as if it had been disabled here.
  void postProviderChanged(std::string spid);

 private:
  Parts parts_;
};

}  // namespace npac::npacd
