// ThrottleGroups: provisioned egress throttle groups on this node and their lists of peer
// nodes (DSR "Egress Throttle Lists"); see throttle_groups.h.
#include "npac/npacd/core/throttle_groups.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <spdlog/spdlog.h>

namespace npac::npacd {
namespace as = npac::associations;

namespace {

// A node that held a member's message this recently says it wants more than it has.
constexpr auto kWantingFor = std::chrono::seconds(1);

dispatch::LimitConfig limitOf(std::int64_t maximum, const db::ThrottleGroupDefinition& group) {
  dispatch::LimitConfig limit;
  limit.enabled = maximum > 0;
  limit.maximum = static_cast<double>(maximum);
  for (std::size_t n = 0; n < 3; ++n) {
    if (group.onset[n] <= 0 || group.abatement[n] <= 0) break;
    limit.levels.push_back({static_cast<std::uint32_t>(group.onset[n]), static_cast<std::uint32_t>(group.abatement[n])});
  }
  limit.abatement_time = std::chrono::milliseconds(group.min_abatement_ms);
  return limit;
}

std::string whole(double value) { return std::to_string(static_cast<long long>(std::llround(value))); }

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

}  // namespace

dispatch::ThrottleListConfig listConfigOf(const db::ThrottleGroupDefinition& group) {
  dispatch::ThrottleListConfig config;
  config.rate = limitOf(group.max_rate, group);
  config.pending = limitOf(group.max_pending, group);
  config.reduction_percent_per_lost_peer = static_cast<std::uint32_t>(std::clamp(group.peer_loss_reduction_percent, 0, 100));
  config.stale_after = kStaleReport;
  return config;
}

// ---- ThrottleGroup ----

ThrottleGroup::ThrottleGroup(db::ThrottleGroupDefinition definition, std::string node)
    : definition_(std::move(definition)), node_(std::move(node)), list_(listConfigOf(definition_)) {}

std::uint64_t ThrottleGroup::pendingLocked() const {
  std::uint64_t sum = 0;
  for (const auto& [spid, n] : pending_) sum += n;
  return sum;
}

bool ThrottleGroup::wantingLocked(as::TimePoint now) const {
  return last_held_ && now - *last_held_ <= kWantingFor;
}

int ThrottleGroup::evaluateLocked(as::TimePoint now) {
  return list_.evaluate(window_.ratePerSecond(now), pendingLocked(), now);
}

int ThrottleGroup::mayAdmit(as::TimePoint now) {
  std::lock_guard lock(mu_);
  const auto hold = [&](int level) {
    ++held_;
    last_held_ = now;
    return level;
  };
  if (const int level = evaluateLocked(now); level > 0) return hold(level);
  const dispatch::ThrottleListConfig& config = list_.config();
  if (config.rate.enabled) {
    const double share = list_.rateAllowance();
    if (window_.ratePerSecond(now) + 1.0 > share) return hold(1);
    const std::int64_t slot = now.time_since_epoch() / kPaceSlot;
    if (slot != pace_slot_) {
      pace_slot_ = slot;
      pace_in_slot_ = 0;
    }
    if (pace_in_slot_ >= static_cast<std::uint32_t>(std::ceil(share / 10.0))) return hold(1);
  }
  if (config.pending.enabled && static_cast<double>(pendingLocked()) + 1.0 > list_.pendingAllowance()) {
    return hold(1);
  }
  return 0;
}

void ThrottleGroup::onSent(const std::string& spid, std::size_t outstanding, as::TimePoint now) {
  std::lock_guard lock(mu_);
  window_.add(now);
  ++pace_in_slot_;
  ++admitted_;
  pending_[spid] = outstanding;
}

void ThrottleGroup::notePending(const std::string& spid, std::size_t outstanding) {
  std::lock_guard lock(mu_);
  if (outstanding == 0) {
    pending_.erase(spid);
  } else {
    pending_[spid] = outstanding;
  }
}

std::string ThrottleGroup::detailLocked(as::TimePoint now) {
  const int level = evaluateLocked(now);
  std::string out = "throttle group " + definition_.name + " level " + std::to_string(level);
  const char* sep = ": ";
  if (list_.config().rate.enabled) {
    out += sep + std::string("rate ") + whole(list_.emr()) + "/" + whole(list_.rateMaximum()) + " msg/s (this node's share " +
           whole(list_.rateAllowance()) + ")";
    sep = ", ";
  }
  if (list_.config().pending.enabled) {
    out += sep + std::string("pending ") + std::to_string(list_.ept()) + "/" + whole(list_.pendingMaximum());
  }
  if (const std::size_t lost = list_.lostPeers(); lost > 0) {
    out += ", " + std::to_string(lost) + (lost == 1 ? " peer node" : " peer nodes") + " unreachable";
  }
  return out;
}

std::string ThrottleGroup::detail(as::TimePoint now) {
  std::lock_guard lock(mu_);
  return detailLocked(now);
}

ThrottleGroup::View ThrottleGroup::view(as::TimePoint now) {
  std::lock_guard lock(mu_);
  View v;
  v.definition = definition_;
  v.level = evaluateLocked(now);
  v.max_rate = list_.config().rate.enabled ? list_.rateMaximum() : 0;
  v.max_pending = list_.config().pending.enabled ? list_.pendingMaximum() : 0;
  v.rate = list_.emr();
  v.pending = list_.ept();
  v.rate_share = list_.config().rate.enabled ? list_.rateAllowance() : 0;
  v.pending_share = list_.config().pending.enabled ? list_.pendingAllowance() : 0;
  v.nodes.push_back({node_, true, window_.ratePerSecond(now), pendingLocked(), wantingLocked(now), 0, true});
  for (const auto& [node, peer] : peers_) {
    const double age = std::chrono::duration<double>(now - peer.written_at).count();
    const bool counted = list_.counted(peer.id);
    v.nodes.push_back({node, false, peer.rate, peer.pending, peer.wanting, std::max(0.0, age), counted});
    if (!counted) v.unreachable.push_back(node);
  }
  v.held = held_;
  v.admitted = admitted_;
  return v;
}

db::ThrottleReport ThrottleGroup::localReport(as::TimePoint now) {
  std::lock_guard lock(mu_);
  db::ThrottleReport r;
  r.group = definition_.name;
  r.node = node_;
  r.rate = window_.ratePerSecond(now);
  r.pending = static_cast<std::int64_t>(pendingLocked());
  r.wanting = wantingLocked(now);
  return r;
}

void ThrottleGroup::applyPeerReports(const std::vector<db::ThrottleReport>& reports, as::TimePoint read_at) {
  std::lock_guard lock(mu_);
  std::set<std::string> seen;
  for (const db::ThrottleReport& r : reports) {
    if (r.node == node_ || r.group != definition_.name) continue;
    const auto age = std::chrono::milliseconds(std::max<std::int64_t>(0, r.age_ms));
    if (age > kForgetPeer) continue;  // left the list (see the header)
    auto it = peers_.find(r.node);
    if (it == peers_.end()) {
      const dispatch::PeerId id = next_peer_id_;
      if (list_.addPeer(id) == dispatch::PeerUpdate::kListFull) {
        if (!warned_full_) {
          spdlog::warn("throttle group {}: node '{}' reports counts too, but a list has at most {} nodes (DSR "
                       "\"Egress Throttle Lists\"); its traffic is not counted here",
                       definition_.name, r.node, dispatch::kMaxThrottleListPeers + 1);
          warned_full_ = true;
        }
        continue;
      }
      ++next_peer_id_;
      it = peers_.emplace(r.node, PeerState{r.node, id}).first;
      spdlog::info("throttle group {}: node '{}' shares its counts with this node", definition_.name, r.node);
    }
    seen.insert(r.node);
    PeerState& peer = it->second;
    const as::TimePoint written_at = read_at - std::chrono::duration_cast<as::Duration>(age);
    if (written_at < peer.written_at) continue;  // an older read than one applied
    peer.rate = std::isfinite(r.rate) && r.rate > 0 ? r.rate : 0;
    peer.pending = r.pending > 0 ? static_cast<std::uint64_t>(r.pending) : 0;
    peer.wanting = r.wanting;
    peer.written_at = written_at;
    list_.reportPeerCounts(peer.id, peer.rate, peer.pending, written_at, peer.wanting);
  }
  for (auto it = peers_.begin(); it != peers_.end();) {
    if (seen.count(it->first) != 0) {
      ++it;
      continue;
    }
    spdlog::info("throttle group {}: node '{}' left the list (no report)", definition_.name, it->first);
    list_.removePeer(it->second.id);
    it = peers_.erase(it);
  }
}

void ThrottleGroup::carryFrom(ThrottleGroup& previous) {
  std::scoped_lock lock(mu_, previous.mu_);
  window_ = previous.window_;
  pending_ = previous.pending_;
  last_held_ = previous.last_held_;
  held_ = previous.held_;
  admitted_ = previous.admitted_;
  for (const auto& [node, peer] : previous.peers_) {
    if (list_.addPeer(peer.id) != dispatch::PeerUpdate::kApplied) continue;
    peers_.emplace(node, peer);
    if (peer.written_at != as::TimePoint{}) {
      list_.reportPeerCounts(peer.id, peer.rate, peer.pending, peer.written_at, peer.wanting);
    }
    next_peer_id_ = std::max(next_peer_id_, peer.id + 1);
  }
}

// ---- ThrottleGroups ----

ThrottleGroups::ThrottleGroups(const common::TimeSource& clock, std::string node) : clock_(clock), node_(std::move(node)) {}

void ThrottleGroups::apply(std::vector<db::ThrottleGroupDefinition> groups) {
  std::map<std::string, std::shared_ptr<ThrottleGroup>> by_name;
  std::map<std::string, std::shared_ptr<ThrottleGroup>> by_member;
  {
    std::shared_lock lock(mu_);
    for (db::ThrottleGroupDefinition& definition : groups) {
      auto old = by_name_.find(definition.name);
      std::shared_ptr<ThrottleGroup> group;
      if (old != by_name_.end() && old->second->definition() == definition) {
        group = old->second;
      } else {
        group = std::make_shared<ThrottleGroup>(definition, node_);
        if (old != by_name_.end()) group->carryFrom(*old->second);
        spdlog::info("throttle group {}: {} — members {}, max_rate {} msg/s, max_pending {}, {} % less per "
                     "unreachable peer node",
                     definition.name, old != by_name_.end() ? "changed" : "in force", joined(definition.members),
                     definition.max_rate, definition.max_pending, definition.peer_loss_reduction_percent);
      }
      for (const std::string& spid : definition.members) by_member.emplace(spid, group);
      by_name.emplace(definition.name, std::move(group));
    }
    for (const auto& [name, group] : by_name_) {
      if (by_name.count(name) == 0) spdlog::info("throttle group {}: removed", name);
    }
  }
  std::unique_lock lock(mu_);
  by_name_.swap(by_name);
  by_member_.swap(by_member);
}

std::shared_ptr<ThrottleGroup> ThrottleGroups::groupOf(const std::string& spid) const {
  std::shared_lock lock(mu_);
  auto it = by_member_.find(spid);
  return it != by_member_.end() ? it->second : nullptr;
}

std::shared_ptr<ThrottleGroup> ThrottleGroups::find(const std::string& name) const {
  std::shared_lock lock(mu_);
  auto it = by_name_.find(name);
  return it != by_name_.end() ? it->second : nullptr;
}

std::vector<std::shared_ptr<ThrottleGroup>> ThrottleGroups::all() const {
  std::shared_lock lock(mu_);
  std::vector<std::shared_ptr<ThrottleGroup>> out;
  for (const auto& [name, group] : by_name_) out.push_back(group);
  return out;
}

std::vector<db::ThrottleReport> ThrottleGroups::localReports(as::TimePoint now) const {
  std::vector<db::ThrottleReport> out;
  for (const auto& group : all()) out.push_back(group->localReport(now));
  return out;
}

void ThrottleGroups::applyReports(const std::vector<db::ThrottleReport>& reports, as::TimePoint read_at) const {
  std::map<std::string, std::vector<db::ThrottleReport>> by_group;
  for (const db::ThrottleReport& r : reports) by_group[r.group].push_back(r);
  for (const auto& group : all()) group->applyPeerReports(by_group[group->name()], read_at);
}

void ThrottleGroups::setReloadHook(std::function<void()> hook) {
  std::unique_lock lock(mu_);
  reload_hook_ = std::move(hook);
}

void ThrottleGroups::requestReload() const {
  std::function<void()> hook;
  {
    std::shared_lock lock(mu_);
    hook = reload_hook_;
  }
  if (hook) hook();
}

}  // namespace npac::npacd
