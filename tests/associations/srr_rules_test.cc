// The SRR decision table (NANC 353 / NANC 386, as docs/OPERATIONS.md "SOA Round Robin
// (SRR) and duplicate binds" lays it out), one test case per row and column.
#include "associations/srr_rules.h"

#include <catch2/catch.hpp>

using namespace npac::associations;
using F = AssociationFunction;

namespace {

Nsap ip(std::uint8_t last) { return Nsap::fromIpv4({127, 0, 0, last}); }
const FunctionMask kMask = FunctionMask::of({F::kSoaManagement, F::kNotifications});
const FunctionMask kOther = FunctionMask::of({F::kQueries});

LiveAssociation live(AssociationId id, std::uint8_t host, FunctionMask mask, std::uint64_t order) {
  return LiveAssociation{id, ip(host), mask, order};
}

constexpr bool kOff = false;
constexpr bool kOn = true;

}  // namespace

TEST_CASE("SRR off: the first bind for a function mask is accepted") {
  const std::vector<LiveAssociation> up = {live(1, 2, kOther, 1)};
  auto d = decideBind(up, ip(3), kMask, false, kOff, DuplicateBind::kReplace);
  CHECK(d.kind == BindDecision::Kind::kAccept);
  auto none = decideBind({}, ip(3), kMask, false, kOff, DuplicateBind::kReject);
  CHECK(none.kind == BindDecision::Kind::kAccept);
}

TEST_CASE("SRR on: the first bind for a function mask is accepted") {
  auto d = decideBind({}, ip(3), kMask, false, kOn, DuplicateBind::kReplace);
  CHECK(d.kind == BindDecision::Kind::kAccept);
}

TEST_CASE("SRR off, duplicate_bind replace: the same mask from another NSAP replaces the old one") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1)};
  auto d = decideBind(up, ip(3), kMask, false, kOff, DuplicateBind::kReplace);
  REQUIRE(d.kind == BindDecision::Kind::kAcceptReplacing);
  CHECK(d.replaced == 1u);
}

TEST_CASE("SRR off, duplicate_bind reject: the same mask from another NSAP is rejected") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1)};
  auto d = decideBind(up, ip(3), kMask, false, kOff, DuplicateBind::kReject);
  REQUIRE(d.kind == BindDecision::Kind::kReject);
  CHECK(d.rejection == BindDiagnostic::kDuplicateBindRejected);
}

TEST_CASE("SRR on: the same mask from another NSAP is accepted as another member") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1), live(2, 3, kMask, 2)};
  auto d = decideBind(up, ip(4), kMask, false, kOn, DuplicateBind::kReject);
  CHECK(d.kind == BindDecision::Kind::kAccept);
}

TEST_CASE("SRR off: the same mask from the NSAP of a live association replaces it") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1)};
  for (auto duplicate : {DuplicateBind::kReplace, DuplicateBind::kReject}) {
    auto d = decideBind(up, ip(2), kMask, false, kOff, duplicate);
    REQUIRE(d.kind == BindDecision::Kind::kAcceptReplacing);
    CHECK(d.replaced == 1u);
  }
}

TEST_CASE("SRR on: the same mask from the NSAP of a live association replaces that one only") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1), live(2, 3, kMask, 2),
                                           live(3, 4, kMask, 3)};
  auto d = decideBind(up, ip(3), kMask, false, kOn, DuplicateBind::kReplace);
  REQUIRE(d.kind == BindDecision::Kind::kAcceptReplacing);
  CHECK(d.replaced == 2u);
}

TEST_CASE("SRR off: a recovery-mode bind while any association is up is rejected") {
  const std::vector<LiveAssociation> up = {live(1, 2, kOther, 1)};
  auto d = decideBind(up, ip(3), kMask, true, kOff, DuplicateBind::kReplace);
  REQUIRE(d.kind == BindDecision::Kind::kReject);
  CHECK(d.rejection == BindDiagnostic::kRecoveryModeWhileUp);
}

TEST_CASE("SRR on: a recovery-mode bind while any association is up is rejected") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1)};
  // Even from the NSAP of the live one: NANC 353 7.b.vi comes before replacement.
  auto d = decideBind(up, ip(2), kMask, true, kOn, DuplicateBind::kReplace);
  REQUIRE(d.kind == BindDecision::Kind::kReject);
  CHECK(d.rejection == BindDiagnostic::kRecoveryModeWhileUp);
}

TEST_CASE("A recovery-mode bind with no association up is accepted") {
  auto d = decideBind({}, ip(2), kMask, true, kOff, DuplicateBind::kReplace);
  CHECK(d.kind == BindDecision::Kind::kAccept);
}

TEST_CASE("A different mask from the same NSAP is another association, not a replacement") {
  const std::vector<LiveAssociation> up = {live(1, 2, kOther, 1)};
  auto d = decideBind(up, ip(2), kMask, false, kOff, DuplicateBind::kReject);
  CHECK(d.kind == BindDecision::Kind::kAccept);
}

TEST_CASE("SRR off with several sharing a mask: a duplicate replaces the earliest-bound") {
  const std::vector<LiveAssociation> up = {live(5, 2, kMask, 30), live(6, 3, kMask, 10),
                                           live(7, 4, kMask, 20)};
  auto d = decideBind(up, ip(9), kMask, false, kOff, DuplicateBind::kReplace);
  REQUIRE(d.kind == BindDecision::Kind::kAcceptReplacing);
  CHECK(d.replaced == 6u);
}

TEST_CASE("SRR turned off: the earliest-bound stays and the others move to it, then release") {
  const std::vector<LiveAssociation> up = {live(5, 2, kMask, 30), live(6, 3, kMask, 10),
                                           live(7, 4, kMask, 20)};
  const auto plan = planSrrOff(up);
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].release == 7u);
  CHECK(plan[0].move_to == 6u);
  CHECK(plan[1].release == 5u);
  CHECK(plan[1].move_to == 6u);
}

TEST_CASE("SRR turned off: each function mask keeps its own earliest-bound association") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1), live(2, 2, kOther, 2),
                                           live(3, 3, kMask, 3), live(4, 3, kOther, 4)};
  const auto plan = planSrrOff(up);
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].release == 3u);
  CHECK(plan[0].move_to == 1u);
  CHECK(plan[1].release == 4u);
  CHECK(plan[1].move_to == 2u);
}

TEST_CASE("SRR turned off with one association per mask releases nothing") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1), live(2, 3, kOther, 2)};
  CHECK(planSrrOff(up).empty());
}

TEST_CASE("SRR turned off: equal bind order falls back to the smaller id") {
  const std::vector<LiveAssociation> up = {live(9, 2, kMask, 5), live(4, 3, kMask, 5)};
  const auto plan = planSrrOff(up);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].release == 9u);
  CHECK(plan[0].move_to == 4u);
}

TEST_CASE("SRR turned on: a bind from another NSAP is accepted at once") {
  const std::vector<LiveAssociation> up = {live(1, 2, kMask, 1)};
  // The same live set, the same bind: only the live srr value differs.
  CHECK(decideBind(up, ip(3), kMask, false, kOff, DuplicateBind::kReject).kind ==
        BindDecision::Kind::kReject);
  CHECK(decideBind(up, ip(3), kMask, false, kOn, DuplicateBind::kReject).kind ==
        BindDecision::Kind::kAccept);
}
