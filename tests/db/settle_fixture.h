// SettleFixture: a fresh database with providers 0001 and 0002, and the steps the settled
// mark's tests take — append a message, write its delivery progress records, settle, read
// the settled counts and recount them from the rows. Shared by settled_counts_test.cc and
// retention_ranges_test.cc.
//
// Threading: one test thread.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/outbound_queue.h"
#include "db/progress_log.h"
#include "db/queue_summary.h"
#include "fixtures.h"

namespace npac::db::testing {

struct SettleFixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  OutboundQueue queue{*db};
  ProgressLog log{*db};
  SettleFixture() {
    addProvider(*db, "0001");
    addProvider(*db, "0002");
  }
  MessageId append(TimeMs now, std::uint32_t functions, const std::string& spid = "0001") {
    auto ids = queue.appendBatch(std::vector<NewMessage>{NewMessage{spid, functions, 0, Bytes{0x30, 0x00}}}, now);
    REQUIRE(ids.isOk());
    return ids->front();
  }
  void record(ProgressEvent event, std::vector<MessageId> ids, TimeMs at, const std::string& spid = "0001") {
    const ProgressRecord r{spid, event, event == ProgressEvent::kHanded ? 1 : 0, at, std::move(ids),
                           event == ProgressEvent::kFailed ? "rejected" : ""};
    REQUIRE(log.append(std::span(&r, 1)).isOk());
  }
  void deliver(const std::vector<MessageId>& ids, TimeMs at, const std::string& spid = "0001") {
    record(ProgressEvent::kHanded, ids, at, spid);
    record(ProgressEvent::kAcknowledged, ids, at + 1, spid);
  }
  MessageId settle(TimeMs now, const std::string& spid = "0001") {
    auto mark = queue.settle(spid, now);
    REQUIRE(mark.isOk());
    return *mark;
  }
  std::map<std::uint32_t, std::int64_t> counts(const std::string& spid = "0001") {
    auto counted = log.settledCounts(spid);
    REQUIRE(counted.isOk());
    return *counted;
  }
  // The same, counted from the rows at or below the provider's mark.
  std::map<std::uint32_t, std::int64_t> recount(const std::string& spid = "0001") {
    auto query = db->prepare(
        "SELECT q.function_mask, count(*) FROM outbound_queue AS q JOIN delivery_settled AS s "
        "ON s.spid = q.spid WHERE q.spid = ? AND q.id <= s.settled_through GROUP BY q.function_mask");
    REQUIRE(query.isOk());
    query->bindText(0, spid);
    std::map<std::uint32_t, std::int64_t> out;
    while (query->step().value()) out[static_cast<std::uint32_t>(query->columnInt64(0))] = query->columnInt64(1);
    return out;
  }
  // SQLite's EXPLAIN QUERY PLAN of `sql`, one detail per line (what a plan test reads).
  std::string queryPlan(const std::string& sql) {
    auto plan = db->prepare("EXPLAIN QUERY PLAN " + sql);
    REQUIRE(plan.isOk());
    std::string details;
    while (plan->step().value()) details += plan->columnText(3) + "\n";
    return details;
  }
  QueueSummary summary(const std::string& spid = "0001") {
    auto s = summarizeQueue(*db, spid);
    INFO(s.status().toString());
    REQUIRE(s.isOk());
    return *s;
  }
};

}  // namespace npac::db::testing
