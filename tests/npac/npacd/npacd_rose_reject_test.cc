// npacd end to end: a provider's Invoke that CMIP cannot decode — an operation X.711 does
// not define, an argument not of its operation's type — is answered at once with a ROSE
// Reject (X.880 InvokeProblem) on the same association, logged, never handed to the
// application, and the association stays up. Real binary, SQLite, loopback, npac-soa-sim
// sending the raw invokes (--send-raw-invoke).
#include "tests/npac/npacd/npacd_fixture.h"

using namespace npacd_test;

namespace {

// Invoke id 700, opcode 42 (X.711 defines 0..10), argument an empty SEQUENCE.
constexpr const char* kUnknownOperation = "a1 09 02 02 02 bc 02 01 2a 30 00";
// Invoke id 701, m-Action-Confirmed (7) whose argument is a bare INTEGER, not an
// ActionArgument.
constexpr const char* kMistypedAction = "a1 0a 02 02 02 bd 02 01 07 02 01 2a";

// Waits (bounded) until npacd's log has `count` lines containing `text`.
bool waitForLog(const NpacdProcess& npacd, const std::string& text, std::size_t count,
                std::chrono::milliseconds limit = 10s) {
  return eventually(
      [&] {
        const std::string log = npacd.log();
        std::size_t found = 0;
        for (std::size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++found;
        return found >= count;
      },
      limit);
}

}  // namespace

TEST_CASE("an invoke of an operation CMIP does not define gets an unrecognizedOperation reject and the association keeps delivering") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--send-raw-invoke", kUnknownOperation,
                                     "--expect", "1", "--duration", "15s"});
  REQUIRE(waitForLog(npacd, "rejected (unrecognizedOperation)", 1));
  npacd.submit("0001", "after-reject", 1);
  REQUIRE(sim->wait(20s) == 0);
  const Json& report = sim->result;
  INFO(report.dump(2) << "\n" << npacd.log());
  REQUIRE(report["requests"].size() == 1);
  const Json& raw = report["requests"][0];
  CHECK(raw["invoke_id"] == 700);
  CHECK(raw["reply"] == "reject");
  CHECK(raw["reply_on"] == 1);
  CHECK(raw["reject"]["kind"] == "invoke");
  CHECK(raw["reject"]["problem"] == 1);
  CHECK(raw["reject"]["name"] == "unrecognizedOperation");
  // Still bound after the reject: the message came on it and the sim released it itself.
  CHECK(report["associations"][0]["received"] == 1);
  CHECK(report["associations"][0]["end"]["reason"] == "released");
  const std::string log = npacd.log();
  CHECK(std::regex_search(
      log, std::regex(R"(SPID 0001 association \d+: invoke id 700 opcode 42 rejected \(unrecognizedOperation\))")));
  Reply inbound = npacd.call(http::verb::get, "/v1/inbound?wait=0s&max=10");
  REQUIRE(inbound.status == 200);
  CHECK(inbound.body["requests"].empty());
}

TEST_CASE("an M-ACTION whose argument is not an ActionArgument gets a mistypedArgument reject and never reaches the application") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--send-raw-invoke", kMistypedAction,
                                     "--send-raw-invoke", kUnknownOperation, "--expect", "1",
                                     "--duration", "15s"});
  REQUIRE(waitForLog(npacd, "rejected (", 2));
  npacd.submit("0001", "after-rejects", 1);
  REQUIRE(sim->wait(20s) == 0);
  const Json& report = sim->result;
  INFO(report.dump(2) << "\n" << npacd.log());
  REQUIRE(report["requests"].size() == 2);
  const Json& action = report["requests"][0];
  CHECK(action["invoke_id"] == 701);
  CHECK(action["reply"] == "reject");
  CHECK(action["reject"]["kind"] == "invoke");
  CHECK(action["reject"]["problem"] == 2);
  CHECK(action["reject"]["name"] == "mistypedArgument");
  CHECK(report["requests"][1]["reject"]["problem"] == 1);
  CHECK(report["associations"][0]["received"] == 1);
  CHECK(report["associations"][0]["end"]["reason"] == "released");
  CHECK(npacd.log().find("invoke id 701 opcode 7 rejected (mistypedArgument)") != std::string::npos);
  Reply inbound = npacd.call(http::verb::get, "/v1/inbound?wait=0s&max=10");
  REQUIRE(inbound.status == 200);
  CHECK(inbound.body["requests"].empty());
}
