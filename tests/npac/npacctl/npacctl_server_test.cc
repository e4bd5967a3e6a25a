// npacctl's server commands as a child process ($NPAC_BIN/npacctl) against the admin API
// running in this process on an ephemeral loopback port over a real SQLite file.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "associations/signature.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"
#include "tests/support/program_run.h"
#include "tests/support/test_paths.h"

namespace npac::npacd {
namespace {

using npac::testing::ProgramRun;
using npac::testing::runNpacctl;

using testing::AdminApiFixture;
using nlohmann::json;

std::string api(const AdminApiFixture& f) { return " --api " + f.apiAddress() + " --token-file " + f.tokenFile(); }

TEST_CASE("npacctl sp add and sp list provision and show providers through the API") {
  AdminApiFixture f;
  ProgramRun added = runNpacctl("sp add 0001 --name 'First Telecom' --type soa --actor ops" + api(f));
  INFO(added.output);
  REQUIRE(added.exit_code == 0);
  CHECK_THAT(added.output, Catch::Contains("added 0001"));
  REQUIRE(runNpacctl("sp add 0002 --name Second --type lsms --actor ops" + api(f)).exit_code == 0);
  ProgramRun list = runNpacctl("sp list" + api(f));
  INFO(list.output);
  REQUIRE(list.exit_code == 0);
  CHECK_THAT(list.output, Catch::Contains("SPID") && Catch::Contains("0001  First Telecom  soa") &&
                              Catch::Contains("0002  Second"));
  ProgramRun as_json = runNpacctl("sp list --json" + api(f));
  json body = json::parse(as_json.output);
  REQUIRE(body["providers"].size() == 2);
  CHECK(body["providers"][1]["system_type"] == "lsms");
}

TEST_CASE("npacctl reports the API's error with exit 1 and a refused connection with exit 3 and a hint") {
  AdminApiFixture f;
  ProgramRun bad = runNpacctl("sp add 00-1 --name X --type soa" + api(f));
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Catch::Contains("invalid_spid"));
  // A port nothing listens on: bind one, note it, close it.
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const auto port = probe.local_endpoint().port();
  probe.close();
  ProgramRun refused = runNpacctl("sp list --token npac_unused --api 127.0.0.1:" + std::to_string(port));
  CHECK(refused.exit_code == 3);
  CHECK_THAT(refused.output, Catch::Contains("cannot reach npacd at 127.0.0.1:" + std::to_string(port)) &&
                                 Catch::Contains("refused") && Catch::Contains("is it running?"));
}

TEST_CASE("npacctl exits 2 on every usage error whatever CLI11 calls it") {
  // Without the mapping CLI11 exits 104 (conversion), 106 (required), 109 (extras), 114 (no value).
  for (const char* args : {"sp add 0001", "sp list --api", "assoc abort notanumber", "sp list extra"}) {
    INFO(args);
    ProgramRun r = runNpacctl(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains("--help"));
  }
  CHECK(runNpacctl("--help").exit_code == 0);
}

TEST_CASE("npacctl key add reads a PEM public key file and the key is stored") {
  AdminApiFixture f;
  REQUIRE(runNpacctl("sp add 0001 --name A --type soa" + api(f)).exit_code == 0);
  auto pair = associations::generateKeyPair(associations::SignatureAlgorithm::kRsaSha256);
  REQUIRE(pair.isOk());
  const std::string pem_path = f.dir() + "/0001.pub.pem";
  std::ofstream(pem_path) << pair.value().public_pem;
  ProgramRun added = runNpacctl("key add 0001 --list 1 --key 7 --algorithm rsa-sha256 --pem " + pem_path + api(f));
  INFO(added.output);
  REQUIRE(added.exit_code == 0);
  CHECK_THAT(added.output, Catch::Contains("added key 0001/1/7 rsa-sha256"));
  ProgramRun list = runNpacctl("key list 0001 --json" + api(f));
  json body = json::parse(list.output);
  REQUIRE(body["keys"].size() == 1);
  CHECK(body["keys"][0]["public_key_pem"] == pair.value().public_pem);
  ProgramRun missing = runNpacctl("key add 0001 --list 1 --key 8 --pem " + f.dir() + "/absent.pem" + api(f));
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.output, Catch::Contains("cannot read"));
}

TEST_CASE("npacctl srr SPID on|off switches the provider's srr tunable") {
  AdminApiFixture f;
  REQUIRE(runNpacctl("sp add 0001 --name A --type soa" + api(f)).exit_code == 0);
  ProgramRun on = runNpacctl("srr 0001 on --actor ops" + api(f));
  INFO(on.output);
  REQUIRE(on.exit_code == 0);
  CHECK(on.output == "srr 0001 on\n");
  CHECK(f.registry->get(tunables::kSrr, "0001"));
  REQUIRE(runNpacctl("srr 0001 off" + api(f)).exit_code == 0);
  CHECK_FALSE(f.registry->get(tunables::kSrr, "0001"));
  CHECK(runNpacctl("srr 0001 maybe" + api(f)).exit_code != 0);
}

TEST_CASE("npacctl tunable set and get round-trip, and a refused value keeps the registry's reason") {
  AdminApiFixture f;
  ProgramRun set = runNpacctl("tunable set response_timeout 900s --actor ops" + api(f));
  INFO(set.output);
  REQUIRE(set.exit_code == 0);
  CHECK(set.output == "response_timeout = 15m\n");
  ProgramRun get = runNpacctl("tunable get response_timeout" + api(f));
  CHECK(get.output == "response_timeout = 15m\n");
  REQUIRE(runNpacctl("tunable set congestion_window 20 --spid 0003" + api(f)).exit_code == 0);
  CHECK(runNpacctl("tunable get congestion_window --spid 0003" + api(f)).output == "congestion_window@0003 = 20\n");
  ProgramRun refused = runNpacctl("tunable set congestion_window 0" + api(f));
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.output, Catch::Contains("out_of_range") && Catch::Contains("1..10000"));
  ProgramRun cleared = runNpacctl("tunable clear congestion_window --spid 0003" + api(f));
  CHECK(cleared.output == "congestion_window@0003 = 100\n");
}

TEST_CASE("npacctl send prints the committed id and npacctl msg status reads it back") {
  AdminApiFixture f;
  REQUIRE(runNpacctl("sp add 0001 --name A --type soa" + api(f)).exit_code == 0);
  auto writer = db::QueueWriter::start(f.path(), {}, AdminApiFixture::clock());
  REQUIRE(writer.isOk());
  testing::QueueBackedCore core(*writer.value());
  f.onApiThread([&] { f.api->attachCore(&core); });
  ProgramRun sent = runNpacctl("send --spid 0001 --function notifications --class 1.3.6.1.4.1.103.7.0.0.1.3"
                     " --instance '{\"dn\":[[{\"id\":\"2.5.4.3\",\"value\":\"13044e504143\"}]]}'"
                     " --type 1.3.6.1.4.1.103.7.0.0.5.1 --info 0400 --priority 2 --key 3035551212" + api(f));
  INFO(sent.output);
  REQUIRE(sent.exit_code == 0);
  CHECK(sent.output == "accepted 1\n");
  CHECK(core.seen().keys == std::vector<std::string>{"3035551212"});
  ProgramRun status = runNpacctl("msg status 1" + api(f));
  INFO(status.output);
  CHECK(status.exit_code == 0);
  CHECK_THAT(status.output, Catch::StartsWith("message 1 for 0001: queued (attempts 0"));
  ProgramRun missing = runNpacctl("msg status 99" + api(f));
  CHECK(missing.exit_code == 1);
  CHECK_THAT(missing.output, Catch::Contains("message_not_found"));
  f.onApiThread([&] { f.api->attachCore(nullptr); });
  ProgramRun no_core = runNpacctl("assoc list" + api(f));
  CHECK(no_core.exit_code == 1);
  CHECK_THAT(no_core.output, Catch::Contains("core_unavailable"));
}

TEST_CASE("npacctl audit and assoc log show the newest entries as a table") {
  AdminApiFixture f;
  REQUIRE(runNpacctl("sp add 0001 --name First --type soa --actor ops" + api(f)).exit_code == 0);
  // The actor is the token's name (--token wins over api()'s --token-file).
  REQUIRE(runNpacctl("sp disable 0001" + api(f) + " --token " + f.token("night-shift")).exit_code == 0);
  ProgramRun audit = runNpacctl("audit --limit 1" + api(f));
  INFO(audit.output);
  REQUIRE(audit.exit_code == 0);
  CHECK_THAT(audit.output, Catch::Contains("ACTOR") && Catch::Contains("night-shift") &&
                               Catch::Contains("provider.disable"));
  CHECK_THAT(audit.output, !Catch::Contains("provider.add"));
  ProgramRun log = runNpacctl("assoc log --spid 0001" + api(f));
  INFO(log.output);
  REQUIRE(log.exit_code == 0);
  CHECK_THAT(log.output, Catch::Contains("EVENT"));
  ProgramRun bad = runNpacctl("assoc log --limit 0" + api(f));
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Catch::Contains("limit must be an integer 1..10000"));
}

}  // namespace
}  // namespace npac::npacd
