// The binary PDU batch (npac/npacd/api/pdu_batch.h): what a well-formed batch becomes, and
// the specific refusal of each malformed one.
#include "npac/npacd/api/pdu_batch.h"

#include <catch2/catch.hpp>

#include "cmip/rose.h"
#include "tests/npac/npacd/event_report_pdu.h"

using namespace npac;
using namespace npac::npacd;

namespace {

using npac::npacd::testing::queuedEventReport;

constexpr std::uint8_t kNotifications = 1u << 3;

std::vector<std::uint8_t> batchOf(const std::vector<std::uint8_t>& pdu, int count = 1,
                                  std::string_view key = "", std::string_view spid = "0001") {
  std::vector<std::uint8_t> out;
  for (int i = 0; i < count; ++i) appendPduBatchRecord(out, spid, kNotifications, 3, key, pdu);
  return out;
}

std::string refusal(const std::vector<std::uint8_t>& body) {
  auto parsed = parsePduBatch(body);
  REQUIRE_FALSE(parsed.isOk());
  INFO(parsed.status().message());
  CHECK_FALSE(parsed.status().message().empty());
  return describe(parsed.status().code());  // the answer's code, "invalid_pdu"
}

}  // namespace

TEST_CASE("A PDU batch record becomes a queued push with the operation and confirmation of its Invoke") {
  const auto confirmed = queuedEventReport();
  const auto unconfirmed = queuedEventReport(cmip::CmipOpcode::kEventReport);
  std::vector<std::uint8_t> body;
  appendPduBatchRecord(body, "0001", kNotifications, 3, "k-1", confirmed);
  appendPduBatchRecord(body, "0002", kNotifications | 1u, 0, "", unconfirmed);
  auto parsed = parsePduBatch(body);
  INFO(parsed.status().message());
  REQUIRE(parsed.isOk());
  REQUIRE(parsed->size() == 2);
  const OutboundMessage& first = parsed.value()[0];
  CHECK(first.message.spid == "0001");
  CHECK(first.message.function_mask == kNotifications);
  CHECK(first.message.priority == 3);
  CHECK(first.message.idempotency_key == "k-1");
  CHECK(first.message.pdu == confirmed);
  CHECK(first.message.kind == db::MessageKind::kPush);
  CHECK(first.message.opcode == static_cast<int>(cmip::CmipOpcode::kEventReportConfirmed));
  CHECK(first.message.confirmed);
  const OutboundMessage& second = parsed.value()[1];
  CHECK(second.message.spid == "0002");
  CHECK_FALSE(second.message.idempotency_key);
  CHECK_FALSE(second.message.confirmed);
  CHECK(second.opcode == cmip::CmipOpcode::kEventReport);
}

TEST_CASE("A PDU batch without the NPB1 magic or without records is refused") {
  CHECK(refusal({}) == "invalid_pdu_batch");
  CHECK(refusal({'N', 'P', 'B', '2'}) == "invalid_pdu_batch");
  CHECK(refusal({'N', 'P', 'B', '1'}) == "invalid_pdu_batch");
}

TEST_CASE("A PDU batch record cut short anywhere is refused naming the record") {
  std::vector<std::uint8_t> whole;
  appendPduBatchRecord(whole, "0001", kNotifications, 3, "key-0", queuedEventReport());
  appendPduBatchRecord(whole, "0001", kNotifications, 3, "key-1", queuedEventReport());
  const std::size_t record = (whole.size() - 4) / 2;
  for (std::size_t cut = 4 + record + 1; cut < whole.size(); ++cut) {
    std::vector<std::uint8_t> body(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
    auto parsed = parsePduBatch(body);
    INFO(cut);
    REQUIRE_FALSE(parsed.isOk());
    CHECK(parsed.status().code() == StatusCode::kInvalidPduBatch);
    CHECK(parsed.status().message().find("record 1") != std::string::npos);
  }
}

TEST_CASE("A PDU batch record with a malformed SPID, functions or priority is refused") {
  auto body = batchOf(queuedEventReport(), 1, "", "00-1");
  CHECK(refusal(body) == "invalid_spid");
  body = batchOf(queuedEventReport());
  body[8] = 0;  // no function
  CHECK(refusal(body) == "invalid_pdu_batch");
  body[8] = 1u << 5;  // no such function
  CHECK(refusal(body) == "invalid_pdu_batch");
  body = batchOf(queuedEventReport());
  body[9] = 10;  // priority above 9
  CHECK(refusal(body) == "invalid_pdu_batch");
}

TEST_CASE("A PDU batch with a malformed or repeated idempotency key is refused") {
  CHECK(refusal(batchOf(queuedEventReport(), 1, "has space")) == "invalid_idempotency_key");
  CHECK(refusal(batchOf(queuedEventReport(), 2, "same")) == "repeated_idempotency_key");
  std::vector<std::uint8_t> two_providers;
  appendPduBatchRecord(two_providers, "0001", kNotifications, 0, "same", queuedEventReport());
  appendPduBatchRecord(two_providers, "0002", kNotifications, 0, "same", queuedEventReport());
  CHECK(parsePduBatch(two_providers).isOk());
}

TEST_CASE("A PDU batch record whose PDU is empty, too long or not an Invoke of a pushed operation is refused") {
  CHECK(refusal(batchOf({})) == "invalid_pdu_batch");
  CHECK(refusal(batchOf(std::vector<std::uint8_t>(kMaxBatchPduLength + 1, 0x30))) == "invalid_pdu_batch");
  CHECK(refusal(batchOf({0x04, 0x01, 0x00})) == "invalid_pdu");  // an OCTET STRING, not ROSE
  const auto result = cmip::encodeRoseApdu(cmip::RoseReturnResult{cmip::InvokeId{1}, std::nullopt});
  CHECK(refusal(batchOf(result)) == "invalid_pdu");
  cmip::RoseInvoke linked{1, 7, cmip::Code::local(1), std::nullopt};
  CHECK(refusal(batchOf(cmip::encodeRoseApdu(linked))) == "invalid_pdu");
  cmip::RoseInvoke cancel_get{1, std::nullopt, cmip::Code::local(10), std::nullopt};
  CHECK(refusal(batchOf(cmip::encodeRoseApdu(cancel_get))) == "invalid_pdu");
  cmip::RoseInvoke no_argument{1, std::nullopt, cmip::Code::local(1), std::nullopt};
  CHECK(refusal(batchOf(cmip::encodeRoseApdu(no_argument))) == "invalid_pdu");
  auto trailing = queuedEventReport();
  trailing.push_back(0x00);
  CHECK(refusal(batchOf(trailing)) == "invalid_pdu");
}

TEST_CASE("A PDU batch of more than 1000 records is refused") {
  CHECK(parsePduBatch(batchOf(queuedEventReport(), 1000)).isOk());
  CHECK(refusal(batchOf(queuedEventReport(), 1001)) == "invalid_pdu_batch");
}

TEST_CASE("The PDU batch media type is recognised with parameters and in any case") {
  CHECK(isPduBatchMediaType("application/vnd.npacd.pdu-batch"));
  CHECK(isPduBatchMediaType("Application/VND.npacd.PDU-batch; version=1"));
  CHECK_FALSE(isPduBatchMediaType("application/json"));
  CHECK_FALSE(isPduBatchMediaType("application/vnd.npacd.pdu-batch2"));
}
