// POST /v1/pdu-batches over real loopback HTTP, a real SQLite file and a real QueueWriter
// group commit: the binary batch is queued as POST /v1/messages queues JSON, and the media
// types are never mixed up.
#include <catch2/catch.hpp>

#include "npac/npacd/api/pdu_batch.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"
#include "tests/npac/npacd/event_report_pdu.h"

namespace npac::npacd {
namespace {

using namespace testing;

constexpr std::uint8_t kNotifications = 1u << 3;
const std::string kType(kPduBatchMediaType);

std::string batch(int count, const std::string& spid = "0001", const std::string& key_prefix = "") {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < count; ++i) {
    const std::string key = key_prefix.empty() ? "" : key_prefix + std::to_string(i);
    appendPduBatchRecord(out, spid, kNotifications, 2, key, queuedEventReport());
  }
  return std::string(out.begin(), out.end());
}

}  // namespace

TEST_CASE("A PDU batch is committed row by row with its PDUs as sent and answered with their ids") {
  QueuedApiFixture b;
  Reply reply = b.f.callTyped(kType, V::post, "/v1/pdu-batches", batch(3));
  INFO(reply.raw);
  REQUIRE(reply.status == 201);
  REQUIRE(reply.body["ids"].size() == 3);
  CHECK(reply.body["duplicates"].empty());
  // Answered after the commit: another connection reads every row now.
  auto connection = b.f.openConnection();
  db::OutboundQueue queue(*connection);
  for (const json& id : reply.body["ids"]) {
    auto row = queue.get(id.get<std::int64_t>());
    REQUIRE(row.isOk());
    CHECK(row->pdu == queuedEventReport());
    CHECK(row->function_mask == kNotifications);
    CHECK(row->priority == 2);
    CHECK(row->confirmed);
    CHECK(row->opcode == static_cast<int>(cmip::CmipOpcode::kEventReportConfirmed));
    CHECK(row->state == db::MessageState::kQueued);
  }
}

TEST_CASE("A keyed PDU batch sent again answers 200 with every record a duplicate and adds no row") {
  QueuedApiFixture b;
  Reply first = b.f.callTyped(kType, V::post, "/v1/pdu-batches", batch(2, "0001", "k-"));
  REQUIRE(first.status == 201);
  Reply again = b.f.callTyped(kType, V::post, "/v1/pdu-batches", batch(2, "0001", "k-"));
  INFO(again.raw);
  REQUIRE(again.status == 200);
  CHECK(again.body["ids"] == first.body["ids"]);
  CHECK(again.body["duplicates"] == json::array({0, 1}));
  CHECK(b.rowCount() == 2);
}

TEST_CASE("A malformed PDU batch is refused 400 with its code and nothing is queued") {
  QueuedApiFixture b;
  std::string cut = batch(2);
  cut.pop_back();
  Reply reply = b.f.callTyped(kType, V::post, "/v1/pdu-batches", cut);
  INFO(reply.raw);
  CHECK(reply.status == 400);
  CHECK(reply.errorCode() == "invalid_pdu_batch");
  CHECK(b.rowCount() == 0);
  Reply not_ber = b.f.callTyped(kType, V::post, "/v1/pdu-batches", std::string("NPB1") + "0001" + std::string("\x08\x00\x00\x00\x01\xff", 6));
  CHECK(not_ber.status == 400);
  CHECK(not_ber.errorCode() == "invalid_pdu");
}

TEST_CASE("A PDU batch for a provider that does not exist is refused 404 before the core") {
  QueuedApiFixture b;
  Reply reply = b.f.callTyped(kType, V::post, "/v1/pdu-batches", batch(1, "0009"));
  INFO(reply.raw);
  CHECK(reply.status == 404);
  CHECK(b.rowCount() == 0);
}

TEST_CASE("POST /v1/pdu-batches with a JSON body is refused 415") {
  QueuedApiFixture b;
  Reply reply = b.f.call(V::post, "/v1/pdu-batches", json{{"messages", json::array()}});
  CHECK(reply.status == 415);
  CHECK(reply.errorCode() == "unsupported_media_type");
}

TEST_CASE("A PDU batch sent to a JSON route is refused 415 naming the route that takes it") {
  QueuedApiFixture b;
  Reply reply = b.f.callTyped(kType, V::post, "/v1/messages", batch(1));
  INFO(reply.raw);
  CHECK(reply.status == 415);
  CHECK(reply.errorMessage().find("/v1/pdu-batches") != std::string::npos);
  CHECK(b.rowCount() == 0);
}

}  // namespace npac::npacd
