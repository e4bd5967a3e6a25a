// db::summarizeQueue over a real SQLite file: counts by state and function mask, the
// oldest queued row, and refusals.
#include "db/queue_summary.h"

#include <catch2/catch.hpp>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

constexpr std::uint32_t kNotifications = 0x8;

NewMessage summaryRow(const std::string& spid, std::uint32_t functions, std::uint8_t tag) {
  return NewMessage{spid, functions, 0, Bytes{0x30, 0x03, 0x02, 0x01, tag}};
}

struct SummaryFixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  OutboundQueue queue{*db};
  SummaryFixture() {
    addProvider(*db, "0001");
    addProvider(*db, "0002");
  }
  MessageId append(const NewMessage& m, TimeMs at) {
    auto ids = queue.appendBatch(std::vector<NewMessage>{m}, at);
    INFO(ids.status().toString());
    REQUIRE(ids.isOk());
    return ids->front();
  }
  QueueSummary summary(const std::string& spid) {
    Result<QueueSummary> s = summarizeQueue(*db, spid);
    INFO(s.status().toString());
    REQUIRE(s.isOk());
    return s.value();
  }
};

}  // namespace

TEST_CASE("A queue summary counts one provider's rows by state and function mask") {
  SummaryFixture f;
  f.append(summaryRow("0001", kNotifications, 1), 1000);
  f.append(summaryRow("0001", kNotifications, 2), 2000);
  const MessageId sent = f.append(summaryRow("0001", kSoaMgmt, 3), 3000);
  const MessageId acked = f.append(summaryRow("0001", kNotifications, 4), 4000);
  f.append(summaryRow("0001", kSoaMgmt | kNotifications, 5), 5000);
  f.append(summaryRow("0002", kNotifications, 6), 500);  // another provider's: not counted
  REQUIRE(f.queue.markSent(sent, 7, 6000).isOk());
  REQUIRE(f.queue.markSent(acked, 7, 6000).isOk());
  REQUIRE(f.queue.markAcknowledged(acked, 6500).isOk());

  QueueSummary s = f.summary("0001");
  std::vector<QueueCount> expected{
      {MessageState::kQueued, kNotifications, 2, 1000},
      {MessageState::kQueued, kSoaMgmt | kNotifications, 1, 5000},
      {MessageState::kSent, kSoaMgmt, 1, 3000},
      {MessageState::kAcknowledged, kNotifications, 1, 4000},
  };
  CHECK(s.counts == expected);
  CHECK(s.total(MessageState::kQueued) == 3);
  CHECK(s.total(MessageState::kSent) == 1);
  CHECK(s.total(MessageState::kFailed) == 0);
}

TEST_CASE("A queue summary's oldest queued row ignores rows that left the queue") {
  SummaryFixture f;
  const MessageId first = f.append(summaryRow("0001", kNotifications, 1), 1000);
  f.append(summaryRow("0001", kSoaMgmt, 2), 2500);
  f.append(summaryRow("0001", kNotifications, 3), 4000);
  CHECK(f.summary("0001").oldestQueuedAt() == 1000);
  REQUIRE(f.queue.markSent(first, 3, 5000).isOk());
  CHECK(f.summary("0001").oldestQueuedAt() == 2500);
}

TEST_CASE("A provider without rows has an empty queue summary and no oldest queued row") {
  SummaryFixture f;
  QueueSummary s = f.summary("0002");
  CHECK(s.counts.empty());
  CHECK_FALSE(s.oldestQueuedAt().has_value());
  CHECK(f.summary("0009").counts.empty());  // not provisioned: nothing to count either
}

TEST_CASE("A queue summary refuses a malformed SPID as an invalid argument") {
  SummaryFixture f;
  for (const char* bad : {"", "001", "00001", "00-1", "0 01"}) {
    Result<QueueSummary> s = summarizeQueue(*f.db, bad);
    INFO(bad);
    REQUIRE_FALSE(s.isOk());
    CHECK(s.status().code() == Status::Code::kInvalidArgument);
    CHECK_THAT(s.status().message(), Catch::Contains("is not a SPID"));
  }
}
