// Round robin (NANC 353). See round_robin.h for the exact order.
#include "dispatch/round_robin.h"

#include <utility>

namespace npac::dispatch {

PickResult RoundRobinPolicy::pick(const PickContext& context) {
  const std::size_t n = ring_.size();
  if (n == 0) {
    return PickResult::none(entries_.empty() ? NoneReason::kNoMembers
                                             : NoneReason::kNoneAvailable);
  }
  std::size_t at = cursor_;
  std::size_t next = at + 1 == n ? 0 : at + 1;
  if (context.avoid && ring_[at] == *context.avoid && n > 1) {
    // Serve the second in line and let the avoided member keep its turn (it moves to
    // the head): the per-round counts stay exactly equal.
    std::swap(ring_[at], ring_[next]);
    entries_[index_[ring_[at]]].ring_pos = at;
    entries_[index_[ring_[next]]].ring_pos = next;
  }
  const MemberId served = ring_[at];
  cursor_ = next;
  last_served_ = served;
  return PickResult::of(served);
}

void RoundRobinPolicy::addMember(const Member& member) {
  if (index_.count(member.id) != 0) {
    // Re-adding an existing id updates it in place (weight and state), keeping its place.
    setWeight(member.id, member.weight);
    entries_[index_[member.id]].member.active = member.active;
    entries_[index_[member.id]].member.relative_cost = member.relative_cost;
    setState(member.id, member.state);
    return;
  }
  index_[member.id] = entries_.size();
  entries_.push_back(Entry{member, kNotInRing});
  if (member.state == MemberState::kAvailable) join(member.id);
}

void RoundRobinPolicy::removeMember(MemberId id) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  leave(id);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(it->second));
  index_.clear();
  for (std::size_t i = 0; i < entries_.size(); ++i) index_[entries_[i].member.id] = i;
}

void RoundRobinPolicy::setState(MemberId id, MemberState state) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  Member& m = entries_[it->second].member;
  const bool was = m.state == MemberState::kAvailable;
  const bool is = state == MemberState::kAvailable;
  m.state = state;
  if (!was && is) join(id);
  if (was && !is) leave(id);
}

void RoundRobinPolicy::setWeight(MemberId id, std::uint32_t weight) {
  // Round robin ignores weights; they are kept for the member snapshot only.
  auto it = index_.find(id);
  if (it != index_.end()) entries_[it->second].member.weight = weight;
}

void RoundRobinPolicy::onSent(MemberId id, TimePoint /*now*/) {
  auto it = index_.find(id);
  if (it != index_.end()) ++entries_[it->second].member.active;
}

void RoundRobinPolicy::onCompleted(MemberId id, Duration /*latency*/, TimePoint /*now*/) {
  auto it = index_.find(id);
  if (it != index_.end() && entries_[it->second].member.active > 0) {
    --entries_[it->second].member.active;
  }
}

void RoundRobinPolicy::onFailed(MemberId id, TimePoint now) { onCompleted(id, {}, now); }

std::vector<Member> RoundRobinPolicy::members() const {
  std::vector<Member> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.member);
  return out;
}

std::vector<MemberId> RoundRobinPolicy::rotation() const {
  std::vector<MemberId> out;
  out.reserve(ring_.size());
  for (std::size_t i = 0; i < ring_.size(); ++i) {
    out.push_back(ring_[(cursor_ + i) % ring_.size()]);
  }
  return out;
}

void RoundRobinPolicy::join(MemberId id) {
  const std::size_t n = ring_.size();
  std::size_t pos;  // insertion index in ring_
  if (n == 0) {
    pos = 0;
    cursor_ = 0;
  } else {
    const std::size_t tail = cursor_ == 0 ? n - 1 : cursor_ - 1;
    // Join at the tail, or just before it when the tail is the member served last.
    pos = (last_served_ && ring_[tail] == *last_served_) ? tail : tail + 1;
    if (pos < cursor_ || (pos == cursor_ && cursor_ != 0)) ++cursor_;
  }
  ring_.insert(ring_.begin() + static_cast<std::ptrdiff_t>(pos), id);
  renumberFrom(pos);
}

void RoundRobinPolicy::leave(MemberId id) {
  Entry& e = entries_[index_[id]];
  const std::size_t pos = e.ring_pos;
  if (pos == kNotInRing) return;
  e.ring_pos = kNotInRing;
  ring_.erase(ring_.begin() + static_cast<std::ptrdiff_t>(pos));
  if (pos < cursor_) --cursor_;
  if (cursor_ >= ring_.size()) cursor_ = 0;
  if (last_served_ == id) last_served_.reset();
  renumberFrom(pos);
}

void RoundRobinPolicy::renumberFrom(std::size_t first) {
  for (std::size_t i = first; i < ring_.size(); ++i) entries_[index_[ring_[i]]].ring_pos = i;
}

}  // namespace npac::dispatch
