// TurnWrites: what the DeliveryStore collected in a turn, and the order flush() gets it in.
#include "npac/npacd/core/turn_writes.h"

#include <catch2/catch.hpp>

using namespace npac;
using namespace npac::npacd;

TEST_CASE("The first write collected since the last take schedules one flush") {
  int scheduled = 0;
  TurnWrites turn([&] { ++scheduled; });
  CHECK(turn.empty());
  turn.sent(ProgressWrite{ProgressWrite::Kind::kSent, "0001", {1, 2}, 7, 2000, {}});
  turn.acknowledged("0001", 1, 2100);
  turn.sent(ProgressWrite{ProgressWrite::Kind::kSent, "0001", {3}, 7, 2200, {}});
  CHECK(scheduled == 1);
  CHECK_FALSE(turn.empty());
  CHECK(turn.take().size() == 3);  // two sent writes, one acknowledging write
  CHECK(turn.empty());
  turn.acknowledged("0001", 2, 2300);
  CHECK(scheduled == 2);
}

TEST_CASE("A turn's sent writes come first in their order, then one acknowledging write per provider in first-seen "
          "order") {
  TurnWrites turn(nullptr);
  turn.acknowledged("0002", 20, 2100);
  turn.sent(ProgressWrite{ProgressWrite::Kind::kSent, "0001", {1}, 7, 2000, {}});
  turn.acknowledged("0001", 10, 2150);
  turn.sent(ProgressWrite{ProgressWrite::Kind::kSent, "0002", {2}, 8, 2010, {}});
  turn.acknowledged("0002", 21, 2200);
  std::vector<ProgressWrite> writes = turn.take();
  REQUIRE(writes.size() == 4);
  CHECK(writes[0].kind == ProgressWrite::Kind::kSent);
  CHECK(writes[0].ids == std::vector<db::MessageId>{1});
  CHECK(writes[1].ids == std::vector<db::MessageId>{2});
  CHECK(writes[2].kind == ProgressWrite::Kind::kAcknowledged);
  CHECK(writes[2].spid == "0002");
  CHECK(writes[2].ids == std::vector<db::MessageId>{20, 21});
  CHECK(writes[2].at == 2200);  // the latest acknowledgement's time
  CHECK(writes[3].spid == "0001");
  CHECK(writes[3].ids == std::vector<db::MessageId>{10});
  CHECK(turn.take().empty());
}
