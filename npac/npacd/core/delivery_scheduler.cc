// DeliveryScheduler: see delivery_scheduler.h.
#include "npac/npacd/core/delivery_scheduler.h"

#include <chrono>
#include <utility>

#include <boost/asio/post.hpp>

#include "npac/npacd/core/provider_core.h"

namespace npac::npacd {
namespace asio = boost::asio;

DeliveryScheduler::DeliveryScheduler(asio::io_context& io, common::TimerFactory& timers, DeliveryStore& store,
                                     Lookup lookup)
    : io_(io), timers_(timers), store_(store), lookup_(std::move(lookup)) {}

void DeliveryScheduler::wake(const std::string& spid) {
  if (stopped_ || !scheduled_.insert(spid).second) return;
  due_.push_back(spid);
  if (due_.size() == 1) asio::post(io_, [this] { deliverDue(); });
}

void DeliveryScheduler::deliverDue() {
  std::vector<std::string> due;
  due.swap(due_);
  std::vector<std::pair<std::string, ProviderCore::Round>> rounds;
  rounds.reserve(due.size());
  for (std::string& spid : due) {
    scheduled_.erase(spid);
    if (ProviderCore* c = lookup_(spid)) rounds.emplace_back(std::move(spid), c->decideRound());
  }
  store_.flush();  // every round's rows read `sent` before any of their PDUs leaves
  for (const auto& [spid, round] : rounds) {
    if (ProviderCore* c = lookup_(spid)) c->finishRound(round);
  }
}

void DeliveryScheduler::wakeAfter(const std::string& spid, associations::Duration delay) {
  auto& timer = timers_by_spid_[spid];
  if (!timer) timer = timers_.makeTimer();
  if (timer->armed()) return;  // the earlier wake comes first
  timer->after(std::chrono::ceil<std::chrono::milliseconds>(delay), [this, spid] { wake(spid); });
}

void DeliveryScheduler::flushSoon() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  asio::post(io_, [this] {
    flush_scheduled_ = false;
    store_.flush();
  });
}

void DeliveryScheduler::stop() {
  stopped_ = true;
  for (auto& [spid, timer] : timers_by_spid_) timer->cancel();
}

}  // namespace npac::npacd
