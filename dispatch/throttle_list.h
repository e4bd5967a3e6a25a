// Egress throttle list (DSR "Egress Throttle Lists"): the throttle limits applied
// to the traffic of this node's egress throttle group plus the groups of 1–2 peer nodes.
//
// The DSR guide: a list is "a collection of two or three Egress Throttle Groups, where each
// of those Egress Throttle Groups is configured on a different" node; it "aggregate[s]
// Egress Message Rate and Pending Transaction data from the component Egress Throttle
// Groups and use[s] the aggregated metrics to throttle". So:
//   * aggregated EMR = local EMR + the last EMR reported by each connected peer, and
//     likewise EPT; a lost peer contributes nothing (its counts are unknown);
//   * "if the local [node] is not connected to all other [nodes] ... the Egress Message
//     Rate and Pending Transaction thresholds are reduced according to the Per ...
//     Connection Failure Percent Reduction parameter". We read "per connection failure"
//     literally: each lost peer removes `reduction_percent_per_lost_peer` percent of the
//     configured maximum, additively, floored at zero:
//         effective maximum = maximum × max(0, 100 − lost × reduction) / 100.
//     The guide's example (two groups, so one peer; 10,000 msg/s, 12,000 pending, 50 %):
//     with the peer lost the maxima are 5,000 and 6,000. With two peers and 50 %, both
//     lost gives 0 — configure at most 100 / peers per peer to keep a floor.
//     Onset and abatement thresholds are percentages of the effective maximum ("calculated
//     from these reduced maximums for as long as" the peer is unreachable).
//   * A peer is "not connected" from construction until peerRestored (unless
//     peers_start_connected), and again after peerLost; peerLost forgets its counts.
//     A report from a peer that is not connected is kept but not counted until the peer
//     is restored. The peer transport is not here: callers feed reports and link events.
//
// Threading: none (one strand). Time is passed in.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dispatch/config_error.h"
#include "dispatch/congestion.h"

namespace npac::dispatch {

using PeerId = std::uint32_t;

inline constexpr std::size_t kMaxThrottleListPeers = 2;  // DSR: lists of 2–3 groups
inline constexpr std::uint32_t kDefaultPeerLossReductionPercent = 50;  // the DSR example

struct ThrottleListConfig {
  LimitConfig rate;     // list EMR, maximum in messages per second
  LimitConfig pending;  // list EPT, maximum in transactions
  std::vector<PeerId> peers;  // 1–2 distinct peers
  std::uint32_t reduction_percent_per_lost_peer = kDefaultPeerLossReductionPercent;  // 0–100
  bool peers_start_connected = false;

  std::optional<ConfigError> validate() const;
};

enum class PeerUpdate : std::uint8_t { kApplied, kUnknownPeer };

class EgressThrottleList {
 public:
  explicit EgressThrottleList(ThrottleListConfig config);

  PeerUpdate reportPeerCounts(PeerId peer, double emr, std::uint64_t ept, TimePoint now);
  PeerUpdate peerLost(PeerId peer, TimePoint now);
  PeerUpdate peerRestored(PeerId peer, TimePoint now);

  // Re-evaluates the list levels with this node's current counts; returns the list
  // level (0–3, the higher of the EMR and EPT levels).
  int evaluate(double local_emr, std::uint64_t local_ept, TimePoint now);
  int level() const;
  int rateLevel() const { return rate_.level(); }
  int pendingLevel() const { return pending_.level(); }

  std::size_t lostPeers() const;
  double rateMaximum() const;     // effective (reduced) EMR maximum
  double pendingMaximum() const;  // effective (reduced) EPT maximum
  // Aggregates as of the last evaluate().
  double emr() const { return emr_; }
  std::uint64_t ept() const { return ept_; }
  const ThrottleListConfig& config() const { return config_; }

 private:
  struct Peer {
    PeerId id = 0;
    bool connected = false;
    double emr = 0;
    std::uint64_t ept = 0;
    TimePoint reported_at{};
  };
  Peer* find(PeerId id);
  double reduced(double maximum) const;

  ThrottleListConfig config_;
  std::vector<Peer> peers_;
  CongestionLevelTracker rate_;
  CongestionLevelTracker pending_;
  double emr_ = 0;
  std::uint64_t ept_ = 0;
};

}  // namespace npac::dispatch
