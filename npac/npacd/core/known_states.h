// KnownStates: the states of the messages the DeliveryStore handed out for delivery and
// wrote since, per provider, so that a turn's writes check them without reading them back.
//
// The store remembers the state of the messages it handed out for delivery (the rows
// nextQueued() returned: queued) and of those it wrote since (sent; an acknowledged or
// failed one is forgotten), per provider, so that the turn's `sent` and `acknowledged`
// writes check them without reading them back (db::OutboundQueue::Known: the same
// refusals, all or none). A write naming a message it does not know reads that one. What
// it remembers is exact because every progress write of a provider this node delivers
// passes through the store; the store forgets a provider's whenever that may no longer
// hold — a refused or fenced write, messages put back to queued, a storage failure, a turn
// that did not commit, rows another node wrote (forgetReady) — and it holds at most
// kKnownTotal messages (beyond that, writes read as before).
//
// Threading: the core thread only (the DeliveryStore's).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "db/outbound_queue.h"
#include "npac/npacd/core/progress_write.h"

namespace npac::npacd {

// Messages whose state the store remembers, all providers.
inline constexpr std::size_t kKnownTotal = 65536;

class KnownStates {
 public:
  // The rows a delivery round handed out (their state as read: queued).
  void rememberQueued(const std::string& spid, const std::vector<db::QueuedMessage>& rows);
  // `write` was applied (in a transaction that may still not commit: then forgetAll()).
  void learn(const ProgressWrite& write);
  void forget(const std::string& spid);
  void forgetAll();
  // What is remembered of `spid`, for OutboundQueue::markSent/markAcknowledged; it refers
  // to `spid` and to this object, and is valid until the next change.
  db::OutboundQueue::Known of(const std::string& spid) const;
  // Messages whose state is remembered.
  std::size_t total() const { return total_; }

 private:
  void remember(const std::string& spid, db::MessageId id, db::MessageState state);

  std::map<std::string, std::unordered_map<db::MessageId, db::MessageState>> known_;
  std::size_t total_ = 0;
};

}  // namespace npac::npacd
