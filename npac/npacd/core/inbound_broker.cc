#include "npac/npacd/core/inbound_broker.h"

#include <algorithm>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

namespace npac::npacd {

void InboundBroker::add(InboundRequest request) {
  request.id = next_id_++;
  const InboundRequestId id = request.id;
  waiting_.emplace(id, std::move(request));
  answerPolls();
}

void InboundBroker::answerPolls() {
  while (!polls_.empty() && !waiting_.empty()) {
    bool served = false;
    for (auto it = polls_.begin(); it != polls_.end(); ++it) {
      auto poll = *it;
      std::vector<InboundRequest> out;
      for (auto r = waiting_.begin(); r != waiting_.end() && out.size() < poll->poll.max;) {
        if (poll->poll.spid.empty() || poll->poll.spid == r->second.spid) {
          open_.emplace(r->first, r->second);
          out.push_back(r->second);
          r = waiting_.erase(r);
        } else {
          ++r;
        }
      }
      if (!out.empty()) {
        polls_.erase(it);
        if (poll->timer) poll->timer->cancel();
        poll->done(std::move(out));
        served = true;
        break;
      }
    }
    if (!served) break;
  }
}

void InboundBroker::poll(InboundPoll poll, CoreService::PollDone done) {
  auto pending = std::make_shared<PendingPoll>();
  pending->poll = std::move(poll);
  pending->done = std::move(done);
  polls_.push_back(pending);
  answerPolls();
  if (std::find(polls_.begin(), polls_.end(), pending) == polls_.end()) return;
  if (pending->poll.wait.count() == 0) {
    polls_.erase(std::find(polls_.begin(), polls_.end(), pending));
    pending->done(std::vector<InboundRequest>{});
    return;
  }
  pending->timer = timers_.makeTimer();
  pending->timer->after(pending->poll.wait, [this, pending] {
    auto it = std::find(polls_.begin(), polls_.end(), pending);
    if (it == polls_.end()) return;
    polls_.erase(it);
    pending->done(std::vector<InboundRequest>{});
  });
}

std::optional<InboundRequest> InboundBroker::take(InboundRequestId id) {
  auto it = open_.find(id);
  if (it == open_.end()) return std::nullopt;
  InboundRequest request = std::move(it->second);
  open_.erase(it);
  return request;
}

void InboundBroker::reopen(InboundRequest request) {
  const InboundRequestId id = request.id;
  open_.emplace(id, std::move(request));
}

void InboundBroker::stop() {
  for (auto& poll : polls_) {
    if (poll->timer) poll->timer->cancel();
    poll->done(db::Status::shutdown("npacd is stopping"));
  }
  polls_.clear();
}

void InboundBroker::reportUnanswered() const {
  // Providers' requests live in memory until the application answers them (the answer
  // itself is durable): say which ones this stop leaves unanswered, so an operator can
  // tell the application or expect the providers' ROSE retries.
  std::map<std::string, std::vector<std::int32_t>> by_spid;
  for (const auto* requests : {&waiting_, &open_}) {
    for (const auto& [id, request] : *requests) by_spid[request.spid].push_back(request.invoke_id);
  }
  for (const auto& [spid, invoke_ids] : by_spid) {
    std::string list;
    for (std::int32_t invoke_id : invoke_ids) list += (list.empty() ? "" : ", ") + std::to_string(invoke_id);
    spdlog::warn("SPID {}: {} request(s) from the provider left unanswered at stop (invoke ids {}); "
                 "the provider will have to send them again",
                 spid, invoke_ids.size(), list);
  }
}

}  // namespace npac::npacd
