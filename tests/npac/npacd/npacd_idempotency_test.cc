// npacd end to end: a submission whose answer was lost to a kill -9 after its COMMIT is
// repeated with the same idempotency keys, and every message exists, and reaches the
// provider, exactly once. The real binary, real SQLite, loopback TCP, npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/npac/npacd/queue_rows.h"

#include <map>

#include <boost/asio/write.hpp>

#include "db/database.h"
#include "db/statement.h"

using namespace npacd_test;

namespace {

constexpr int kMessages = 20;

std::uint16_t apiPort(const NpacdProcess& npacd) {
  const std::regex ready(R"(admin API on 127\.0\.0\.1:(\d+))");
  std::smatch m;
  const std::string log = npacd.log();
  std::string last;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), ready); it != std::sregex_iterator(); ++it) {
    last = (*it)[1];  // the latest start
  }
  REQUIRE(!last.empty());
  return static_cast<std::uint16_t>(std::stoi(last));
}

Json keyedBatch(const std::string& prefix) {
  Json batch = Json::array();
  for (int i = 0; i < kMessages; ++i) {
    Json m = NpacdProcess::notification("0001", label(prefix.c_str(), i));
    m["idempotency_key"] = label("order-", i);
    batch.push_back(m);
  }
  return Json{{"messages", batch}};
}

// The ids of the committed rows, in id order (read with SQLite directly).
std::vector<std::int64_t> storedIds(const NpacdProcess& npacd) {
  auto db = npac::db::Database::open((npacd.dir() / "npacd.db").string());
  REQUIRE(db.isOk());
  auto query = (*db)->prepare("SELECT id FROM outbound_queue ORDER BY id");
  REQUIRE(query.isOk());
  std::vector<std::int64_t> ids;
  for (;;) {
    auto row = query->step();
    REQUIRE(row.isOk());
    if (!*row) return ids;
    ids.push_back(query->columnInt64(0));
  }
}

// Waits (bounded) until every stored row is acknowledged by the provider.
bool waitUntilAllAcknowledged(const NpacdProcess& npacd) {
  return eventually(
      [&] {
        const auto rows = npac::testing::foldedQueue(npacd.dir() / "npacd.db");
        return std::all_of(rows.begin(), rows.end(),
                           [](const auto& m) { return m.state == npac::db::MessageState::kAcknowledged; });
      },
      10s);
}

// Sends POST /v1/messages and, without reading the answer, kills npacd -9 as soon as the
// rows are committed: the client never hears about them.
void submitAndKillBeforeTheAnswerIsRead(NpacdProcess& npacd, const Json& batch) {
  boost::asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), apiPort(npacd)));
  http::request<http::string_body> request{http::verb::post, "/v1/messages", 11};
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::authorization, "Bearer " + npacd.token());
  request.set(http::field::content_type, "application/json");
  request.body() = batch.dump();
  request.prepare_payload();
  http::write(stream, request);
  eventually([&] { return storedIds(npacd).size() >= static_cast<std::size_t>(kMessages); }, 10s, 5ms);
  npacd.stopHard();
  REQUIRE(storedIds(npacd).size() == static_cast<std::size_t>(kMessages));
}

// How many times the sim received each information hex (retransmissions included).
std::map<std::string, int> receivedCounts(const Json& report) {
  std::map<std::string, int> counts;
  for (const Json& r : report["received"]) ++counts[r["info"].get<std::string>()];
  return counts;
}

// The repeat after the restart names the original ids, each a duplicate.
void checkRepeatAnswersOriginals(NpacdProcess& npacd, const Json& batch, const std::vector<std::int64_t>& original) {
  Reply again = npacd.call(http::verb::post, "/v1/messages", batch);
  INFO(again.body.dump());
  REQUIRE(again.status == 200);
  REQUIRE(again.body["messages"].size() == static_cast<std::size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    CHECK(again.body["messages"][i]["id"] == original[i]);
    CHECK(again.body["messages"][i]["duplicate"] == true);
  }
  CHECK(storedIds(npacd) == original);
}

}  // namespace

TEST_CASE("a keyed submission repeated after kill -9 lost its answer is stored and delivered exactly once") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  const Json batch = keyedBatch("x");
  submitAndKillBeforeTheAnswerIsRead(npacd, batch);
  const std::vector<std::int64_t> original = storedIds(npacd);
  npacd.start();
  checkRepeatAnswersOriginals(npacd, batch, original);

  auto provider = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", std::to_string(kMessages), "--duration", "15s"});
  const int exit_code = provider->wait();
  INFO(npacd.log());
  REQUIRE(exit_code == 0);
  std::map<std::string, int> counts = receivedCounts(provider->result);
  CHECK(counts.size() == static_cast<std::size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) CHECK(counts[NpacdProcess::tagHex(label("x", i))] == 1);
}

TEST_CASE("a keyed submission already delivered before kill -9 is not delivered again when repeated") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  const Json batch = keyedBatch("y");
  auto first = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", std::to_string(kMessages), "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  REQUIRE(npacd.call(http::verb::post, "/v1/messages", batch).status == 201);
  REQUIRE(first->wait() == 0);
  const std::vector<std::int64_t> original = storedIds(npacd);
  REQUIRE(original.size() == static_cast<std::size_t>(kMessages));
  REQUIRE(waitUntilAllAcknowledged(npacd));
  npacd.stopHard();
  npacd.start();
  checkRepeatAnswersOriginals(npacd, batch, original);

  // The next provider association gets only what is new: one unkeyed message.
  auto second = npacd.sim("0001", key, {"--from", "127.0.0.3", "--expect", "1", "--duration", "10s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.submit("0001", "after", 1);
  REQUIRE(second->wait() == 0);
  std::map<std::string, int> counts = receivedCounts(second->result);
  CHECK(counts == std::map<std::string, int>{{NpacdProcess::tagHex("after0"), 1}});
}
