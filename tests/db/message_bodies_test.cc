// Schema 8: a message's PDU is written once, in message_bodies; a broadcast is one body
// for all its addressees' rows, deleted by the retention purge with the last of them.
#include <catch2/catch.hpp>

#include "db/outbound_queue.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {


Bytes pduTagged(std::uint8_t tag) { return Bytes{0x30, 0x03, 0x02, 0x01, tag}; }

NewMessage to(const std::string& spid, std::uint8_t tag, std::optional<std::string> key = std::nullopt) {
  NewMessage m{spid, kSoaMgmt, 0, pduTagged(tag)};
  m.idempotency_key = std::move(key);
  return m;
}

struct BodiesFixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  OutboundQueue queue{*db};
  BodiesFixture() {
    for (const char* spid : {"0001", "0002", "0003"}) addProvider(*db, spid);
  }
  std::vector<MessageId> append(std::vector<NewMessage> messages, TimeMs now = 1000) {
    auto ids = queue.appendBatch(messages, now);
    INFO(ids.status().toString());
    REQUIRE(ids.isOk());
    return *ids;
  }
  // (bodies, the sum of their addressee counts).
  std::pair<std::int64_t, std::int64_t> bodies() {
    auto query = db->prepare("SELECT count(*), COALESCE(SUM(addressees), 0) FROM message_bodies");
    REQUIRE(query.isOk());
    REQUIRE(query->step().value());
    return {query->columnInt64(0), query->columnInt64(1)};
  }
  void acknowledge(const std::vector<MessageId>& ids, TimeMs at) {
    REQUIRE(queue.markSent(ids, 1, at).isOk());
    REQUIRE(queue.markAcknowledged(ids, at).isOk());
    for (const char* spid : {"0001", "0002", "0003"}) settleAll(queue, spid, at);
  }
};

}  // namespace

TEST_CASE("A broadcast's rows share one body that counts its addressees") {
  BodiesFixture f;
  auto ids = f.append({to("0001", 7), to("0002", 7), to("0003", 7)});
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{1, 3});
  for (MessageId id : ids) CHECK(f.queue.get(id)->pdu == pduTagged(7));
}

TEST_CASE("Messages with different PDUs get a body each") {
  BodiesFixture f;
  auto ids = f.append({to("0001", 1), to("0001", 2), to("0002", 1)});
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{3, 3});
  CHECK(f.queue.get(ids[0])->pdu == pduTagged(1));
  CHECK(f.queue.get(ids[1])->pdu == pduTagged(2));
  CHECK(f.queue.get(ids[2])->pdu == pduTagged(1));
}

TEST_CASE("A repeated broadcast under its idempotency keys adds neither rows nor addressees") {
  BodiesFixture f;
  auto first = f.append({to("0001", 9, "b-1"), to("0002", 9, "b-1")});
  // The retry reaches a third provider as well: only that row and a body for it are new.
  auto again = f.queue.appendBatchOutcomes(
      std::vector<NewMessage>{to("0001", 9, "b-1"), to("0002", 9, "b-1"), to("0003", 9, "b-1")}, 2000);
  REQUIRE(again.isOk());
  CHECK((*again)[0] == AppendOutcome{first[0], true});
  CHECK((*again)[1] == AppendOutcome{first[1], true});
  CHECK_FALSE((*again)[2].duplicate);
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{2, 3});
  CHECK(f.queue.get((*again)[2].id)->pdu == pduTagged(9));
}

TEST_CASE("The purge keeps a shared body until the last row naming it goes") {
  BodiesFixture f;
  auto ids = f.append({to("0001", 5), to("0002", 5), to("0003", 5)});
  f.acknowledge({ids[0], ids[1]}, 2000);
  REQUIRE(f.queue.purgeAcknowledgedBefore(3000).value() == 2);
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{1, 1});
  CHECK(f.queue.get(ids[2])->pdu == pduTagged(5));  // still deliverable
  f.acknowledge({ids[2]}, 4000);
  REQUIRE(f.queue.purgeAcknowledgedBefore(5000).value() == 1);
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{0, 0});
}

TEST_CASE("A bounded purge step that takes part of a broadcast takes that part off its body") {
  BodiesFixture f;
  auto broadcast = f.append({to("0001", 4), to("0002", 4), to("0003", 4)});
  auto single = f.append({to("0001", 8)});
  f.acknowledge(broadcast, 2000);
  f.acknowledge(single, 2000);
  // Provider by provider: 0001's two rows, its copy of the broadcast and its own message.
  REQUIRE(f.queue.purgeAcknowledgedBefore(3000, 2).value() == 2);
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{1, 2});
  REQUIRE(f.queue.purgeAcknowledgedBefore(3000, 2).value() == 2);
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{0, 0});
  CHECK(f.queue.purgeAcknowledgedBefore(3000, 2).value() == 0);
}

TEST_CASE("An unbounded purge removes more rows than one step holds, bodies with them") {
  BodiesFixture f;
  std::vector<NewMessage> many;
  for (std::size_t i = 0; i < OutboundQueue::kPurgeStepRows + 5; ++i) {
    many.push_back(to("0001", static_cast<std::uint8_t>(i)));
  }
  auto ids = f.append(many);
  f.acknowledge(ids, 2000);
  CHECK(f.queue.purgeAcknowledgedBefore(3000).value() == ids.size());
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{0, 0});
}

TEST_CASE("A message's body is never written again as it is sent, moved, requeued, failed and acknowledged",
          "[sqlite]") {
  BodiesFixture f;
  REQUIRE(f.db->executeScript("CREATE TRIGGER bodies_written_once BEFORE UPDATE ON message_bodies "
                              "BEGIN SELECT RAISE(ABORT, 'a body was rewritten'); END;")
              .isOk());
  auto ids = f.append({to("0001", 1), to("0002", 1), to("0003", 2)});
  REQUIRE(f.queue.markSent(ids, 1, 2000).isOk());
  REQUIRE(f.queue.moveSent(ids[0], 2).isOk());
  REQUIRE(f.queue.requeueAssociation(1).value() == 2);
  REQUIRE(f.queue.markFailed(ids[1], "rejected", 3000).isOk());
  REQUIRE(f.queue.markAcknowledged(ids[0], 4000).isOk());
  CHECK(f.bodies() == std::pair<std::int64_t, std::int64_t>{2, 3});
}
