// ConnectionLimits (npac/npacd/api/connection_limits.h) on its own, without sockets: the
// exact order in which connections are closed for room, and what a refusal leaves as it
// was. The server's behaviour on real connections is in admin_api_flood_test.cc and
// admin_api_limits_test.cc.
#include <catch2/catch.hpp>

#include <array>

#include "npac/npacd/api/connection_limits.h"

namespace npac::npacd {
namespace {

using Refusal = ConnectionLimits::Refusal;

ConnectionLimits::Limits small() {
  ConnectionLimits::Limits limits;
  limits.max_connections = 3;
  limits.operator_reserve = 1;
  limits.max_per_client = 2;
  limits.max_per_credential = 8;
  limits.max_anonymous = 3;
  return limits;
}

ConnectionAccount from(const std::string& address) {
  ConnectionAccount account;
  account.address = address;
  return account;
}

}  // namespace

TEST_CASE("ConnectionLimits closes anonymous connections oldest first, per address and then in all") {
  ConnectionLimits limits(small());
  std::array<ConnectionAccount, 5> a{from("10.0.0.1"), from("10.0.0.1"), from("10.0.0.2"), from("10.0.0.1"),
                                     from("10.0.0.3")};
  CHECK(limits.accept(a[0]).empty());
  CHECK(limits.accept(a[1]).empty());
  CHECK(limits.accept(a[2]).empty());
  // A third from 10.0.0.1: that address's oldest goes.
  CHECK(limits.accept(a[3]) == std::vector<ConnectionAccount*>{&a[0]});
  // A fourth anonymous in all: the oldest of all goes.
  CHECK(limits.accept(a[4]) == std::vector<ConnectionAccount*>{&a[1]});
  CHECK(limits.anonymous() == 3);
}

TEST_CASE("ConnectionLimits takes a connection out of the anonymous pool once it presents a credential") {
  ConnectionLimits limits(small());
  ConnectionAccount reader = from("10.0.0.1");
  limits.accept(reader);
  CHECK(limits.admit(reader, RequestPriority::kReader, 7).refusal == Refusal::kNone);
  CHECK(limits.anonymous() == 0);
  CHECK(limits.credentialed() == 1);
  // Anonymous newcomers from its address no longer see it, and never close it.
  std::array<ConnectionAccount, 3> flood{from("10.0.0.1"), from("10.0.0.1"), from("10.0.0.1")};
  for (ConnectionAccount& a : flood) {
    for (ConnectionAccount* closed : limits.accept(a)) CHECK(closed != &reader);
  }
  CHECK(reader.pool == ConnectionAccount::Pool::kCredentialed);
}

TEST_CASE("A request without a credential leaves a credentialed connection where it is") {
  ConnectionLimits limits(small());
  ConnectionAccount op = from("10.0.0.1");
  limits.accept(op);
  REQUIRE(limits.admit(op, RequestPriority::kOperator, 1).refusal == Refusal::kNone);
  CHECK(limits.admit(op, RequestPriority::kAnonymous, std::nullopt).refusal == Refusal::kNone);
  CHECK(op.priority == RequestPriority::kOperator);
  CHECK(op.credential == std::optional<std::size_t>(1));
  CHECK(limits.credentialed() == 1);
}

TEST_CASE("ConnectionLimits counts each role apart per address") {
  ConnectionLimits limits(small());
  std::array<ConnectionAccount, 4> a{from("10.0.0.1"), from("10.0.0.1"), from("10.0.0.1"), from("10.0.0.1")};
  for (ConnectionAccount& account : a) limits.accept(account);
  CHECK(limits.admit(a[0], RequestPriority::kReader, 1).refusal == Refusal::kNone);
  CHECK(limits.admit(a[1], RequestPriority::kReader, 2).refusal == Refusal::kNone);
  ConnectionLimits::Admission third = limits.admit(a[2], RequestPriority::kReader, 3);
  CHECK(third.refusal == Refusal::kPerClient);
  CHECK(third.holding == 2);
  CHECK(a[2].pool == ConnectionAccount::Pool::kAnonymous);  // a refusal changes nothing
  CHECK(limits.admit(a[3], RequestPriority::kOperator, 4).refusal == Refusal::kNone);
}

TEST_CASE("ConnectionLimits makes room from the longest-idle non-operator and refuses without closing when none is idle") {
  ConnectionLimits limits(small());  // 3 with a credential, the last for operators
  std::array<ConnectionAccount, 5> a{from("10.0.0.1"), from("10.0.0.2"), from("10.0.0.3"), from("10.0.0.4"),
                                     from("10.0.0.5")};
  for (ConnectionAccount& account : a) limits.accept(account);
  REQUIRE(limits.admit(a[0], RequestPriority::kOperator, 1).refusal == Refusal::kNone);
  REQUIRE(limits.admit(a[1], RequestPriority::kReader, 2).refusal == Refusal::kNone);
  REQUIRE(limits.admit(a[2], RequestPriority::kReader, 3).refusal == Refusal::kNone);
  for (ConnectionAccount* busy : {&a[0], &a[1], &a[2]}) busy->idle = false;
  // Nothing idle: a reader is refused the reserve, and nothing was closed for it.
  ConnectionLimits::Admission refused = limits.admit(a[3], RequestPriority::kReader, 4);
  CHECK(refused.refusal == Refusal::kOperatorReserve);
  CHECK(refused.holding == 2);
  CHECK(refused.closed_for_room.empty());
  CHECK(limits.credentialed() == 3);
  // The operator, idle the longest, is never the one closed: the reader idle next is.
  a[0].idle = true;
  a[0].idle_mark = limits.nextMark();
  a[2].idle = true;
  a[2].idle_mark = limits.nextMark();
  ConnectionLimits::Admission admitted = limits.admit(a[3], RequestPriority::kApplication, 4);
  CHECK(admitted.refusal == Refusal::kNone);
  CHECK(admitted.closed_for_room == std::vector<ConnectionAccount*>{&a[2]});
  // Full of an operator, a busy reader and a busy application: another operator is refused.
  a[3].idle = false;
  ConnectionLimits::Admission full = limits.admit(a[4], RequestPriority::kOperator, 5);
  CHECK(full.refusal == Refusal::kFull);
  CHECK(full.closed_for_room.empty());
}

TEST_CASE("ConnectionLimits keeps operator_reserve places for operators whatever other roles hold") {
  ConnectionLimits limits(small());  // 3 with a credential, the last for operators
  std::array<ConnectionAccount, 4> a{from("10.0.0.1"), from("10.0.0.2"), from("10.0.0.3"), from("10.0.0.4")};
  for (ConnectionAccount& account : a) limits.accept(account);
  REQUIRE(limits.admit(a[0], RequestPriority::kReader, 1).refusal == Refusal::kNone);
  REQUIRE(limits.admit(a[1], RequestPriority::kApplication, 2).refusal == Refusal::kNone);
  for (ConnectionAccount* busy : {&a[0], &a[1]}) busy->idle = false;
  CHECK(limits.admit(a[2], RequestPriority::kApplication, 3).refusal == Refusal::kOperatorReserve);
  CHECK(limits.admit(a[3], RequestPriority::kOperator, 4).refusal == Refusal::kNone);
}

TEST_CASE("ConnectionLimits counts the operator reserve against readers and applications only") {
  ConnectionLimits limits(small());  // 3 with a credential, readers and applications at most 2
  std::array<ConnectionAccount, 4> a{from("10.0.0.1"), from("10.0.0.2"), from("10.0.0.3"), from("10.0.0.4")};
  for (ConnectionAccount& account : a) limits.accept(account);
  // Operators past their reserve of 1 take nothing from the 2 places of the other roles.
  REQUIRE(limits.admit(a[0], RequestPriority::kOperator, 1).refusal == Refusal::kNone);
  REQUIRE(limits.admit(a[1], RequestPriority::kOperator, 2).refusal == Refusal::kNone);
  a[0].idle = a[1].idle = false;
  ConnectionLimits::Admission reader = limits.admit(a[2], RequestPriority::kReader, 3);
  CHECK(reader.refusal == Refusal::kNone);
  CHECK(reader.closed_for_room.empty());
  CHECK(limits.credentialed() == 3);
  // Now full: the next reader finds no room and nothing idle to close.
  a[2].idle = false;
  ConnectionLimits::Admission full = limits.admit(a[3], RequestPriority::kReader, 4);
  CHECK(full.refusal == Refusal::kFull);
  CHECK(full.holding == 3);
}

}  // namespace npac::npacd
