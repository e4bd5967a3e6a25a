// RC group arithmetic and O(1) pick structures (EAGLE "Weighted GTT Load Sharing"). See
// rc_group.h.
#include "dispatch/rc_group.h"

#include <algorithm>
#include <queue>

namespace npac::dispatch {
namespace {

// Probes along a slot's fallback sequence before the deterministic scan (a dead member's
// slot finds a usable home within a few probes unless almost the whole group is down).
constexpr std::uint32_t kMaxProbes = 64;
constexpr std::uint64_t kProbeSalt = 0x51075107ULL << 32;
constexpr MemberId kNoOwner = static_cast<MemberId>(-1);

// SplitMix64 finaliser: a fixed, seedless mix so a key maps identically on every run.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform index in [0, n) from a 64-bit hash (Lemire's multiply-shift).
std::uint32_t scale(std::uint64_t h, std::size_t n) {
  return static_cast<std::uint32_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

bool usable(const Member& m, bool sequenced_view) {
  return m.state == MemberState::kAvailable ||
         (sequenced_view && m.state == MemberState::kCongested);
}

std::uint32_t clampThreshold(std::uint32_t percent) {
  return std::clamp(percent, kMinThresholdPercent, kMaxThresholdPercent);
}

}  // namespace

std::string_view toString(RcGroupState state) {
  switch (state) {
    case RcGroupState::kAvailable: return "available";
    case RcGroupState::kProhibited: return "prohibited";
    case RcGroupState::kThresholdProhibited: return "threshold-prohibited";
  }
  return "unknown";
}

std::uint32_t requiredWeight(std::uint32_t group_weight, std::uint32_t threshold_percent) {
  const std::uint64_t floored = std::uint64_t{group_weight} * threshold_percent / 100;
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(floored, 1));
}

RcGroupState rcGroupState(std::uint32_t available_weight, std::uint32_t required_weight,
                          bool all_prohibited) {
  if (all_prohibited) return RcGroupState::kProhibited;
  if (available_weight >= required_weight) return RcGroupState::kAvailable;
  return RcGroupState::kThresholdProhibited;
}

std::vector<std::uint32_t> smoothInterleave(const std::vector<std::uint32_t>& weights) {
  struct Next {
    std::uint32_t index;
    std::uint32_t k;       // this is the k-th appearance (0-based)
    std::uint32_t weight;
  };
  // a before b iff (2ka+1)/(2wa) < (2kb+1)/(2wb), i.e. (2ka+1)·wb < (2kb+1)·wa.
  auto later = [](const Next& a, const Next& b) {
    const std::uint64_t lhs = (2ULL * a.k + 1) * b.weight;
    const std::uint64_t rhs = (2ULL * b.k + 1) * a.weight;
    if (lhs != rhs) return lhs > rhs;
    return a.index > b.index;
  };
  std::priority_queue<Next, std::vector<Next>, decltype(later)> heap(later);
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < weights.size(); ++i) {
    if (weights[i] == 0) continue;
    heap.push(Next{i, 0, weights[i]});
    total += weights[i];
  }
  std::vector<std::uint32_t> out;
  out.reserve(total);
  while (!heap.empty()) {
    Next n = heap.top();
    heap.pop();
    out.push_back(n.index);
    if (++n.k < n.weight) heap.push(n);
  }
  return out;
}

RcGroup::RcGroup(std::uint32_t relative_cost, std::uint32_t threshold_percent)
    : rc_(relative_cost), threshold_(clampThreshold(threshold_percent)) {}

Member* RcGroup::find(MemberId id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &members_[it->second];
}

void RcGroup::reindex() {
  index_.clear();
  for (std::size_t i = 0; i < members_.size(); ++i) index_[members_[i].id] = i;
}

bool RcGroup::add(const Member& member) {
  if (find(member.id) != nullptr) return false;
  Member m = member;
  m.weight = std::clamp(m.weight, kMinWeight, kMaxWeight);
  index_[m.id] = members_.size();
  members_.push_back(m);
  homes_dirty_ = true;
  recount();
  return true;
}

bool RcGroup::remove(MemberId id) {
  auto it = std::find_if(members_.begin(), members_.end(),
                         [id](const Member& m) { return m.id == id; });
  if (it == members_.end()) return false;
  members_.erase(it);
  reindex();
  homes_dirty_ = true;
  recount();
  return true;
}

bool RcGroup::setState(MemberId id, MemberState state) {
  Member* m = find(id);
  if (m == nullptr) return false;
  if (m->state != state) {
    m->state = state;
    recount();
  }
  return true;
}

bool RcGroup::setWeight(MemberId id, std::uint32_t weight) {
  Member* m = find(id);
  if (m == nullptr) return false;
  weight = std::clamp(weight, kMinWeight, kMaxWeight);
  if (m->weight != weight) {
    m->weight = weight;
    homes_dirty_ = true;
    recount();
  }
  return true;
}

void RcGroup::setThreshold(std::uint32_t percent) {
  threshold_ = clampThreshold(percent);
  recount();
}

std::uint32_t RcGroup::entityAvailableWeight(std::size_t i) const {
  return members_[i].state == MemberState::kAvailable ? members_[i].weight : 0;
}

MemberId RcGroup::next(std::optional<MemberId> avoid) {
  if (tables_dirty_) refresh();
  const std::uint32_t n = static_cast<std::uint32_t>(schedule_.size());
  if (avoid && schedule_[cursor_] == *avoid && available_count_ > 1) {
    // Give this turn to the next entry of another member and the avoided member the
    // other's turn: per-cycle counts stay exact.
    std::uint32_t j = cursor_;
    do {
      j = j + 1 == n ? 0 : j + 1;
    } while (schedule_[j] == *avoid);
    std::swap(schedule_[cursor_], schedule_[j]);
  }
  const MemberId id = schedule_[cursor_];
  cursor_ = cursor_ + 1 == n ? 0 : cursor_ + 1;
  return id;
}

MemberId RcGroup::keyed(std::uint64_t key, bool sequenced) {
  if (tables_dirty_) refresh();
  return (sequenced ? seq_owners_ : owners_)[slotOf(key)];
}

std::uint32_t RcGroup::slotOf(std::uint64_t key) const {
  return scale(mix(key), homes_.size());
}

const std::vector<MemberId>& RcGroup::schedule() {
  if (tables_dirty_) refresh();
  return schedule_;
}

void RcGroup::recount() {
  tables_dirty_ = true;
  group_weight_ = 0;
  available_weight_ = 0;
  available_count_ = 0;
  std::uint32_t congested_weight = 0;
  bool all_prohibited = true;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const Member& m = members_[i];
    group_weight_ += m.weight;
    if (m.state != MemberState::kProhibited) all_prohibited = false;
    if (m.state == MemberState::kAvailable) {
      available_weight_ += m.weight;
      ++available_count_;
      sole_available_ = m.id;
    } else if (m.state == MemberState::kCongested) {
      congested_weight += m.weight;
    }
  }
  required_ = npac::dispatch::requiredWeight(group_weight_, threshold_);
  state_ = rcGroupState(available_weight_, required_, all_prohibited);
  sequenced_state_ = rcGroupState(available_weight_ + congested_weight, required_, all_prohibited);
}

void RcGroup::refresh() {
  tables_dirty_ = false;
  if (homes_dirty_) {
    homes_dirty_ = false;
    rebuildHomes();
  }
  std::vector<std::uint32_t> live(members_.size(), 0);
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (members_[i].state == MemberState::kAvailable) live[i] = members_[i].weight;
  }

  // The schedule depends only on which members are Available and their weights; keep it
  // (and its cursor) when that did not change, so unrelated events do not reset a cycle.
  std::vector<std::pair<MemberId, std::uint32_t>> basis;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (live[i] != 0) basis.emplace_back(members_[i].id, live[i]);
  }
  if (basis != schedule_basis_) {
    schedule_basis_ = std::move(basis);
    schedule_.clear();
    schedule_.reserve(available_weight_);
    for (std::uint32_t idx : smoothInterleave(live)) schedule_.push_back(members_[idx].id);
    cursor_ = 0;
  }
  rebuildOwners(owners_, false);
  rebuildOwners(seq_owners_, true);
}

void RcGroup::rebuildHomes() {
  std::vector<std::uint32_t> weights;
  weights.reserve(members_.size());
  for (const Member& m : members_) weights.push_back(m.weight);
  const std::vector<std::uint32_t> cycle = smoothInterleave(weights);
  homes_.clear();
  if (cycle.empty()) return;
  const std::size_t copies = (kMinSlots + cycle.size() - 1) / cycle.size();
  homes_.reserve(copies * cycle.size());
  for (std::size_t c = 0; c < copies; ++c) homes_.insert(homes_.end(), cycle.begin(), cycle.end());
}

void RcGroup::rebuildOwners(std::vector<MemberId>& owners, bool sequenced_view) const {
  const std::size_t slots = homes_.size();
  owners.assign(slots, kNoOwner);
  const std::size_t n = members_.size();
  // next_usable[i]: the first usable member at or after i, circularly (kNone: none).
  constexpr std::uint32_t kNone = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> next_usable(n, kNone);
  std::uint32_t upcoming = kNone;
  for (std::size_t k = 2 * n; k-- > 0;) {
    const std::size_t i = k % n;
    if (usable(members_[i], sequenced_view)) upcoming = static_cast<std::uint32_t>(i);
    next_usable[i] = upcoming;
  }
  if (n == 0 || next_usable[0] == kNone) return;  // nobody usable: no owners
  for (std::size_t s = 0; s < slots; ++s) {
    const Member& home = members_[homes_[s]];
    if (usable(home, sequenced_view)) {
      owners[s] = home.id;
      continue;
    }
    // The slot's own probe sequence: uniform over slots, hence weighted by member.
    for (std::uint32_t p = 1; p <= kMaxProbes && owners[s] == kNoOwner; ++p) {
      const Member& cand = members_[homes_[scale(mix((s << 8 | p) ^ kProbeSalt), slots)]];
      if (usable(cand, sequenced_view)) owners[s] = cand.id;
    }
    // Nearly everything down: the first usable member from a slot-specific start, in
    // O(1) — still stable (it only changes when that member or one before it changes).
    if (owners[s] == kNoOwner) owners[s] = members_[next_usable[scale(mix(s), n)]].id;
  }
}

}  // namespace npac::dispatch
