// DeliveryScheduler: when the providers of one core thread deliver. A provider's core asks
// for a delivery round soon (wake) or after a delay (wakeAfter: throttling); the wakes of
// one turn are coalesced into ONE posted handler (deliverDue) that decides every due
// provider's round (ProviderCore::decideRound), commits all their `sent` rows in one
// DeliveryStore::flush, and only then lets each round's PDUs leave
// (ProviderCore::finishRound) — a broadcast that woke hundreds of providers in one turn
// costs one commit, not one each. It also coalesces the store's own flushes (flushSoon:
// acknowledgements and the like, once per turn).
//
// It keeps no provider: it finds each by SPID through the lookup it is given (the
// manager's ProviderCores), and a SPID without a core is skipped.
//
// Threading: the core thread only (the one running `io`); no locks. Its timers are made by
// the core's TimerFactory and run on that thread too.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "associations/outstanding.h"
#include "common/timer.h"
#include "npac/npacd/core/delivery_store.h"

namespace npac::npacd {

class ProviderCore;

class DeliveryScheduler {
 public:
  // The core of `spid` on this thread, or none (it never bound in this run).
  using Lookup = std::function<ProviderCore*(const std::string& spid)>;

  // `io`, `timers` and `store` outlive the scheduler.
  DeliveryScheduler(boost::asio::io_context& io, common::TimerFactory& timers, DeliveryStore& store,
                    Lookup lookup);
  DeliveryScheduler(const DeliveryScheduler&) = delete;
  DeliveryScheduler& operator=(const DeliveryScheduler&) = delete;

  // A round for `spid` at the end of this turn (once, however often it is woken).
  void wake(const std::string& spid);
  // wake(spid) once `delay` has passed; a delayed wake already armed comes first.
  void wakeAfter(const std::string& spid, associations::Duration delay);
  // DeliveryStore::flush at the end of this turn, once however often it is asked.
  void flushSoon();
  // Shutdown: no wake is taken any more and the delayed ones are cancelled.
  void stop();

 private:
  void deliverDue();

  boost::asio::io_context& io_;
  common::TimerFactory& timers_;
  DeliveryStore& store_;
  Lookup lookup_;
  bool stopped_ = false;
  std::set<std::string> scheduled_;
  // The providers whose round is due, in the order they were woken: one posted handler
  // (deliverDue) runs them all with one commit.
  std::vector<std::string> due_;
  std::map<std::string, std::unique_ptr<common::Timer>> timers_by_spid_;
  bool flush_scheduled_ = false;
};

}  // namespace npac::npacd
