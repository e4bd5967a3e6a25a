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
//   * Stale reports (npacd's count exchange, docs/OPERATIONS.md "Egress throttling"): with
//     `stale_after` set, a connected peer whose latest report is older than that at
//     evaluate() — or that never reported — counts as lost: its counts leave the sum and
//     the maxima are reduced, until a fresh report arrives. A link that stops carrying
//     reports is a lost link, whatever the reason (a paused node, a cut network, a
//     database that does not answer).
//   * Peers may join and leave (addPeer/removePeer: npacd learns its peers from their
//     reports), up to kMaxThrottleListPeers; a list with no peer is its own group alone.
//   * This node's share (rateAllowance/pendingAllowance, as of the last evaluate): the
//     effective maximum less what each counted peer holds. A peer holds its reported
//     count, or — while it says messages wait for it ("wanting") — at least an equal share
//     of the effective maximum (maximum / counted nodes). So nodes that all have traffic
//     converge on equal shares and their sum stays under the maximum, a node alone uses
//     the whole maximum, and a node that starts sending is not starved by one already at
//     the maximum: it takes what the others leave, they see it wanting and yield to their
//     share. Lost peers are not counted: each node then keeps to the reduced maximum.
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
  std::vector<PeerId> peers;  // 0–2 distinct peers (more may join: addPeer)
  std::uint32_t reduction_percent_per_lost_peer = kDefaultPeerLossReductionPercent;  // 0–100
  bool peers_start_connected = false;
  Duration stale_after{};  // 0: reports never go stale; else see above

  Status validate() const;
};

enum class PeerUpdate : std::uint8_t { kApplied, kUnknownPeer, kListFull };

class EgressThrottleList {
 public:
  explicit EgressThrottleList(ThrottleListConfig config);

  // `now` is when the counts were true (the report's time, for stale_after). `wanting`:
  // the peer holds messages for want of a share.
  PeerUpdate reportPeerCounts(PeerId peer, double emr, std::uint64_t ept, TimePoint now,
                              bool wanting = false);
  PeerUpdate peerLost(PeerId peer, TimePoint now);
  PeerUpdate peerRestored(PeerId peer, TimePoint now);
  // A peer joins (connected, with no report yet) or leaves the list. kListFull beyond
  // kMaxThrottleListPeers; adding a known peer or removing an unknown one changes nothing.
  PeerUpdate addPeer(PeerId peer);
  void removePeer(PeerId peer);
  bool hasPeer(PeerId peer) const;

  // Re-evaluates the list levels with this node's current counts; returns the list
  // level (0–3, the higher of the EMR and EPT levels).
  int evaluate(double local_emr, std::uint64_t local_ept, TimePoint now);
  int level() const;
  int rateLevel() const { return rate_.level(); }
  int pendingLevel() const { return pending_.level(); }

  // Peers not counted as of the last evaluate() (not connected, or stale), and the ids.
  std::size_t lostPeers() const;
  bool counted(PeerId peer) const;
  double rateMaximum() const;     // effective (reduced) EMR maximum
  double pendingMaximum() const;  // effective (reduced) EPT maximum
  // This node's share of the effective maxima as of the last evaluate() (see above).
  double rateAllowance() const;
  double pendingAllowance() const;
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
    bool reported = false;
    bool wanting = false;
    bool fresh = true;  // as of the last evaluate (always with stale_after 0)
  };
  Peer* find(PeerId id);
  const Peer* find(PeerId id) const;
  bool countedPeer(const Peer& p) const { return p.connected && p.fresh; }
  double reduced(double maximum) const;
  double allowance(double maximum, bool rate) const;

  ThrottleListConfig config_;
  std::vector<Peer> peers_;
  CongestionLevelTracker rate_;
  CongestionLevelTracker pending_;
  double emr_ = 0;
  std::uint64_t ept_ = 0;
};

}  // namespace npac::dispatch
