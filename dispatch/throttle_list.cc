// Egress throttle list (DSR "Egress Throttle Lists"). See throttle_list.h for the reduction rule.
#include "dispatch/throttle_list.h"

#include <algorithm>
#include <string>

namespace npac::dispatch {

Status ThrottleListConfig::validate() const {
  if (Status e = rate.validate("rate"); !e.isOk()) return e;
  if (Status e = pending.validate("pending"); !e.isOk()) return e;
  if (peers.size() > kMaxThrottleListPeers) {
    return configError("peers", "a list has at most 2 peers (2–3 groups), got " + std::to_string(peers.size()));
  }
  if (peers.size() == 2 && peers[0] == peers[1]) {
    return configError("peers", "peer " + std::to_string(peers[0]) + " is listed twice");
  }
  if (reduction_percent_per_lost_peer > 100) {
    return configError("reduction_percent_per_lost_peer", "must be 0–100");
  }
  if (stale_after.count() < 0) return configError("stale_after", "must not be negative");
  return Status::ok();
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

const EgressThrottleList::Peer* EgressThrottleList::find(PeerId id) const {
  for (const Peer& p : peers_) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

PeerUpdate EgressThrottleList::reportPeerCounts(PeerId peer, double emr, std::uint64_t ept,
                                                TimePoint now, bool wanting) {
  Peer* p = find(peer);
  if (p == nullptr) return PeerUpdate::kUnknownPeer;
  // A report older than the one kept (reads that overtook each other) changes nothing.
  if (p->reported && now < p->reported_at) return PeerUpdate::kApplied;
  p->emr = emr > 0 ? emr : 0;  // NaN and negatives count as nothing
  p->ept = ept;
  p->reported_at = now;
  p->reported = true;
  p->wanting = wanting;
  return PeerUpdate::kApplied;
}

PeerUpdate EgressThrottleList::addPeer(PeerId peer) {
  if (find(peer) != nullptr) return PeerUpdate::kApplied;
  if (peers_.size() >= kMaxThrottleListPeers) return PeerUpdate::kListFull;
  Peer p{peer, true};
  p.fresh = config_.stale_after.count() == 0;  // no report yet: stale until one arrives
  peers_.push_back(p);
  return PeerUpdate::kApplied;
}

void EgressThrottleList::removePeer(PeerId peer) {
  std::erase_if(peers_, [peer](const Peer& p) { return p.id == peer; });
}

bool EgressThrottleList::hasPeer(PeerId peer) const { return find(peer) != nullptr; }

bool EgressThrottleList::counted(PeerId peer) const {
  const Peer* p = find(peer);
  return p != nullptr && countedPeer(*p);
}

PeerUpdate EgressThrottleList::peerLost(PeerId peer, TimePoint /*now*/) {
  Peer* p = find(peer);
  if (p == nullptr) return PeerUpdate::kUnknownPeer;
  *p = Peer{peer, false};  // its counts are unknown from now on
  p->fresh = config_.stale_after.count() == 0;
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
      std::count_if(peers_.begin(), peers_.end(), [this](const Peer& p) { return !countedPeer(p); }));
}

double EgressThrottleList::reduced(double maximum) const {
  // DSR "Egress Throttle Lists" example: 10,000 msg/s with 50 % per lost connection → 5,000.
  const std::uint64_t cut = std::min<std::uint64_t>(
      100, lostPeers() * static_cast<std::uint64_t>(config_.reduction_percent_per_lost_peer));
  return maximum * static_cast<double>(100 - cut) / 100.0;
}

double EgressThrottleList::rateMaximum() const { return reduced(config_.rate.maximum); }
double EgressThrottleList::pendingMaximum() const { return reduced(config_.pending.maximum); }

double EgressThrottleList::rateAllowance() const { return allowance(rateMaximum(), true); }
double EgressThrottleList::pendingAllowance() const { return allowance(pendingMaximum(), false); }

double EgressThrottleList::allowance(double maximum, bool rate) const {
  const auto nodes = static_cast<double>(1 + peers_.size() - lostPeers());
  double left = maximum;
  for (const Peer& p : peers_) {
    if (!countedPeer(p)) continue;
    const double used = rate ? p.emr : static_cast<double>(p.ept);
    left -= p.wanting ? std::max(used, maximum / nodes) : used;
  }
  return std::max(0.0, left);
}

int EgressThrottleList::evaluate(double local_emr, std::uint64_t local_ept, TimePoint now) {
  emr_ = local_emr;
  ept_ = local_ept;
  for (Peer& p : peers_) {
    p.fresh = config_.stale_after.count() == 0 || (p.reported && now - p.reported_at <= config_.stale_after);
    if (!countedPeer(p)) continue;
    emr_ += p.emr;
    ept_ += p.ept;
  }
  rate_.update(emr_, rateMaximum(), now);
  pending_.update(static_cast<double>(ept_), pendingMaximum(), now);
  return level();
}

int EgressThrottleList::level() const { return std::max(rate_.level(), pending_.level()); }

}  // namespace npac::dispatch
