// npacctl inbound list|answer and assoc log as child processes ($NPAC_BIN/npacctl) against
// the real npacd binary with npac-soa-sim as the provider (NpacdProcess: real SQLite file,
// loopback TCP, ephemeral ports).
#include <sys/wait.h>

#include <cstdio>
#include <regex>

#include "tests/npac/npacd/npacd_fixture.h"

using namespace npacd_test;

namespace {

using npac::testing::ProgramRun;
using npac::testing::runNpacctl;

// " --api 127.0.0.1:PORT" of this npacd, read from its start-up line.
std::string api(const NpacdProcess& npacd) {
  std::smatch m;
  const std::string log = npacd.log();
  REQUIRE(std::regex_search(log, m, std::regex(R"(admin API on (127\.0\.0\.1:\d+))")));
  return " --api " + m[1].str() + " --token-file " + npacd.tokenFile().string();
}

// `npacctl inbound list` until it shows a request (bounded); its output.
ProgramRun listUntilARequest(const NpacdProcess& npacd, const std::string& flags = "") {
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  ProgramRun listed;
  while (std::chrono::steady_clock::now() < deadline) {
    listed = runNpacctl("inbound list --wait 2s" + flags + api(npacd));
    REQUIRE(listed.exit_code == 0);
    if (listed.output.find("no provider request is waiting") == std::string::npos) break;
  }
  return listed;
}

// The first request id of a human `inbound list` table (first column of its second line).
std::string firstId(const std::string& table) {
  std::smatch m;
  REQUIRE(std::regex_search(table, m, std::regex(R"(\n(\d+)\s)")));
  return m[1].str();
}

}  // namespace

TEST_CASE("npacctl inbound list shows a provider request once and inbound answer returns its result to the provider") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto asking = npacd.sim("0001", key, {"--from", "127.0.0.2", "--send-requests", "1", "--duration", "20s"});
  ProgramRun listed = listUntilARequest(npacd, " --spid 0001");
  INFO(listed.output);
  CHECK_THAT(listed.output, Catch::StartsWith("ID") && Catch::Contains("OPERATION") &&
                                Catch::Contains("0001") && Catch::Contains("540072872203127000000002") &&
                                Catch::Contains("m-Action-Confirmed"));
  const std::string id = firstId(listed.output);
  // Handed out once: the next poll no longer shows it.
  CHECK(runNpacctl("inbound list" + api(npacd)).output == "no provider request is waiting\n");

  ProgramRun answered = runNpacctl("inbound answer " + id + " --actor ops" + api(npacd));
  INFO(answered.output);
  CHECK(answered.exit_code == 0);
  CHECK_THAT(answered.output, Catch::StartsWith("answered request " + id + " (committed"));
  REQUIRE(asking->wait() == 0);
  CHECK(asking->result["requests"][0]["reply"] == "returnResult");

  ProgramRun again = runNpacctl("inbound answer " + id + api(npacd));
  CHECK(again.exit_code == 1);
  CHECK_THAT(again.output, Catch::Contains("request_not_found"));
}

TEST_CASE("npacctl inbound answer --error returns an X.711 error to the provider") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto asking = npacd.sim("0001", key, {"--from", "127.0.0.2", "--send-requests", "1", "--duration", "20s"});
  ProgramRun listed = listUntilARequest(npacd, " --json");
  INFO(listed.output);
  Json body = Json::parse(listed.output, nullptr, false);
  REQUIRE(body.is_object());
  REQUIRE(body["requests"].size() == 1);
  const std::string id = std::to_string(body["requests"][0]["id"].get<std::int64_t>());
  ProgramRun answered = runNpacctl("inbound answer " + id + " --error noSuchAction" + api(npacd));
  INFO(answered.output);
  CHECK(answered.exit_code == 0);
  asking->wait();
  CHECK(asking->result["requests"][0]["reply"] == "returnError");
}

TEST_CASE("npacctl inbound answer refuses a result together with an error and bad hex with the API's reason") {
  NpacdProcess npacd;
  ProgramRun both = runNpacctl("inbound answer 1 --result 0500 --error 9" + api(npacd));
  CHECK(both.exit_code == 2);
  CHECK_THAT(both.output, Catch::Contains("excludes"));
  ProgramRun bad_hex = runNpacctl("inbound answer 1 --result zz" + api(npacd));
  CHECK(bad_hex.exit_code == 1);
  CHECK_THAT(bad_hex.output, Catch::Contains("invalid_response"));
  ProgramRun bad_wait = runNpacctl("inbound list --wait 61s" + api(npacd));
  CHECK(bad_wait.exit_code == 1);
  CHECK_THAT(bad_wait.output, Catch::Contains("invalid_wait"));
}

TEST_CASE("npacctl assoc log shows the diagnostic of a refused bind") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  // Key 9 of list 1 was never provisioned: the bind is refused as unknown-key.
  auto refused = npacd.sim("0001", key, {"--from", "127.0.0.2", "--key-id", "9", "--duration", "10s"});
  CHECK(refused->wait() == 5);
  ProgramRun log = runNpacctl("assoc log --spid 0001" + api(npacd));
  INFO(log.output);
  REQUIRE(log.exit_code == 0);
  CHECK_THAT(log.output, Catch::Contains("DIAGNOSTIC") && Catch::Contains("unknown-key"));
}
