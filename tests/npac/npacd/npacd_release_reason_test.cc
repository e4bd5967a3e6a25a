// npacd end to end: the association log says why each association was released — SRR
// turned off (NANC 353), the provider disabled, npacd shutting down, or the provider's own
// RLRQ (docs/OPERATIONS.md "Why an association ended"). Real binary, SQLite, loopback,
// npac-soa-sim; read back through GET /v1/association-log.
#include "tests/npac/npacd/npacd_fixture.h"

using namespace npacd_test;

namespace {

// The release rows of `spid`'s association log, newest first.
std::vector<Json> releases(const NpacdProcess& npacd, const std::string& spid) {
  Reply log = npacd.call(http::verb::get, "/v1/association-log?spid=" + spid + "&limit=100");
  REQUIRE(log.status == 200);
  std::vector<Json> out;
  for (const Json& e : log.body["events"]) {
    if (e["event"] == "release") out.push_back(e);
  }
  return out;
}

// Waits (bounded) until `spid` has `count` release rows.
std::vector<Json> waitForReleases(const NpacdProcess& npacd, const std::string& spid, std::size_t count) {
  std::vector<Json> rows;
  eventually(
      [&] {
        rows = releases(npacd, spid);
        return rows.size() >= count;
      },
      10s);
  return rows;
}

// The id of the live association whose peer address starts with `address`.
std::optional<std::int64_t> associationFrom(const NpacdProcess& npacd, const std::string& address) {
  Reply listed = npacd.call(http::verb::get, "/v1/associations");
  for (const Json& a : listed.body["associations"]) {
    if (a.value("peer", "").rfind(address + ":", 0) == 0) return a["id"].get<std::int64_t>();
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("an association released because SRR was turned off is logged with reason srr-off") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-going",
                                     "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  auto second = associationFrom(npacd, "127.0.0.3");
  REQUIRE(second);
  REQUIRE(npacd.call(http::verb::put, "/v1/providers/0001/srr", Json{{"on", false}}).status == 200);
  REQUIRE(npacd.waitForAssociations(1));
  auto rows = waitForReleases(npacd, "0001", 1);
  INFO(npacd.log());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["reason"] == "srr-off");
  CHECK(rows[0]["association"] == *second);
  const std::string log = npacd.log();
  CHECK(std::regex_search(log, std::regex("association " + std::to_string(*second) +
                                          R"( released: SPID 0001 NSAP \w+ mask [^\n]*: srr-off)")));
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
}

TEST_CASE("an association released because its provider was disabled is logged with reason provider-disabled") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(1));
  REQUIRE(npacd.call(http::verb::post, "/v1/providers/0001/disable").status == 200);
  REQUIRE(npacd.waitForAssociations(0));
  auto rows = waitForReleases(npacd, "0001", 1);
  INFO(npacd.log());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["reason"] == "provider-disabled");
  sim->wait(10s);
  CHECK(sim->result["associations"][0]["end"]["reason"] == "released-by-peer");
}

TEST_CASE("an association released by npacd's graceful shutdown is logged with reason shutdown") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(1));
  REQUIRE(npacd.stop() == 0);
  sim->wait(10s);
  CHECK(sim->result["associations"][0]["end"]["reason"] == "released-by-peer");
  npacd.start();  // the same database: the row written at the stop
  auto rows = releases(npacd, "0001");
  INFO(npacd.log());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["reason"] == "shutdown");
}

TEST_CASE("an association the provider released itself is logged with reason released-by-peer") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "1", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.submit("0001", "one", 1);
  REQUIRE(sim->wait(20s) == 0);
  auto rows = waitForReleases(npacd, "0001", 1);
  INFO(npacd.log());
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["reason"] == "released-by-peer");
}
