// dispatch/factory: policies by name, errors as values.
#include <catch2/catch.hpp>

#include "dispatch/factory.h"

using namespace npac::dispatch;

TEST_CASE("The factory makes each policy by its name", "[factory]") {
  for (std::string_view name : {kRoundRobinName, kWeightedName, kLrtmName}) {
    PolicyConfig cfg;
    cfg.name = std::string(name);
    PolicyOrError made = makePolicy(cfg);
    REQUIRE(made.ok());
    CHECK_FALSE(made.error);
    CHECK(made.policy->name() == name);
  }
}

TEST_CASE("An unknown policy name is an error value naming the known ones", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "least-connections";
  PolicyOrError made = makePolicy(cfg);
  CHECK_FALSE(made.ok());
  REQUIRE(made.error);
  CHECK(made.error->field == "policy.name");
  CHECK(made.error->reason.find("least-connections") != std::string::npos);
  CHECK(made.error->reason.find("round-robin") != std::string::npos);
}

TEST_CASE("A weighted threshold outside 1-100 % is refused", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "weighted";
  cfg.weighted.threshold_percent_by_rc[20] = 101;
  PolicyOrError made = makePolicy(cfg);
  CHECK_FALSE(made.ok());
  REQUIRE(made.error);
  CHECK(made.error->field == "weighted.thresholds[20]");
  cfg.weighted.threshold_percent_by_rc[20] = 0;
  CHECK_FALSE(makePolicy(cfg).ok());
  cfg.weighted.threshold_percent_by_rc[20] = 100;
  CHECK(makePolicy(cfg).ok());
}

TEST_CASE("The factory passes the weighted thresholds to the policy", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "weighted";
  cfg.weighted.threshold_percent_by_rc[10] = 75;
  PolicyOrError made = makePolicy(cfg);
  REQUIRE(made.ok());
  made.policy->addMember(Member{1, 40, 10, MemberState::kAvailable, 0});
  made.policy->addMember(Member{2, 70, 10, MemberState::kProhibited, 0});
  // 40 of 110 < 82: threshold-prohibited.
  CHECK(made.policy->pick({}).reason == NoneReason::kThresholdProhibited);
}

TEST_CASE("An invalid LRTM config is refused with its field", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "lrtm";
  cfg.lrtm.monitor_alpha = 0;
  PolicyOrError made = makePolicy(cfg);
  CHECK_FALSE(made.ok());
  REQUIRE(made.error);
  CHECK_FALSE(made.error->field.empty());
}

TEST_CASE("The factory wraps any policy in a throttle", "[factory]") {
  for (std::string_view inner : {kRoundRobinName, kWeightedName, kLrtmName}) {
    PolicyConfig cfg;
    cfg.name = "throttle";
    cfg.inner = std::string(inner);
    PolicyOrError made = makePolicy(cfg);
    REQUIRE(made.ok());
    CHECK(made.policy->name() == "throttle(" + std::string(inner) + ")");
    auto* throttled = dynamic_cast<ThrottledPolicy*>(made.policy.get());
    REQUIRE(throttled != nullptr);
    CHECK(throttled->inner().name() == inner);
  }
}

TEST_CASE("A throttle around a throttle or an unknown policy is refused", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "throttle";
  cfg.inner = "throttle";
  PolicyOrError made = makePolicy(cfg);
  REQUIRE(made.error);
  CHECK(made.error->field == "policy.inner");
  cfg.inner = "random";
  made = makePolicy(cfg);
  REQUIRE(made.error);
  CHECK(made.error->field == "policy.inner");
}

TEST_CASE("An invalid throttle group config is refused with its field", "[factory]") {
  PolicyConfig cfg;
  cfg.name = "throttle";
  cfg.throttle_group.pending.enabled = true;
  cfg.throttle_group.pending.maximum = 0;  // must be positive
  PolicyOrError made = makePolicy(cfg);
  CHECK_FALSE(made.ok());
  REQUIRE(made.error);
  CHECK(made.error->field.find("maximum") != std::string::npos);
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
  PolicyOrError made = makePolicy(cfg);
  REQUIRE(made.ok());
  auto* throttled = dynamic_cast<ThrottledPolicy*>(made.policy.get());
  REQUIRE(throttled->list() != nullptr);
  CHECK(throttled->list()->rateMaximum() == Approx(10000));
  throttled->peerLost(2, {});
  CHECK(throttled->list()->rateMaximum() == Approx(5000));
  CHECK(throttled->list()->pendingMaximum() == Approx(6000));
}
