// NodeNotifications: what the other npacd nodes sharing a PostgreSQL database tell this
// one (docs/OPERATIONS.md "Two sites") — a message submitted for a provider, an
// operator's change to the tunables or to a provider — turned into this node's actions:
// wake the provider's delivery, reload the tunables, apply the provider change.
//
// Subscribe, then read (conventions "Lessons from our own house"): start() returns only
// once the LISTEN is in force, and then reads everything once more — the tunables, and a
// wake-up for every provider — because whatever another node committed between this
// node's first reads and its LISTEN was notified to nobody. The same resynchronisation
// follows every reconnect of the listener (db/notification_listener.h).
//
// Threading: start() and stop() from the main thread. The actions run on the listener's
// thread: `Actions` must only post to the core (CoreInbox::postWakeAll…, core/core_inbox.h), and the
// TunableRegistry serialises reload() itself.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "db/notification_listener.h"
#include "db/status.h"

namespace npac::tunables {
class TunableRegistry;
}

namespace npac::npacd {

class NodeNotifications {
 public:
  struct Actions {
    // Every provider's delivery, reading the queue again: what was notified while the
    // listener was away is unknown.
    std::function<void()> wake_all;
    // New messages for `spid` committed by another node (or by a writer without a node
    // name): whatever this node keeps of the provider's queue in memory misses them.
    // Submissions this node's own writer committed are not passed on: the writer has
    // already handed them to the core (AssociationManager::announceSubmitted).
    std::function<void(const std::string& spid)> wake;
    std::function<void(const std::string& spid)> provider_changed;   // enabled, disabled, changed
  };

  // LISTENs on the database at `url`, then resynchronises (see above). Errors as
  // db::NotificationListener::start.
  // `node` is this npacd's node name, as its QueueWriter sends it (Options::node).
  static db::Result<std::unique_ptr<NodeNotifications>> start(const std::string& url,
                                                              tunables::TunableRegistry& registry,
                                                              Actions actions,
                                                              std::chrono::milliseconds answer_timeout,
                                                              std::string node = {});
  NodeNotifications(const NodeNotifications&) = delete;
  NodeNotifications& operator=(const NodeNotifications&) = delete;

  void stop();

 private:
  NodeNotifications(tunables::TunableRegistry& registry, Actions actions, std::string node);
  void on(const std::string& channel, const std::string& payload);
  void resynchronise();
  void reloadTunables();

  tunables::TunableRegistry& registry_;
  Actions actions_;
  std::string node_;
  std::unique_ptr<db::NotificationListener> listener_;
};

}  // namespace npac::npacd
