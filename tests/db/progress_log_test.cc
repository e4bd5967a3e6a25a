#include "db/progress_log.h"

#include <catch2/catch.hpp>

#include "db/database.h"
#include "db/statement.h"
#include "db/transaction.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

ProgressRecord record(ProgressEvent event, std::vector<MessageId> ids, TimeMs at = 100,
                      AssociationId association = 0, std::string spid = "0001") {
  return ProgressRecord{std::move(spid), event, association, at, std::move(ids), {}};
}

struct LogFixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  ProgressLog log{*db};
  void append(std::vector<ProgressRecord> records) {
    Status status = log.append(records);
    INFO(status.toString());
    REQUIRE(status.isOk());
  }
  std::int64_t storedRecords() {
    auto query = db->prepare("SELECT count(*) FROM delivery_progress");
    REQUIRE(query.isOk());
    REQUIRE(*query->step());
    return query->columnInt64(0);
  }
};

std::vector<ProgressEvent> eventsOf(const std::vector<ProgressRecord>& records) {
  std::vector<ProgressEvent> events;
  for (const auto& r : records) events.push_back(r.event);
  return events;
}

}  // namespace

TEST_CASE("Progress records read back in the order they were appended, with every field", "[db][progress]") {
  LogFixture f;
  ProgressRecord failed = record(ProgressEvent::kFailed, {12}, 300);
  failed.reason = "rejected by the provider";
  f.append({record(ProgressEvent::kHanded, {12, 10, 11}, 100, 7), record(ProgressEvent::kAcknowledged, {10}, 200),
            failed});
  auto records = f.log.after("0001", 0);
  REQUIRE(records.isOk());
  REQUIRE(records->size() == 3);
  CHECK(eventsOf(*records) ==
        std::vector<ProgressEvent>{ProgressEvent::kHanded, ProgressEvent::kAcknowledged, ProgressEvent::kFailed});
  // Stored sorted: a record's order of ids means nothing.
  CHECK((*records)[0].ids == std::vector<MessageId>{10, 11, 12});
  CHECK((*records)[0].association == 7);
  CHECK((*records)[0].at == 100);
  CHECK((*records)[0].spid == "0001");
  CHECK((*records)[2].reason == "rejected by the provider");
  CHECK((*records)[1].reason.empty());
}

TEST_CASE("Hundreds of records appended at once read back in their order", "[db][progress]") {
  LogFixture f;
  std::vector<ProgressRecord> many;
  for (int i = 0; i < 300; ++i) {
    many.push_back(record(i % 2 == 0 ? ProgressEvent::kHanded : ProgressEvent::kAcknowledged,
                          {static_cast<MessageId>(1 + i / 2)}, 1000 + i, i % 2 == 0 ? 3 : 0));
  }
  f.append(many);
  auto records = f.log.after("0001", 0);
  REQUIRE(records.isOk());
  REQUIRE(records->size() == many.size());
  for (std::size_t i = 0; i < many.size(); ++i) {
    INFO("record " << i);
    CHECK((*records)[i].event == many[i].event);
    CHECK((*records)[i].at == many[i].at);
    CHECK((*records)[i].ids == many[i].ids);
    CHECK((*records)[i].association == many[i].association);
  }
}

TEST_CASE("Only the records of the provider asked about are read", "[db][progress]") {
  LogFixture f;
  f.append({record(ProgressEvent::kHanded, {1}, 100, 1, "0001"), record(ProgressEvent::kHanded, {2}, 100, 2, "0002")});
  auto records = f.log.after("0002", 0);
  REQUIRE(records.isOk());
  REQUIRE(records->size() == 1);
  CHECK((*records)[0].ids == std::vector<MessageId>{2});
}

TEST_CASE("Records entirely at or below a provider's mark are not read after it", "[db][progress]") {
  LogFixture f;
  f.append({record(ProgressEvent::kHanded, {1, 2, 3}), record(ProgressEvent::kHanded, {4, 5}),
            record(ProgressEvent::kAcknowledged, {2, 7})});
  auto records = f.log.after("0001", 3);
  REQUIRE(records.isOk());
  // {1,2,3} is wholly settled; {2,7} still names 7, above the mark.
  REQUIRE(records->size() == 2);
  CHECK((*records)[0].ids == std::vector<MessageId>{4, 5});
  CHECK((*records)[1].ids == std::vector<MessageId>{2, 7});
}

TEST_CASE("A record whose ids lie far apart is stored in pieces that each span a bounded range",
          "[db][progress]") {
  LogFixture f;
  const MessageId far = 5 + 3 * ProgressLog::kMaxSpan;
  f.append({record(ProgressEvent::kHanded, {far, 5, 6}, 100, 3)});
  CHECK(f.storedRecords() == 2);
  auto covering = f.log.covering("0001", far);
  REQUIRE(covering.isOk());
  REQUIRE(covering->size() == 1);
  CHECK((*covering)[0].ids == std::vector<MessageId>{far});
  CHECK((*covering)[0].association == 3);
}

TEST_CASE("The records naming one message are found, and none that only spans it", "[db][progress]") {
  LogFixture f;
  f.append({record(ProgressEvent::kHanded, {10, 12}, 100, 1), record(ProgressEvent::kRequeued, {10}, 150),
            record(ProgressEvent::kHanded, {10, 11}, 200, 2), record(ProgressEvent::kAcknowledged, {9, 12}, 300)});
  auto ten = f.log.covering("0001", 10);
  REQUIRE(ten.isOk());
  CHECK(eventsOf(*ten) ==
        std::vector<ProgressEvent>{ProgressEvent::kHanded, ProgressEvent::kRequeued, ProgressEvent::kHanded});
  auto eleven = f.log.covering("0001", 11);
  REQUIRE(eleven.isOk());
  // {10,12} spans 11 without naming it.
  REQUIRE(eleven->size() == 1);
  CHECK((*eleven)[0].association == 2);
}

TEST_CASE("Replaying a provider's stored records rebuilds the states they were written from",
          "[db][progress]") {
  LogFixture f;
  ProviderProgress live;
  for (MessageId id : {1, 2, 3, 4}) REQUIRE(live.admit(id).isOk());
  const std::vector<ProgressRecord> turns{
      record(ProgressEvent::kHanded, {1, 2, 3}, 10, 1), record(ProgressEvent::kAcknowledged, {1, 2}, 11),
      record(ProgressEvent::kRequeued, {3}, 12), record(ProgressEvent::kHanded, {3, 4}, 13, 2),
      record(ProgressEvent::kMoved, {4}, 14, 3)};
  for (const auto& turn : turns) {
    REQUIRE(live.check(turn).isOk());
    live.apply(turn);
    f.append({turn});
  }
  REQUIRE(f.log.saveSettled("0001", live.settledThrough(), 15).isOk());

  auto mark = f.log.settledThrough("0001");
  REQUIRE(mark.isOk());
  CHECK(*mark == 2);
  ProviderProgress replayed(*mark);
  for (MessageId id : {3, 4}) REQUIRE(replayed.admit(id).isOk());
  auto records = f.log.after("0001", *mark);
  REQUIRE(records.isOk());
  for (const auto& r : *records) replayed.apply(r);
  for (MessageId id : {3, 4}) {
    REQUIRE(replayed.find(id) != nullptr);
    CHECK(*replayed.find(id) == *live.find(id));
  }
  CHECK(replayed.find(3)->attempts == 2);
  CHECK(replayed.find(3)->retransmission);
}

TEST_CASE("A provider's settled mark only grows", "[db][progress]") {
  LogFixture f;
  auto none = f.log.settledThrough("0001");
  REQUIRE(none.isOk());
  CHECK(*none == 0);
  REQUIRE(f.log.saveSettled("0001", 40, 1).isOk());
  REQUIRE(f.log.saveSettled("0001", 30, 2).isOk());
  CHECK(*f.log.settledThrough("0001") == 40);
  REQUIRE(f.log.saveSettled("0001", 50, 3).isOk());
  CHECK(*f.log.settledThrough("0001") == 50);
  CHECK(*f.log.settledThrough("0002") == 0);
}

TEST_CASE("Retention drops a provider's records whose every id is settled, and only those", "[db][progress]") {
  LogFixture f;
  f.append({record(ProgressEvent::kHanded, {1, 2}), record(ProgressEvent::kHanded, {3, 9}),
            record(ProgressEvent::kHanded, {4}, 100, 1, "0002")});
  auto purged = f.log.purgeThrough("0001", 5);
  REQUIRE(purged.isOk());
  CHECK(*purged == 1);
  CHECK(f.storedRecords() == 2);
  auto left = f.log.after("0001", 0);
  REQUIRE(left.isOk());
  REQUIRE(left->size() == 1);
  CHECK(left->front().ids == std::vector<MessageId>{3, 9});
}

TEST_CASE("Appended records join the caller's transaction and vanish with its rollback", "[db][progress]") {
  LogFixture f;
  {
    Transaction txn(*f.db);
    REQUIRE(txn.begin().isOk());
    REQUIRE(f.log.append(std::vector<ProgressRecord>{record(ProgressEvent::kHanded, {1})}).isOk());
    txn.rollback();
  }
  CHECK(f.storedRecords() == 0);
}

TEST_CASE("A record with an id below 1 or without a provider is refused and nothing is stored",
          "[db][progress]") {
  LogFixture f;
  const Status zero = f.log.append(
      std::vector<ProgressRecord>{record(ProgressEvent::kHanded, {1}), record(ProgressEvent::kHanded, {0, 2})});
  CHECK(zero.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(zero.message(), Catch::Contains("message 0"));
  const Status no_provider =
      f.log.append(std::vector<ProgressRecord>{record(ProgressEvent::kHanded, {1}, 100, 0, "")});
  CHECK(no_provider.code() == Status::Code::kInvalidArgument);
  CHECK(f.storedRecords() == 0);
}

TEST_CASE("A damaged ids blob in the file is reported as corrupt, naming the record", "[db][progress][sqlite]") {
  if (onPostgres()) return;
  LogFixture f;
  f.append({record(ProgressEvent::kHanded, {1, 2})});
  REQUIRE(f.db->execute("UPDATE delivery_progress SET ids = x'80'").isOk());
  auto records = f.log.after("0001", 0);
  REQUIRE_FALSE(records.isOk());
  CHECK(records.status().code() == Status::Code::kCorrupt);
  CHECK_THAT(records.status().message(), Catch::Contains("delivery progress record 1: delivery progress ids: varint cut short"));
}

TEST_CASE("An unknown event in the file is reported as corrupt", "[db][progress][sqlite]") {
  if (onPostgres()) return;
  LogFixture f;
  f.append({record(ProgressEvent::kHanded, {1})});
  // The CHECK constraint keeps npacd from writing one; a file edited by hand may still hold it.
  REQUIRE(f.db->execute("PRAGMA ignore_check_constraints=ON").isOk());
  REQUIRE(f.db->execute("UPDATE delivery_progress SET event = 9").isOk());
  auto records = f.log.after("0001", 0);
  REQUIRE_FALSE(records.isOk());
  CHECK_THAT(records.status().message(), Catch::Contains("unknown event 9"));
}
