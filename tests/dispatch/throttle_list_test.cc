// Egress throttle list (DSR "Egress Throttle Lists"): peers' counts summed, maxima reduced
// per lost peer.
#include "dispatch/throttle_list.h"

#include <catch2/catch.hpp>

#include "tests/dispatch/test_epoch.h"

#include <chrono>
#include <cmath>

namespace npac::dispatch {
namespace {

using std::chrono::seconds;

using testing::kT0;

// DSR "Egress Throttle Lists": "The maximum rate for the ETL is 10,000 messages per
// second, and the maximum number of pending transactions is 12,000. The per-connection
// percent reduction value for each ETG is 50". Two groups in the list: this node and one peer.
ThrottleListConfig exampleList() {
  ThrottleListConfig c;
  c.rate.enabled = true;
  c.rate.maximum = 10000;
  c.rate.levels = {{100, 80}};
  c.pending.enabled = true;
  c.pending.maximum = 12000;
  c.pending.levels = {{100, 80}};
  c.peers = {2};
  c.reduction_percent_per_lost_peer = 50;
  c.peers_start_connected = true;
  return c;
}

}  // namespace

TEST_CASE("DSR example: losing the peer cuts 10,000 msg/s and 12,000 pending to 5,000 and 6,000",
          "[throttle][list][dsr]") {
  EgressThrottleList l(exampleList());
  CHECK(l.rateMaximum() == 10000);
  CHECK(l.pendingMaximum() == 12000);
  REQUIRE(l.peerLost(2, kT0) == PeerUpdate::kApplied);
  CHECK(l.lostPeers() == 1);
  CHECK(l.rateMaximum() == 5000);
  CHECK(l.pendingMaximum() == 6000);
  REQUIRE(l.peerRestored(2, kT0 + seconds(5)) == PeerUpdate::kApplied);
  CHECK(l.rateMaximum() == 10000);
  CHECK(l.pendingMaximum() == 12000);
}

TEST_CASE("DSR example: thresholds follow the reduced maxima while the peer is lost",
          "[throttle][list][dsr]") {
  EgressThrottleList l(exampleList());
  CHECK(l.evaluate(5001, 0, kT0) == 0);  // 5,001 msg/s of 10,000
  l.peerLost(2, kT0);
  CHECK(l.evaluate(5001, 0, kT0) == 1);  // exceeds 100 % of 5,000
  CHECK(l.rateLevel() == 1);
  EgressThrottleList m(exampleList());
  m.peerLost(2, kT0);
  CHECK(m.evaluate(0, 6000, kT0) == 0);
  CHECK(m.evaluate(0, 6001, kT0) == 1);  // exceeds 100 % of 6,000
  CHECK(m.pendingLevel() == 1);
}

TEST_CASE("The list sums this node's counts and every connected peer's", "[throttle][list]") {
  ThrottleListConfig c = exampleList();
  c.peers = {2, 3};
  EgressThrottleList l(c);
  l.reportPeerCounts(2, 3000, 4000, kT0);
  l.reportPeerCounts(3, 3500, 4000, kT0);
  CHECK(l.evaluate(3000, 3999, kT0) == 0);
  CHECK(l.emr() == 9500);
  CHECK(l.ept() == 11999);
  CHECK(l.evaluate(3501, 3999, kT0) == 1);  // 10,001 msg/s
  CHECK(l.emr() == 10001);
}

TEST_CASE("A lost peer's counts leave the sum and are forgotten", "[throttle][list]") {
  EgressThrottleList l(exampleList());
  l.reportPeerCounts(2, 4000, 100, kT0);
  l.evaluate(1000, 0, kT0);
  CHECK(l.emr() == 5000);
  l.peerLost(2, kT0);
  l.evaluate(1000, 0, kT0);
  CHECK(l.emr() == 1000);
  l.peerRestored(2, kT0);
  l.evaluate(1000, 0, kT0);
  CHECK(l.emr() == 1000);  // nothing reported since the link came back
}

TEST_CASE("Each lost peer removes the reduction percentage again", "[throttle][list]") {
  ThrottleListConfig c = exampleList();
  c.peers = {2, 3};
  c.reduction_percent_per_lost_peer = 30;
  EgressThrottleList l(c);
  l.peerLost(2, kT0);
  CHECK(l.rateMaximum() == 7000);
  CHECK(l.pendingMaximum() == 8400);
  l.peerLost(3, kT0);
  CHECK(l.rateMaximum() == 4000);
  CHECK(l.pendingMaximum() == 4800);
}

TEST_CASE("The reduction floors at zero", "[throttle][list]") {
  ThrottleListConfig c = exampleList();
  c.peers = {2, 3};
  EgressThrottleList l(c);
  l.peerLost(2, kT0);
  l.peerLost(3, kT0);
  CHECK(l.rateMaximum() == 0);
  CHECK(l.evaluate(0, 0, kT0) == 0);
  CHECK(l.evaluate(1, 0, kT0) == 1);
}

TEST_CASE("Peers count as lost until they are first connected", "[throttle][list]") {
  ThrottleListConfig c = exampleList();
  c.peers_start_connected = false;
  EgressThrottleList l(c);
  CHECK(l.lostPeers() == 1);
  CHECK(l.rateMaximum() == 5000);
  l.reportPeerCounts(2, 100, 0, kT0);
  l.evaluate(0, 0, kT0);
  CHECK(l.emr() == 0);  // kept, but not counted while the peer is not connected
  l.peerRestored(2, kT0);
  l.evaluate(0, 0, kT0);
  CHECK(l.emr() == 100);
}

TEST_CASE("Unknown peers are reported, not applied", "[throttle][list]") {
  EgressThrottleList l(exampleList());
  CHECK(l.reportPeerCounts(9, 1, 1, kT0) == PeerUpdate::kUnknownPeer);
  CHECK(l.peerLost(9, kT0) == PeerUpdate::kUnknownPeer);
  CHECK(l.peerRestored(9, kT0) == PeerUpdate::kUnknownPeer);
  CHECK(l.lostPeers() == 0);
}

TEST_CASE("List validation rejects bad peer sets and reductions", "[throttle][list]") {
  CHECK(exampleList().validate().isOk());
  ThrottleListConfig c = exampleList();
  c.peers = {};
  CHECK(c.validate().isOk());  // a list alone is its own group; peers may join
  c.peers = {1, 2, 3};
  CHECK_THAT(c.validate().message(), Catch::StartsWith("peers: "));
  c.peers = {4, 4};
  CHECK_THAT(c.validate().message(), Catch::StartsWith("peers: "));
  c = exampleList();
  c.reduction_percent_per_lost_peer = 101;
  CHECK_THAT(c.validate().message(), Catch::StartsWith("reduction_percent_per_lost_peer: "));
  c = exampleList();
  c.stale_after = std::chrono::milliseconds(-1);
  CHECK_THAT(c.validate().message(), Catch::StartsWith("stale_after: "));
}

// ---- npacd's count exchange: stale reports, peers that join, this node's share ----

namespace {

// The DSR example as npacd runs it: peers learnt from their reports, 1.5 s stale bound.
constexpr auto kStale = std::chrono::milliseconds(1500);
ThrottleListConfig exchangedList() {
  ThrottleListConfig c = exampleList();
  c.peers = {};
  c.stale_after = kStale;
  return c;
}

}  // namespace

TEST_CASE("DSR example on the exchange: a peer whose reports stop is lost after the stale bound",
          "[throttle][list][dsr]") {
  EgressThrottleList l(exchangedList());
  REQUIRE(l.addPeer(2) == PeerUpdate::kApplied);
  l.reportPeerCounts(2, 3000, 4000, kT0);
  l.evaluate(1000, 1000, kT0 + seconds(1));
  CHECK(l.lostPeers() == 0);
  CHECK(l.emr() == 4000);
  CHECK(l.ept() == 5000);
  CHECK(l.rateMaximum() == 10000);
  CHECK(l.pendingMaximum() == 12000);
  // At exactly the bound the report still counts; past it the peer is lost.
  l.evaluate(1000, 1000, kT0 + kStale);
  CHECK(l.lostPeers() == 0);
  l.evaluate(1000, 1000, kT0 + kStale + std::chrono::milliseconds(1));
  CHECK(l.lostPeers() == 1);
  CHECK_FALSE(l.counted(2));
  CHECK(l.emr() == 1000);  // the stale report is ignored
  CHECK(l.ept() == 1000);
  CHECK(l.rateMaximum() == 5000);
  CHECK(l.pendingMaximum() == 6000);
  CHECK(l.rateAllowance() == 5000);
  CHECK(l.pendingAllowance() == 6000);
  // A fresh report restores the maxima.
  l.reportPeerCounts(2, 100, 200, kT0 + seconds(3));
  l.evaluate(1000, 1000, kT0 + seconds(3));
  CHECK(l.lostPeers() == 0);
  CHECK(l.rateMaximum() == 10000);
  CHECK(l.pendingMaximum() == 12000);
}

TEST_CASE("A peer that joined and never reported counts as lost", "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.addPeer(2);
  l.evaluate(0, 0, kT0);
  CHECK(l.lostPeers() == 1);
  CHECK(l.rateMaximum() == 5000);
}

TEST_CASE("Three nodes: one peer lost halves the maxima, both lost leave nothing at 50 %",
          "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.addPeer(2);
  l.addPeer(3);
  CHECK(l.addPeer(4) == PeerUpdate::kListFull);  // DSR: lists of two or three groups
  CHECK_FALSE(l.hasPeer(4));
  l.reportPeerCounts(2, 1000, 100, kT0);
  l.reportPeerCounts(3, 2000, 200, kT0 + seconds(1));
  l.evaluate(500, 50, kT0 + seconds(1));
  CHECK(l.lostPeers() == 0);
  CHECK(l.emr() == 3500);
  CHECK(l.ept() == 350);
  l.evaluate(500, 50, kT0 + seconds(2));  // peer 2's report is 2 s old, peer 3's 1 s
  CHECK(l.lostPeers() == 1);
  CHECK(l.emr() == 2500);
  CHECK(l.rateMaximum() == 5000);
  CHECK(l.pendingMaximum() == 6000);
  l.evaluate(500, 50, kT0 + seconds(3));  // both stale
  CHECK(l.lostPeers() == 2);
  CHECK(l.rateMaximum() == 0);
  CHECK(l.pendingMaximum() == 0);
}

TEST_CASE("Three nodes at 25 % per lost peer keep 75 % and 50 % of the maxima", "[throttle][list]") {
  ThrottleListConfig c = exchangedList();
  c.reduction_percent_per_lost_peer = 25;
  EgressThrottleList l(c);
  l.addPeer(2);
  l.addPeer(3);
  l.reportPeerCounts(2, 0, 0, kT0 + seconds(1));
  l.evaluate(0, 0, kT0 + seconds(1));
  CHECK(l.lostPeers() == 1);  // 3 never reported
  CHECK(l.rateMaximum() == 7500);
  CHECK(l.pendingMaximum() == 9000);
  l.evaluate(0, 0, kT0 + seconds(5));
  CHECK(l.lostPeers() == 2);
  CHECK(l.rateMaximum() == 5000);
  CHECK(l.pendingMaximum() == 6000);
}

TEST_CASE("A removed peer no longer reduces the maxima", "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.addPeer(2);
  l.evaluate(0, 0, kT0);
  CHECK(l.rateMaximum() == 5000);
  l.removePeer(2);
  l.evaluate(0, 0, kT0);
  CHECK(l.lostPeers() == 0);
  CHECK(l.rateMaximum() == 10000);
}

TEST_CASE("A report older than the one kept changes nothing", "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.addPeer(2);
  l.reportPeerCounts(2, 300, 3, kT0 + seconds(1));
  l.reportPeerCounts(2, 900, 9, kT0);
  l.evaluate(0, 0, kT0 + seconds(1));
  CHECK(l.emr() == 300);
  CHECK(l.ept() == 3);
}

TEST_CASE("A node alone may use the whole maximum", "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.evaluate(0, 0, kT0);
  CHECK(l.rateAllowance() == 10000);
  CHECK(l.pendingAllowance() == 12000);
}

TEST_CASE("This node's share is what an idle peer leaves, and half while the peer wants more",
          "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.addPeer(2);
  l.reportPeerCounts(2, 1000, 2000, kT0);
  l.evaluate(0, 0, kT0);
  CHECK(l.rateAllowance() == 9000);
  CHECK(l.pendingAllowance() == 10000);
  // The peer holds messages: it is reserved at least an equal share.
  l.reportPeerCounts(2, 1000, 2000, kT0 + seconds(1), true);
  l.evaluate(0, 0, kT0 + seconds(1));
  CHECK(l.rateAllowance() == 5000);
  CHECK(l.pendingAllowance() == 6000);
  // A wanting peer already above its share keeps what it uses until it yields.
  l.reportPeerCounts(2, 8000, 9000, kT0 + seconds(2), true);
  l.evaluate(0, 0, kT0 + seconds(2));
  CHECK(l.rateAllowance() == 2000);
  CHECK(l.pendingAllowance() == 3000);
  // Never below zero.
  l.reportPeerCounts(2, 20000, 20000, kT0 + seconds(3));
  l.evaluate(0, 0, kT0 + seconds(3));
  CHECK(l.rateAllowance() == 0);
}

TEST_CASE("Three wanting nodes each get a third", "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.addPeer(2);
  l.addPeer(3);
  l.reportPeerCounts(2, 0, 0, kT0, true);
  l.reportPeerCounts(3, 0, 0, kT0, true);
  l.evaluate(0, 0, kT0);
  CHECK(l.rateAllowance() == Approx(10000.0 / 3));
  CHECK(l.pendingAllowance() == Approx(4000));
}

TEST_CASE("A lost peer is not reserved a share: this node keeps to the reduced maximum",
          "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.addPeer(2);
  l.reportPeerCounts(2, 4000, 0, kT0, true);
  l.evaluate(0, 0, kT0 + seconds(2));
  CHECK(l.rateAllowance() == 5000);
}

TEST_CASE("A negative or NaN rate reported counts as nothing", "[throttle][list]") {
  EgressThrottleList l(exchangedList());
  l.addPeer(2);
  l.reportPeerCounts(2, -5, 0, kT0);
  l.evaluate(0, 0, kT0);
  CHECK(l.emr() == 0);
  l.reportPeerCounts(2, std::nan(""), 0, kT0);
  l.evaluate(0, 0, kT0);
  CHECK(l.emr() == 0);
}

}  // namespace npac::dispatch
