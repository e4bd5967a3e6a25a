// LRTM (NetScaler "LRTM method"). See lrtm.h for the exact rules and docs/dispatch/lrtm.md
// for that document's two tables worked step by step.
#include "dispatch/lrtm.h"

#include <algorithm>
#include <limits>
#include <string>

namespace npac::dispatch {
namespace {

constexpr double kNanosPerSecond = 1e9;

std::uint32_t clampWeight(std::uint32_t weight) {
  return std::clamp(weight, kMinWeight, kMaxWeight);
}

}  // namespace

Status LrtmConfig::validate() const {
  if (!(monitor_alpha > 0.0 && monitor_alpha <= 1.0)) {
    return configError("monitor_alpha",
                       "must be in (0, 1]; 1 keeps the last sample only, got " + std::to_string(monitor_alpha));
  }
  if (unmeasured_response_time <= Duration::zero()) {
    return configError("unmeasured_response_time", "must be positive");
  }
  if (monitors.empty()) {
    return configError("monitors", "LRTM needs at least one monitor kind bound");
  }
  return Status::ok();
}

LrtmPolicy::LrtmPolicy(LrtmConfig config) : config_(config) {
  if (!(config_.monitor_alpha > 0.0 && config_.monitor_alpha <= 1.0)) {
    config_.monitor_alpha = config_.monitor_alpha > 1.0 ? 1.0 : kDefaultMonitorAlpha;
  }
  if (config_.unmeasured_response_time <= Duration::zero()) {
    config_.unmeasured_response_time = kDefaultUnmeasuredResponseTime;
  }
}

LrtmPolicy::Entry* LrtmPolicy::find(MemberId id) {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

const LrtmPolicy::Entry* LrtmPolicy::find(MemberId id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

PickResult LrtmPolicy::pick(const PickContext& context) {
  if (heap_.empty()) {
    return PickResult::none(entries_.empty() ? NoneReason::kNoMembers
                                             : NoneReason::kNoneAvailable);
  }
  std::size_t best = 0;
  if (context.avoid && entries_[heap_[0].slot].member.id == *context.avoid &&
      heap_.size() > 1) {
    // The runner-up is one of the root's children.
    best = 1;
    const std::size_t last = std::min(heap_.size(), kArity + 1);
    for (std::size_t pos = 2; pos < last; ++pos) {
      if (before(heap_[pos], heap_[best])) best = pos;
    }
  }
  return PickResult::of(entries_[heap_[best].slot].member.id);
}

void LrtmPolicy::addMember(const Member& member) {
  if (Entry* e = find(member.id)) {
    // Re-adding an existing id updates it in place, keeping its monitors and rotation.
    e->member.active = member.active;
    e->member.relative_cost = member.relative_cost;
    setWeight(member.id, member.weight);
    setState(member.id, member.state);
    refreshKey(slotOf(*e));
    return;
  }
  const std::size_t slot = entries_.size();
  Entry e{member, MemberMonitors(config_.monitors, config_.monitor_alpha)};
  e.member.weight = clampWeight(member.weight);
  e.order = ++add_seq_;
  e.added = add_seq_;
  entries_.push_back(std::move(e));
  index_[member.id] = slot;
  refreshResponseTime(entries_[slot]);
  entries_[slot].n = static_cast<unsigned __int128>(entries_[slot].member.active) *
                     entries_[slot].response_ns;
  if (member.state == MemberState::kAvailable) heapInsert(slot);
}

void LrtmPolicy::removeMember(MemberId id) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  const std::size_t slot = it->second;
  heapErase(slot);
  index_.erase(it);
  const std::size_t last = entries_.size() - 1;
  if (slot != last) {
    entries_[slot] = std::move(entries_[last]);
    index_[entries_[slot].member.id] = slot;
    if (entries_[slot].heap_pos != kNotInHeap) heap_[entries_[slot].heap_pos].slot = slot;
  }
  entries_.pop_back();
}

void LrtmPolicy::setState(MemberId id, MemberState state) {
  Entry* e = find(id);
  if (e == nullptr) return;
  const bool was = e->member.state == MemberState::kAvailable;
  const bool is = state == MemberState::kAvailable;
  e->member.state = state;
  if (!was && is) heapInsert(slotOf(*e));
  if (was && !is) heapErase(slotOf(*e));
}

void LrtmPolicy::setWeight(MemberId id, std::uint32_t weight) {
  Entry* e = find(id);
  if (e == nullptr) return;
  e->member.weight = clampWeight(weight);
  heapFix(slotOf(*e));
}

void LrtmPolicy::onSent(MemberId id, TimePoint /*now*/) {
  Entry* e = find(id);
  if (e == nullptr) return;
  if (e->member.active < std::numeric_limits<std::uint32_t>::max()) ++e->member.active;
  e->order = ++sent_seq_;  // rule 3: now the most recently sent-to member
  refreshKey(slotOf(*e));
}

void LrtmPolicy::onCompleted(MemberId id, Duration latency, TimePoint /*now*/) {
  Entry* e = find(id);
  if (e == nullptr) return;
  if (e->member.active > 0) --e->member.active;
  // The association's own request→response round trip is a monitor sample.
  if (e->monitors.addSample(MonitorKind::kRequestResponse, latency)) refreshResponseTime(*e);
  refreshKey(slotOf(*e));
}

void LrtmPolicy::onFailed(MemberId id, TimePoint /*now*/) {
  Entry* e = find(id);
  if (e == nullptr) return;
  if (e->member.active > 0) --e->member.active;
  refreshKey(slotOf(*e));
}

void LrtmPolicy::onMonitorSample(MemberId id, MonitorKind kind, Duration rtt,
                                 TimePoint /*now*/) {
  Entry* e = find(id);
  if (e == nullptr) return;
  if (!e->monitors.addSample(kind, rtt)) return;  // monitor not bound to this member
  refreshResponseTime(*e);
  refreshKey(slotOf(*e));
}

bool LrtmPolicy::bindMonitors(MemberId id, MonitorMask monitors) {
  Entry* e = find(id);
  if (e == nullptr) return false;
  e->monitors.bind(monitors);
  refreshResponseTime(*e);
  refreshKey(slotOf(*e));
  return true;
}

std::vector<Member> LrtmPolicy::members() const {
  std::vector<const Entry*> ordered;
  ordered.reserve(entries_.size());
  for (const Entry& e : entries_) ordered.push_back(&e);
  std::sort(ordered.begin(), ordered.end(),
            [](const Entry* a, const Entry* b) { return a->added < b->added; });
  std::vector<Member> out;
  out.reserve(ordered.size());
  for (const Entry* e : ordered) out.push_back(e->member);
  return out;
}

std::optional<LrtmMemberView> LrtmPolicy::view(MemberId id) const {
  const Entry* e = find(id);
  if (e == nullptr) return std::nullopt;
  return viewOf(*e);
}

std::vector<LrtmMemberView> LrtmPolicy::table() const {
  std::vector<LrtmMemberView> out;
  for (const Member& m : members()) out.push_back(viewOf(*find(m.id)));
  return out;
}

std::vector<MemberFigures> LrtmPolicy::figures() const {
  std::vector<MemberFigures> out;
  for (const Member& m : members()) {
    const LrtmMemberView v = viewOf(*find(m.id));
    out.push_back(MemberFigures{m, std::nullopt, v.response_time, v.measured.has_value(), v.n, v.nw});
  }
  return out;
}

LrtmMemberView LrtmPolicy::viewOf(const Entry& e) const {
  LrtmMemberView v;
  v.id = e.member.id;
  v.state = e.member.state;
  v.weight = e.member.weight;
  v.active = e.member.active;
  v.measured = e.monitors.responseTime();
  v.response_time = Duration(static_cast<Duration::rep>(e.response_ns));
  v.n = static_cast<double>(e.member.active) * static_cast<double>(e.response_ns) /
        kNanosPerSecond;
  v.nw = v.n * kLrtmWeightScale / static_cast<double>(e.member.weight);
  return v;
}

void LrtmPolicy::refreshResponseTime(Entry& e) {
  const Duration rt = e.monitors.responseTime().value_or(config_.unmeasured_response_time);
  e.response_ns = rt.count() < 0 ? 0 : static_cast<std::uint64_t>(rt.count());
}

void LrtmPolicy::refreshKey(std::size_t slot) {
  Entry& e = entries_[slot];
  e.n = static_cast<unsigned __int128>(e.member.active) * e.response_ns;
  heapFix(slot);
}

// Heap order: idle before busy (rule 1), then Nw (rule 2), then rotation (rule 3).
LrtmPolicy::HeapNode LrtmPolicy::nodeFor(std::size_t slot) const {
  const Entry& e = entries_[slot];
  HeapNode node;
  if ((e.n >> 50) == 0) {  // common case: N < 13 days·transactions, 64-bit division
    node.rank = static_cast<std::uint64_t>(e.n) * static_cast<std::uint64_t>(kNwScale) /
                e.member.weight;
  } else {
    node.rank = e.n * kNwScale / e.member.weight;
  }
  if (e.member.active != 0) node.rank += kBusyRank;
  node.order = e.order;
  node.slot = slot;
  return node;
}

void LrtmPolicy::place(std::size_t pos, const HeapNode& node) {
  heap_[pos] = node;
  entries_[node.slot].heap_pos = pos;
}

void LrtmPolicy::siftUp(std::size_t pos) {
  const HeapNode node = heap_[pos];
  while (pos > 0) {
    const std::size_t parent = (pos - 1) / kArity;
    if (!before(node, heap_[parent])) break;
    place(pos, heap_[parent]);
    pos = parent;
  }
  place(pos, node);
}

void LrtmPolicy::siftDown(std::size_t pos) {
  const HeapNode node = heap_[pos];
  const std::size_t size = heap_.size();
  for (;;) {
    const std::size_t first = pos * kArity + 1;
    if (first >= size) break;
    std::size_t best = first;
    const std::size_t end = std::min(first + kArity, size);
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], node)) break;
    place(pos, heap_[best]);
    pos = best;
  }
  place(pos, node);
}

void LrtmPolicy::heapInsert(std::size_t slot) {
  heap_.push_back(nodeFor(slot));
  entries_[slot].heap_pos = heap_.size() - 1;
  siftUp(heap_.size() - 1);
}

void LrtmPolicy::heapErase(std::size_t slot) {
  const std::size_t pos = entries_[slot].heap_pos;
  if (pos == kNotInHeap) return;
  const HeapNode last = heap_.back();
  heap_.pop_back();
  entries_[slot].heap_pos = kNotInHeap;
  if (pos < heap_.size()) {
    place(pos, last);
    siftUp(pos);
    siftDown(entries_[last.slot].heap_pos);
  }
}

void LrtmPolicy::heapFix(std::size_t slot) {
  const std::size_t pos = entries_[slot].heap_pos;
  if (pos == kNotInHeap) return;
  heap_[pos] = nodeFor(slot);
  siftUp(pos);
  siftDown(entries_[slot].heap_pos);
}

}  // namespace npac::dispatch
