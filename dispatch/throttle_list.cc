// Egress throttle list (DSR "Egress Throttle Lists"). See throttle_list.h for the reduction rule.
#include "dispatch/throttle_list.h"

#include <algorithm>
#include <string>

namespace npac::dispatch {

std::optional<ConfigError> ThrottleListConfig::validate() const {
  if (auto e = rate.validate("rate")) return e;
  if (auto e = pending.validate("pending")) return e;
  if (peers.empty() || peers.size() > kMaxThrottleListPeers) {
    return ConfigError{"peers", "a list has 1 or 2 peers (2–3 groups), got " +
                                    std::to_string(peers.size())};
  }
  if (peers.size() == 2 && peers[0] == peers[1]) {
    return ConfigError{"peers", "peer " + std::to_string(peers[0]) + " is listed twice"};
  }
  if (reduction_percent_per_lost_peer > 100) {
    return ConfigError{"reduction_percent_per_lost_peer", "must be 0–100"};
  }
  return std::nullopt;
}

EgressThrottleList::EgressThrottleList(ThrottleListConfig config)
    : config_(std::move(config)), rate_(config_.rate), pending_(config_.pending) {
  for (PeerId id : config_.peers) {
    if (find(id) == nullptr) peers_.push_back(Peer{id, config_.peers_start_connected});
  }
}

EgressThrottleList::Peer* EgressThrottleList::find(PeerId id) {
  for (Peer& p : peers_) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

PeerUpdate EgressThrottleList::reportPeerCounts(PeerId peer, double emr, std::uint64_t ept,
                                                TimePoint now) {
  Peer* p = find(peer);
  if (p == nullptr) return PeerUpdate::kUnknownPeer;
  p->emr = emr < 0 ? 0 : emr;
  p->ept = ept;
  p->reported_at = now;
  return PeerUpdate::kApplied;
}

PeerUpdate EgressThrottleList::peerLost(PeerId peer, TimePoint /*now*/) {
  Peer* p = find(peer);
  if (p == nullptr) return PeerUpdate::kUnknownPeer;
  *p = Peer{peer, false};  // its counts are unknown from now on
  return PeerUpdate::kApplied;
}

PeerUpdate EgressThrottleList::peerRestored(PeerId peer, TimePoint /*now*/) {
  Peer* p = find(peer);
  if (p == nullptr) return PeerUpdate::kUnknownPeer;
  p->connected = true;
  return PeerUpdate::kApplied;
}

std::size_t EgressThrottleList::lostPeers() const {
  return static_cast<std::size_t>(
      std::count_if(peers_.begin(), peers_.end(), [](const Peer& p) { return !p.connected; }));
}

double EgressThrottleList::reduced(double maximum) const {
  // DSR "Egress Throttle Lists" example: 10,000 msg/s with 50 % per lost connection → 5,000.
  const std::uint64_t cut = std::min<std::uint64_t>(
      100, lostPeers() * static_cast<std::uint64_t>(config_.reduction_percent_per_lost_peer));
  return maximum * static_cast<double>(100 - cut) / 100.0;
}

double EgressThrottleList::rateMaximum() const { return reduced(config_.rate.maximum); }
double EgressThrottleList::pendingMaximum() const { return reduced(config_.pending.maximum); }

int EgressThrottleList::evaluate(double local_emr, std::uint64_t local_ept, TimePoint now) {
  emr_ = local_emr;
  ept_ = local_ept;
  for (const Peer& p : peers_) {
    if (!p.connected) continue;
    emr_ += p.emr;
    ept_ += p.ept;
  }
  rate_.update(emr_, rateMaximum(), now);
  pending_.update(static_cast<double>(ept_), pendingMaximum(), now);
  return level();
}

int EgressThrottleList::level() const { return std::max(rate_.level(), pending_.level()); }

}  // namespace npac::dispatch
