// npacd end to end: the real binary (the heartbeat case: npacd's own start phases
// in-process on a manual clock, in_process_npacd.h), a real SQLite file, real loopback
// TCP, providers played by npac-soa-sim. Delivery, acknowledgement and the round robin of
// NANC 353.
#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/npac/npacd/in_process_npacd.h"

#include <map>
#include <set>

using namespace npacd_test;

namespace {

// message tag (the information hex) → the associations it arrived on, from a sim report.
std::map<std::string, std::vector<int>> arrivals(const Json& report) {
  std::map<std::string, std::vector<int>> out;
  for (const Json& r : report["received"]) out[r["info"].get<std::string>()].push_back(r["association"].get<int>());
  return out;
}

}  // namespace

TEST_CASE("npacd delivers submitted messages to a bound provider and marks them acknowledged") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "5", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  std::vector<std::int64_t> ids = npacd.submit("0001", "m", 5);
  REQUIRE(sim->wait() == 0);
  CHECK(sim->result["totals"]["received"] == 5);
  CHECK(sim->result["totals"]["answered"] == 5);
  // The acknowledgement is committed just after the answers arrive.
  for (std::int64_t id : ids) {
    std::string state;
    eventually([&] { return (state = npacd.messageState(id)) == "acknowledged"; }, 2s, 10ms);
    CHECK(state == "acknowledged");
  }
  CHECK(npacd.log().find("bind accepted: SPID 0001 NSAP 540072872203127000000002") != std::string::npos);
  CHECK(npacd.stop() == 0);
}

TEST_CASE("unconfirmed messages are acknowledged once written and each arrives at the provider exactly once") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  // Submitted before any association is up: nothing has been written, so nothing may be
  // acknowledged yet.
  std::vector<std::int64_t> ids = npacd.submit("0001", "u", 200, /*confirmed=*/false);
  for (std::int64_t id : ids) CHECK(npacd.messageState(id) == "queued");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "200", "--duration", "15s"});
  REQUIRE(sim->wait() == 0);
  CHECK(sim->result["totals"]["received"] == 200);
  CHECK(sim->result["totals"]["answered"] == 0);  // unconfirmed: nothing to answer
  auto seen = arrivals(sim->result);
  CHECK(seen.size() == 200);
  for (int i = 0; i < 200; ++i) {
    auto it = seen.find(NpacdProcess::tagHex(label("u", i)));
    REQUIRE(it != seen.end());
    CHECK(it->second.size() == 1);
  }
  for (std::int64_t id : ids) {
    std::string state;
    eventually([&] { return (state = npacd.messageState(id)) == "acknowledged"; }, 2s, 10ms);
    CHECK(state == "acknowledged");
  }
  CHECK(npacd.stop() == 0);
}

TEST_CASE("with SRR on three associations share 300 PDUs in strict rotation, none missing or repeated") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--from",
                                     "127.0.0.4", "--expect", "300", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(3));
  npacd.submit("0001", "r", 300);
  REQUIRE(sim->wait() == 0);
  const Json& report = sim->result;
  REQUIRE(report["associations"].size() == 3);
  for (const Json& a : report["associations"]) CHECK(a["received"] == 100);
  auto seen = arrivals(report);
  CHECK(seen.size() == 300);
  std::vector<int> by_submission;
  for (int i = 0; i < 300; ++i) {
    auto it = seen.find(NpacdProcess::tagHex(label("r", i)));
    REQUIRE(it != seen.end());
    CHECK(it->second.size() == 1);  // no duplicate
    by_submission.push_back(it->second.front());
  }
  // Strict rotation: message n goes where message n-3 went, and 3 consecutive ones
  // cover the three associations.
  CHECK(std::set<int>(by_submission.begin(), by_submission.begin() + 3).size() == 3);
  for (int i = 3; i < 300; ++i) CHECK(by_submission[i] == by_submission[i - 3]);
  for (const Json& r : report["received"]) CHECK_FALSE(r["retransmission"].get<bool>());
}

TEST_CASE("SIGTERM releases every association with RLRQ and npacd exits 0") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-running",
                                     "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(2));
  CHECK(npacd.stop() == 0);
  sim->wait(10s);
  REQUIRE(sim->result.is_object());
  for (const Json& a : sim->result["associations"]) CHECK(a["end"]["reason"] == "released-by-peer");
  CHECK(npacd.log().find("npacd stopped") != std::string::npos);
}

TEST_CASE("an operator abort through the API ends that association only and its provider keeps the other") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-going",
                                     "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(2));
  const Reply listed = npacd.call(http::verb::get, "/v1/associations");
  const std::int64_t second = listed.body["associations"][1]["id"].get<std::int64_t>();
  // The operator is whoever holds the token: the log names the token, "alice".
  const Reply issued = npacd.call(http::verb::post, "/v1/tokens", Json{{"name", "alice"}, {"role", "operator"}});
  REQUIRE(issued.status == 201);
  const std::string alice = "Bearer " + issued.body["token"].get<std::string>();
  const std::string abort_path = "/v1/associations/" + std::to_string(second) + "/abort";
  CHECK(npacd.callWith(alice, http::verb::post, abort_path).status == 200);
  REQUIRE(npacd.waitForAssociations(1));
  CHECK(npacd.callWith(alice, http::verb::post, abort_path).status == 404);
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  REQUIRE(sim->result.is_object());
  CHECK(sim->result["associations"][1]["end"]["reason"] == "aborted-by-peer");
  CHECK(sim->result["associations"][0]["end"]["reason"] != "aborted-by-peer");
  CHECK(npacd.log().find("aborted by operator alice") != std::string::npos);
}

TEST_CASE("npacd's heartbeat reports on the NPAC SMS object the provider checks for, CN=NPAC") {
  InProcessNpacd npacd;  // a manual clock: the 10 s interval is moved through
  auto key = npacd.provision("0001");
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/heartbeat_interval",
                     Json{{"value", "10s"}, {"spid", "0001"}}).status == 200);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.advance(10s);
  // The sim sends nothing of its own: the first PDU npacd receives is a heartbeat's answer.
  Json received = 0;
  eventually(
      [&] {
        const Reply listed = npacd.call(http::verb::get, "/v1/associations");
        if (!listed.body["associations"].empty()) received = listed.body["associations"][0]["received"];
        return received != 0;
      },
      20s, 50ms);
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  const Json& report = sim->result;
  INFO(report.dump(2));
  REQUIRE(report.is_object());
  CHECK(report["associations"][0]["heartbeats"].get<int>() == 1);
  CHECK(report["errors"].empty());  // the sim reports a heartbeat on any other object
}

TEST_CASE("a recovery action on an object other than the NPAC SMS's is answered noSuchObjectInstance") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  // lnpRecoveryComplete (M-ACTION confirmed) on lnpNpacSms: invoke 702 with the empty DN,
  // invoke 703 with CN=NPAC. Outside recovery mode the second is performed and fails as
  // the recovery state says (processingFailure); the first never gets that far.
  const std::string class_oid = "80 0c 2b 06 01 04 01 67 07 00 00 5a 03 01";
  const std::string action = "ac 0e 82 0c 2b 06 01 04 01 67 07 00 00 5a 06 02";
  const std::string empty_dn = "a1 29 02 02 02 be 02 01 07 30 20 " + class_oid + " a2 00 " + action;
  const std::string npac_dn = "a1 38 02 02 02 bf 02 01 07 30 2f " + class_oid +
                              " a2 0f 31 0d 30 0b 06 03 55 04 03 13 04 4e 50 41 43 " + action;
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--send-raw-invoke", empty_dn,
                                     "--send-raw-invoke", npac_dn, "--duration", "15s"});
  REQUIRE(sim->wait(20s) == 0);
  const Json& report = sim->result;
  INFO(report.dump(2) << "\n" << npacd.log());
  REQUIRE(report["requests"].size() == 2);
  CHECK(report["requests"][0]["reply"] == "returnError");
  CHECK(report["requests"][0]["error"]["name"] == "noSuchObjectInstance");
  CHECK(report["requests"][1]["reply"] == "returnError");
  CHECK(report["requests"][1]["error"]["name"] == "processingFailure");
}
