// LogicalAssociation: function filtering (NANC 111) and exactly one association per PDU
// through the provider's egress policy (NANC 353).
#include "associations/logical_association.h"
#include "tests/associations/test_values.h"

#include <catch2/catch.hpp>

#include <map>

using namespace npac::associations;
using namespace npac::associations::testing;
using npac::StatusCode;
using npac::dispatch::MemberState;
using npac::dispatch::PickContext;
using npac::dispatch::PolicyConfig;
using F = AssociationFunction;

namespace {


AssociationSpec spec(AssociationId id, FunctionMask functions, std::uint32_t weight = 1) {
  AssociationSpec s;
  s.id = id;
  s.nsap = Nsap::fromIpv4({127, 0, 0, static_cast<std::uint8_t>(id + 1)});
  s.functions = functions;
  s.bound_order = id;
  s.weight = weight;
  return s;
}

std::unique_ptr<LogicalAssociation> make(const std::string& policy = "round-robin") {
  PolicyConfig config;
  config.name = policy;
  auto made = LogicalAssociation::create("1234", config);
  REQUIRE(made.isOk());
  return std::move(made).value();
}

AssociationId send(LogicalAssociation& logical, F function) {
  const Route route = logical.route(function, PickContext{});
  REQUIRE(route.ok());
  logical.onSent(*route.association, {});
  return *route.association;
}

}  // namespace

TEST_CASE("Three associations and 300 PDUs: 100 each in strict rotation") {
  auto logical = make();
  for (AssociationId id : {1u, 2u, 3u}) REQUIRE(logical->add(spec(id, kSoa)));
  std::map<AssociationId, int> counts;
  for (int pdu = 0; pdu < 300; ++pdu) {
    const AssociationId picked = send(*logical, F::kNotifications);
    CHECK(picked == static_cast<AssociationId>(pdu % 3 + 1));  // join order, then strict turns
    ++counts[picked];
  }
  CHECK(counts == std::map<AssociationId, int>{{1, 100}, {2, 100}, {3, 100}});
}

TEST_CASE("A PDU goes only to associations whose mask has its function") {
  auto logical = make();
  logical->add(spec(1, FunctionMask::of({F::kSoaManagement})));
  logical->add(spec(2, FunctionMask::of({F::kNotifications})));
  logical->add(spec(3, FunctionMask::of({F::kSoaManagement, F::kNotifications})));
  std::map<AssociationId, int> soa;
  std::map<AssociationId, int> notifications;
  for (int i = 0; i < 60; ++i) {
    ++soa[send(*logical, F::kSoaManagement)];
    ++notifications[send(*logical, F::kNotifications)];
  }
  CHECK(soa == std::map<AssociationId, int>{{1, 30}, {3, 30}});
  CHECK(notifications == std::map<AssociationId, int>{{2, 30}, {3, 30}});
}

TEST_CASE("A function no association has is refused as such") {
  auto logical = make();
  logical->add(spec(1, FunctionMask::of({F::kSoaManagement})));
  const Route route = logical->route(F::kLsmsDataDownload, PickContext{});
  REQUIRE_FALSE(route.ok());
  CHECK(route.why == Route::Why::kNoAssociationForFunction);
}

TEST_CASE("A Congested association is skipped by round robin until Available again") {
  auto logical = make();
  for (AssociationId id : {1u, 2u, 3u}) logical->add(spec(id, kSoa));
  logical->setMemberState(2, MemberState::kCongested);
  for (int i = 0; i < 10; ++i) CHECK(send(*logical, F::kQueries) != 2u);
  logical->setMemberState(2, MemberState::kAvailable);
  std::map<AssociationId, int> counts;
  for (int i = 0; i < 30; ++i) ++counts[send(*logical, F::kQueries)];
  CHECK(counts == std::map<AssociationId, int>{{1, 10}, {2, 10}, {3, 10}});
}

TEST_CASE("When every association is Congested the policy says none, with its reason") {
  auto logical = make();
  logical->add(spec(1, kSoa));
  logical->setMemberState(1, MemberState::kCongested);
  const Route route = logical->route(F::kQueries, PickContext{});
  REQUIRE_FALSE(route.ok());
  CHECK(route.why == Route::Why::kPolicyNone);
  CHECK(route.policy_reason == npac::dispatch::NoneReason::kNoneAvailable);
}

TEST_CASE("A releasing association takes no new PDU but stays listed until removed") {
  auto logical = make();
  logical->add(spec(1, kSoa));
  logical->add(spec(2, kSoa));
  logical->startReleasing(1);
  for (int i = 0; i < 5; ++i) CHECK(send(*logical, F::kSoaManagement) == 2u);
  REQUIRE(logical->find(1).has_value());
  CHECK(logical->find(1)->state == AssociationState::kReleasing);
  CHECK(logical->live().size() == 1);
  logical->remove(1);
  CHECK_FALSE(logical->find(1).has_value());
}

TEST_CASE("The provider is available while at least one association is bound") {
  auto logical = make();
  CHECK_FALSE(logical->available());
  logical->add(spec(1, kSoa));
  logical->add(spec(2, kSoa));
  CHECK(logical->available());
  logical->remove(1);
  CHECK(logical->available());
  logical->startReleasing(2);
  CHECK_FALSE(logical->available());
}

TEST_CASE("Losing an association mid-rotation continues over the survivors without skipping") {
  auto logical = make();
  for (AssociationId id : {1u, 2u, 3u}) logical->add(spec(id, kSoa));
  CHECK(send(*logical, F::kQueries) == 1u);
  logical->remove(2);
  CHECK(send(*logical, F::kQueries) == 3u);
  CHECK(send(*logical, F::kQueries) == 1u);
  CHECK(send(*logical, F::kQueries) == 3u);
}

TEST_CASE("A single association carries every PDU of its functions") {
  auto logical = make();
  logical->add(spec(7, kSoa));
  for (int i = 0; i < 10; ++i) CHECK(send(*logical, F::kSoaManagement) == 7u);
}

TEST_CASE("The weighted policy shares PDUs by provisioned weight") {
  auto logical = make("weighted");
  logical->add(spec(1, kSoa, 3));
  logical->add(spec(2, kSoa, 1));
  std::map<AssociationId, int> counts;
  for (int i = 0; i < 400; ++i) ++counts[send(*logical, F::kNotifications)];
  CHECK(counts == std::map<AssociationId, int>{{1, 300}, {2, 100}});
}

TEST_CASE("Changing egress_policy keeps the members") {
  auto logical = make();
  logical->add(spec(1, kSoa, 3));
  logical->add(spec(2, kSoa, 1));
  PolicyConfig weighted;
  weighted.name = "weighted";
  REQUIRE(logical->changePolicy(weighted).isOk());
  CHECK(logical->policyName() == "weighted");
  std::map<AssociationId, int> counts;
  for (int i = 0; i < 40; ++i) ++counts[send(*logical, F::kQueries)];
  CHECK(counts == std::map<AssociationId, int>{{1, 30}, {2, 10}});
}

TEST_CASE("An unknown egress policy is a configuration error, and the old one stays") {
  PolicyConfig bogus;
  bogus.name = "fastest";
  auto made = LogicalAssociation::create("1234", bogus);
  REQUIRE_FALSE(made.isOk());
  CHECK(made.status().code() == StatusCode::kBadEgressPolicy);
  CHECK_FALSE(made.status().message().empty());
  auto logical = make();
  logical->add(spec(1, kSoa));
  CHECK_FALSE(logical->changePolicy(bogus).isOk());
  CHECK(logical->policyName() == "round-robin");
  CHECK(send(*logical, F::kQueries) == 1u);
}

TEST_CASE("Adding an id twice is refused") {
  auto logical = make();
  CHECK(logical->add(spec(1, kSoa)));
  CHECK_FALSE(logical->add(spec(1, kSoa)));
  CHECK(logical->snapshot().size() == 1);
}

TEST_CASE("live() lists bound associations in bind order for the SRR rules") {
  auto logical = make();
  AssociationSpec late = spec(1, kSoa);
  late.bound_order = 50;
  logical->add(late);
  logical->add(spec(2, kSoa));
  const auto live = logical->live();
  REQUIRE(live.size() == 2);
  CHECK(live[0].id == 2u);
  CHECK(live[1].id == 1u);
  const auto plan = planSrrOff(live);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].release == 1u);
  CHECK(plan[0].move_to == 2u);
}

TEST_CASE("An LRTM provider's association figures count its load whatever function carried it") {
  auto logical = make("lrtm");
  REQUIRE(logical->add(spec(1, kSoa, 2)));
  REQUIRE(logical->add(spec(2, FunctionMask::of({F::kNotifications}))));
  // A query leaves on association 1, the only one with queries. Its figures are read from
  // its lowest function's policy (SOA management), which was told of that send too.
  REQUIRE(send(*logical, F::kQueries) == 1);
  const auto one = logical->figures(1);
  REQUIRE(one.has_value());
  CHECK(one->member.active == 1);
  CHECK(one->member.weight == 2);
  REQUIRE(one->nw.has_value());
  CHECK_FALSE(one->measured);
  const auto two = logical->figures(2);
  REQUIRE(two.has_value());
  CHECK(*two->n == 0);
  CHECK_FALSE(logical->figures(9).has_value());
  logical->startReleasing(2);
  CHECK_FALSE(logical->figures(2).has_value());
}
