// ThrottledPolicy (DSR "Egress Throttle Lists"). See throttled_policy.h for the admission
// and release order.
#include "dispatch/throttled_policy.h"

#include <algorithm>

namespace npac::dispatch {

ThrottledPolicy::ThrottledPolicy(std::unique_ptr<Policy> inner, ThrottleGroupConfig group,
                                 std::optional<ThrottleListConfig> list)
    : inner_(std::move(inner)),
      name_("throttle(" + std::string(inner_->name()) + ")"),
      group_(std::move(group)) {
  if (list) list_.emplace(std::move(*list));
}

int ThrottledPolicy::congestionLevel(TimePoint now) {
  int level = group_.evaluate(now);
  if (list_) level = std::max(level, list_->evaluate(group_.emr(now), group_.ept(), now));
  return level;
}

bool ThrottledPolicy::heldAtOrAbove(std::uint8_t priority) const {
  for (std::size_t p = priority; p <= kMaxMessagePriority; ++p) {
    if (!held_[p].empty()) return true;
  }
  return false;
}

PickResult ThrottledPolicy::pick(const PickContext& context) {
  const std::uint8_t priority = std::min(context.priority, kMaxMessagePriority);
  if (priority < congestionLevel(context.now) || heldAtOrAbove(priority)) {
    return PickResult::none(NoneReason::kThrottled);
  }
  return inner_->pick(context);
}

void ThrottledPolicy::commit(MemberId member, bool opens_transaction, TimePoint now) {
  // LRTM's active count is a transaction count: only requests reach the wrapped policy.
  if (opens_transaction) inner_->onSent(member, now);
  group_.onSent(now, opens_transaction);
}

void ThrottledPolicy::onSent(MemberId id, TimePoint now) { commit(id, true, now); }

void ThrottledPolicy::onMessageSent(MemberId id, TimePoint now) { commit(id, false, now); }

void ThrottledPolicy::onCompleted(MemberId id, Duration latency, TimePoint now) {
  inner_->onCompleted(id, latency, now);
  group_.onTransactionEnded(now);
}

void ThrottledPolicy::onFailed(MemberId id, TimePoint now) {
  inner_->onFailed(id, now);
  group_.onTransactionEnded(now);
}

Admission ThrottledPolicy::submit(const Submission& s) {
  Admission a;
  a.id = s.id;
  const TimePoint now = s.context.now;
  a.level = congestionLevel(now);
  const std::uint8_t priority = s.context.priority;
  if (priority > kMaxMessagePriority) {
    a.kind = Admission::Kind::kInvalidPriority;
    return a;
  }
  if (priority < a.level || heldAtOrAbove(priority)) {
    held_[priority].push_back(Held{s.id, s.context, s.opens_transaction});
    a.kind = Admission::Kind::kHeld;
    a.reason = NoneReason::kThrottled;
    return a;
  }
  const PickResult r = inner_->pick(s.context);
  if (!r.ok()) {
    a.kind = Admission::Kind::kNoMember;
    a.reason = r.reason;
    return a;
  }
  commit(*r.member, s.opens_transaction, now);
  a.kind = Admission::Kind::kSend;
  a.member = r.member;
  a.level = congestionLevel(now);
  return a;
}

ReleaseBatch ThrottledPolicy::release(TimePoint now, std::size_t max) {
  ReleaseBatch batch;
  int level = congestionLevel(now);
  for (int p = kMaxMessagePriority; p >= 0 && p >= level; --p) {
    auto& queue = held_[static_cast<std::size_t>(p)];
    while (!queue.empty() && batch.released.size() < max) {
      Held& head = queue.front();
      PickContext context = head.context;
      context.now = now;
      const PickResult r = inner_->pick(context);
      if (!r.ok()) {
        batch.blocked = r.reason;
        batch.level = level;
        return batch;
      }
      commit(*r.member, head.opens_transaction, now);
      batch.released.push_back(Released{head.id, *r.member, static_cast<std::uint8_t>(p)});
      queue.pop_front();
      level = congestionLevel(now);  // the release itself may push the level back up
      if (p < level) break;
    }
    if (batch.released.size() >= max) break;
  }
  batch.level = level;
  return batch;
}

PeerUpdate ThrottledPolicy::reportPeerCounts(PeerId peer, double emr, std::uint64_t ept,
                                             TimePoint now) {
  return list_ ? list_->reportPeerCounts(peer, emr, ept, now) : PeerUpdate::kUnknownPeer;
}

PeerUpdate ThrottledPolicy::peerLost(PeerId peer, TimePoint now) {
  return list_ ? list_->peerLost(peer, now) : PeerUpdate::kUnknownPeer;
}

PeerUpdate ThrottledPolicy::peerRestored(PeerId peer, TimePoint now) {
  return list_ ? list_->peerRestored(peer, now) : PeerUpdate::kUnknownPeer;
}

std::size_t ThrottledPolicy::heldCount() const {
  std::size_t n = 0;
  for (const auto& q : held_) n += q.size();
  return n;
}

std::size_t ThrottledPolicy::heldCount(std::uint8_t priority) const {
  return priority <= kMaxMessagePriority ? held_[priority].size() : 0;
}

}  // namespace npac::dispatch
