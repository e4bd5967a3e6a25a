// dispatch/factory: policies by name, errors as Status values (kBadEgressPolicy, "FIELD: REASON").
#include <catch2/catch.hpp>

#include "dispatch/factory.h"

using namespace npac::dispatch;

TEST_CASE("The factory makes each policy by its name", "[factory]") {
  for (std::string_view name : {kRoundRobinName, kWeightedName, kLrtmName}) {
    PolicyConfig cfg;
    cfg.name = std::string(name);
    auto made = makePolicy(cfg);
    REQUIRE(made.isOk());
    CHECK(made.value()->name() == name);
  }
}

TEST_CASE("An unknown policy name is an error value naming the known ones", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "least-connections";
  auto made = makePolicy(cfg);
  REQUIRE_FALSE(made.isOk());
  CHECK(made.status().code() == npac::StatusCode::kBadEgressPolicy);
  CHECK_THAT(made.status().message(), Catch::StartsWith("policy.name: "));
  CHECK(made.status().message().find("least-connections") != std::string::npos);
  CHECK(made.status().message().find("round-robin") != std::string::npos);
}

TEST_CASE("A weighted threshold outside 1-100 % is refused", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "weighted";
  cfg.weighted.threshold_percent_by_rc[20] = 101;
  auto made = makePolicy(cfg);
  REQUIRE_FALSE(made.isOk());
  CHECK_THAT(made.status().message(), Catch::StartsWith("weighted.thresholds[20]: "));
  cfg.weighted.threshold_percent_by_rc[20] = 0;
  CHECK_FALSE(makePolicy(cfg).isOk());
  cfg.weighted.threshold_percent_by_rc[20] = 100;
  CHECK(makePolicy(cfg).isOk());
}

TEST_CASE("The factory passes the weighted thresholds to the policy", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "weighted";
  cfg.weighted.threshold_percent_by_rc[10] = 75;
  auto made = makePolicy(cfg);
  REQUIRE(made.isOk());
  made.value()->addMember(Member{1, 40, 10, MemberState::kAvailable, 0});
  made.value()->addMember(Member{2, 70, 10, MemberState::kProhibited, 0});
  // 40 of 110 < 82: threshold-prohibited.
  CHECK(made.value()->pick({}).reason == NoneReason::kThresholdProhibited);
}

TEST_CASE("An invalid LRTM config is refused with its field", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "lrtm";
  cfg.lrtm.monitor_alpha = 0;
  auto made = makePolicy(cfg);
  REQUIRE_FALSE(made.isOk());
  CHECK_THAT(made.status().message(), Catch::StartsWith("monitor_alpha: "));
}

TEST_CASE("The factory wraps any policy in a throttle", "[factory]") {
  for (std::string_view inner : {kRoundRobinName, kWeightedName, kLrtmName}) {
    PolicyConfig cfg;
    cfg.name = "throttle";
    cfg.inner = std::string(inner);
    auto made = makePolicy(cfg);
    REQUIRE(made.isOk());
    CHECK(made.value()->name() == "throttle(" + std::string(inner) + ")");
    auto* throttled = dynamic_cast<ThrottledPolicy*>(made.value().get());
    REQUIRE(throttled != nullptr);
    CHECK(throttled->inner().name() == inner);
  }
}

TEST_CASE("A throttle around a throttle or an unknown policy is refused", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "throttle";
  cfg.inner = "throttle";
  auto made = makePolicy(cfg);
  REQUIRE_FALSE(made.isOk());
  CHECK_THAT(made.status().message(), Catch::StartsWith("policy.inner: "));
  cfg.inner = "random";
  auto unknown = makePolicy(cfg);
  REQUIRE_FALSE(unknown.isOk());
  CHECK_THAT(unknown.status().message(), Catch::StartsWith("policy.inner: "));
}

TEST_CASE("An invalid throttle group config is refused with its field", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "throttle";
  cfg.throttle_group.pending.enabled = true;
  cfg.throttle_group.pending.maximum = 0;  // must be positive
  auto made = makePolicy(cfg);
  REQUIRE_FALSE(made.isOk());
  CHECK_THAT(made.status().message(), Catch::StartsWith("pending.maximum: "));
}

TEST_CASE("The throttle list reduces its maxima per lost peer (DSR example: 10,000/12,000 at 50 %)",
          "[factory][dsr]") {
  PolicyConfig cfg;
  cfg.name = "throttle";
  ThrottleListConfig list;
  list.rate.enabled = true;
  list.rate.maximum = 10000;
  list.rate.levels = {CongestionThreshold{100, 80}};
  list.pending.enabled = true;
  list.pending.maximum = 12000;
  list.pending.levels = {CongestionThreshold{100, 80}};
  list.peers = {2};
  list.reduction_percent_per_lost_peer = 50;
  list.peers_start_connected = true;
  cfg.throttle_list = list;
  auto made = makePolicy(cfg);
  REQUIRE(made.isOk());
  auto* throttled = dynamic_cast<ThrottledPolicy*>(made.value().get());
  REQUIRE(throttled->list() != nullptr);
  CHECK(throttled->list()->rateMaximum() == Approx(10000));
  throttled->peerLost(2, {});
  CHECK(throttled->list()->rateMaximum() == Approx(5000));
  CHECK(throttled->list()->pendingMaximum() == Approx(6000));
}
