// POST /v1/broadcasts end to end: the real npacd binary, real SQLite, loopback TCP and
// two npac-soa-sim LSMS, each receiving a broadcast once and acknowledging it; and a
// kill -9 right after the 201 leaves every provider's row in the database.
#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/npac/npacd/queue_rows.h"

#include "db/database.h"
#include "common/hex.h"
#include "db/statement.h"

using namespace npacd_test;

namespace {

// A provisioned provider of `type` with an Ed25519 key (list 1, key 1) made by the sim's
// keygen; returns the private key file.
fs::path provisionAs(NpacdProcess& npacd, const std::string& spid, const std::string& type) {
  REQUIRE(npacd.call(http::verb::post, "/v1/providers", Json{{"spid", spid}, {"name", "P" + spid}, {"system_type", type}})
              .status == 201);
  const fs::path key = npacd.dir() / ("key-" + spid + ".pem");
  pid_t kg = spawn({binDir() + "/npac-soa-sim", "keygen", "--out", key.string()}, npacd.dir() / "keygen.log");
  REQUIRE(waitFor(kg, 20s) == 0);
  Reply added = npacd.call(http::verb::post, "/v1/providers/" + spid + "/keys",
                           Json{{"key_list_id", 1}, {"key_id", 1}, {"algorithm", "ed25519"},
                                {"public_key_pem", slurp(key.string() + ".pub")}});
  REQUIRE(added.status == 201);
  return key;
}

// A subscription version activation's stand-in: a confirmed M-EVENT-REPORT on the LSMS
// data download function whose information names it.
Json activation(const Json& to, const std::string& tag) {
  Json body = NpacdProcess::notification("0000", tag);
  body.erase("spid");
  body["function"] = "lsms-data-download";
  body["to"] = to;
  return body;
}

struct Row {
  std::int64_t id = 0;
  std::string spid;
  std::string pdu_hex;
  std::string state;
};

// Every outbound row, read with SQLite directly.
std::vector<Row> storedRows(const NpacdProcess& npacd) {
  std::vector<Row> rows;
  for (const npac::db::QueuedMessage& m : npac::testing::foldedQueue(npacd.db())) {
    rows.push_back({m.id, m.spid, npac::common::toHex(m.pdu), npac::db::toString(m.state)});
  }
  return rows;
}

// Waits (bounded) until every stored row is acknowledged.
bool waitUntilAllAcknowledged(const NpacdProcess& npacd) {
  return eventually(
      [&] {
        std::vector<Row> rows = storedRows(npacd);
        return !rows.empty() &&
               std::all_of(rows.begin(), rows.end(), [](const Row& r) { return r.state == "acknowledged"; });
      },
      10s);
}

}  // namespace

TEST_CASE("A broadcast to all reaches each of two LSMS simulators once and each acknowledges it") {
  NpacdProcess npacd;
  const fs::path key1 = provisionAs(npacd, "0001", "lsms");
  const fs::path key2 = provisionAs(npacd, "0002", "lsms");
  // An SOA never binds for LSMS data download: "all" leaves it out.
  REQUIRE(npacd.call(http::verb::post, "/v1/providers", Json{{"spid", "0003"}, {"name", "SOA"}, {"system_type", "soa"}})
              .status == 201);
  const std::vector<std::string> lsms{"--system-type", "lsms", "--functions", "lsms-data-download,notifications",
                                      "--expect", "1", "--duration", "15s"};
  std::vector<std::string> args1 = lsms, args2 = lsms;
  args1.insert(args1.end(), {"--from", "127.0.0.2"});
  args2.insert(args2.end(), {"--from", "127.0.0.3"});
  auto sim1 = npacd.sim("0001", key1, args1);
  auto sim2 = npacd.sim("0002", key2, args2);
  REQUIRE(npacd.waitForAssociations(2));

  Reply r = npacd.call(http::verb::post, "/v1/broadcasts", activation("all", "svact"));
  INFO(r.body.dump());
  REQUIRE(r.status == 201);
  CHECK(r.body["providers"] == 2);
  const int exit1 = sim1->wait(), exit2 = sim2->wait();
  INFO(npacd.log() << slurp(sim1->log) << slurp(sim2->log));
  REQUIRE(exit1 == 0);
  REQUIRE(exit2 == 0);
  for (SimRun* run : {sim1.get(), sim2.get()}) {
    INFO(run->result.dump());
    REQUIRE(run->result["received"].size() == 1);
    CHECK(run->result["received"][0]["info"] == NpacdProcess::tagHex("svact"));
    CHECK(run->result["received"][0]["answered"] == true);
    CHECK(run->result["received"][0]["retransmission"] == false);
  }
  CHECK(waitUntilAllAcknowledged(npacd));
  std::vector<Row> rows = storedRows(npacd);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].spid == "0001");
  CHECK(rows[1].spid == "0002");
}

TEST_CASE("Every provider's row of a broadcast answered 201 is there after npacd is killed -9 and restarted") {
  NpacdProcess npacd;
  for (const char* spid : {"0001", "0002", "0003", "0004"}) {
    REQUIRE(npacd.call(http::verb::post, "/v1/providers", Json{{"spid", spid}, {"name", "L"}, {"system_type", "lsms"}})
                .status == 201);
  }
  Reply r = npacd.call(http::verb::post, "/v1/broadcasts", activation("all", "crash"));
  INFO(r.body.dump());
  REQUIRE(r.status == 201);
  npacd.stopHard();  // at once after the answer: nothing of a graceful stop runs

  std::vector<Row> rows = storedRows(npacd);
  REQUIRE(rows.size() == 4);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].id == r.body["messages"][i]["id"]);
    CHECK(rows[i].spid == r.body["messages"][i]["spid"]);
    CHECK(rows[i].pdu_hex == rows[0].pdu_hex);
    CHECK(rows[i].state == "queued");
  }
  npacd.start();
  for (const Json& m : r.body["messages"]) CHECK(npacd.messageState(m["id"].get<std::int64_t>()) == "queued");
}
