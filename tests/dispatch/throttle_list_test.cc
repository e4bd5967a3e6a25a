// Egress throttle list (DSR "Egress Throttle Lists"): peers' counts summed, maxima reduced
// per lost peer.
#include "dispatch/throttle_list.h"

#include <catch2/catch.hpp>

#include <chrono>

namespace npac::dispatch {
namespace {

using std::chrono::seconds;

const TimePoint kT0{};

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
  CHECK_FALSE(exampleList().validate().has_value());
  ThrottleListConfig c = exampleList();
  c.peers = {};
  CHECK(c.validate()->field == "peers");
  c.peers = {1, 2, 3};
  CHECK(c.validate()->field == "peers");
  c.peers = {4, 4};
  CHECK(c.validate()->field == "peers");
  c = exampleList();
  c.reduction_percent_per_lost_peer = 101;
  CHECK(c.validate()->field == "reduction_percent_per_lost_peer");
}

}  // namespace npac::dispatch
