// The retention purge in a running npacd: a backlog of several batches is removed in one
// catch-up (run after run, each after a pause of three times the last), reported in one
// log line, and never a message that is not acknowledged.
#include <chrono>
#include <vector>

#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/provider_store.h"
#include "npac/npacd/core/retention_purge.h"
#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/db/temp_dir.h"

using namespace npacd_test;
namespace db = npac::db;

TEST_CASE("npacd purges a retention backlog of many batches in one catch-up, logged once") {
  npac::db::testing::TempDir dir;
  const fs::path file = dir.file("npacd.db");
  const std::size_t backlog = 8 * npac::npacd::kPurgeBatch + 1;
  std::vector<db::MessageId> kept;
  {
    auto opened = db::Database::open(file.string());
    REQUIRE(opened.isOk());
    db::Database& database = *opened.value();
    REQUIRE(db::ProviderStore(database).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
    // Acknowledged 8 days ago: past the default queue_retention of 7 days.
    const db::TimeMs now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    const db::TimeMs old = now - 8LL * 24 * 3600 * 1000;
    std::vector<db::NewMessage> messages(backlog, db::NewMessage{"0001", 1, 0, db::Bytes{0x30, 0x00}});
    const std::vector<db::MessageId> ids = db::OutboundQueue(database).appendBatch(messages, old).value();
    REQUIRE(db::OutboundQueue(database).markSent(ids, 1, old).isOk());
    REQUIRE(db::OutboundQueue(database).markAcknowledged(ids, old).isOk());
    // As old, but never acknowledged: never purged.
    kept = db::OutboundQueue(database).appendBatch(std::vector<db::NewMessage>(3, messages.front()), old).value();
  }
  NpacdProcess npacd(NpacdProcess::Options{file, {"--log-level", "info"}});
  const std::string line = "retention purge: " + std::to_string(backlog) + " acknowledged message(s)";
  eventually([&] { return npacd.log().find(line) != std::string::npos; }, 10s, 25ms);
  const std::string log = npacd.log();
  INFO(log.substr(log.size() > 4000 ? log.size() - 4000 : 0));
  CHECK(log.find(line) != std::string::npos);  // the whole backlog, one line
  CHECK(log.find("more follow") == std::string::npos);
  for (db::MessageId id : kept) {
    const Reply reply = npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id));
    CHECK(reply.status == 200);
  }
  CHECK(npacd.call(http::verb::get, "/v1/messages/1").status == 404);
  CHECK(npacd.call(http::verb::get, "/v1/messages/" + std::to_string(backlog)).status == 404);
}
