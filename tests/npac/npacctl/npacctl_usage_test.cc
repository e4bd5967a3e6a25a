// npacctl as an operator types it ($NPAC_BIN/npacctl as a child process, against the admin
// API in this process over a real SQLite file): the connection options before or after
// the command and from $NPACCTL_API, a mistyped command named with the nearest one, every
// command group's description naming its commands, on/off in any case, a provider key's
// algorithm read from the key, and refusals that say what was wrong once and what to run.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "associations/signature.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"
#include "tests/support/program_run.h"

namespace npac::npacd {
namespace {

using npac::testing::ProgramRun;
using npac::testing::programDir;
using npac::testing::runCommand;

using namespace testing;

// `program` (npacctl, npac-soa-sim) with `args`, after `environment` ("NAME=value ...").
ProgramRun run(const std::string& args, const std::string& environment = "", const std::string& program = "npacctl") {
  return runCommand((environment.empty() ? "" : "env " + environment + " ") + programDir() + "/" + program + " " + args +
                    " 2>&1");
}

std::string tokenFile(const AdminApiFixture& f) { return " --token-file " + f.tokenFile(); }

// The command names of a "Subcommands:" section of CLI11's --help, in order.
std::vector<std::string> subcommands(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Subcommands:", 0) == 0) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.empty() || line[0] != ' ') break;
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

}  // namespace

TEST_CASE("npacctl takes the connection options before the command as after it") {
  AdminApiFixture f;
  REQUIRE(f.call(V::post, "/v1/providers", json{{"spid", "0001"}, {"name", "One"}, {"system_type", "soa"}}).status ==
          201);
  ProgramRun before = run("--api " + f.apiAddress() + tokenFile(f) + " sp list");
  INFO(before.output);
  CHECK(before.exit_code == 0);
  CHECK_THAT(before.output, Catch::Contains("0001  One"));
  ProgramRun after = run("sp list --api " + f.apiAddress() + tokenFile(f));
  CHECK(after.exit_code == 0);
  CHECK(after.output == before.output);
  ProgramRun split = run("--api " + f.apiAddress() + " sp list" + tokenFile(f));
  CHECK(split.output == before.output);
}

TEST_CASE("npacctl finds npacd at $NPACCTL_API unless --api says otherwise") {
  AdminApiFixture f;
  ProgramRun from_env = run("sp list" + tokenFile(f), "NPACCTL_API=" + f.apiAddress());
  INFO(from_env.output);
  CHECK(from_env.exit_code == 0);
  CHECK_THAT(from_env.output, Catch::Contains("SPID"));
  // --api wins over the variable (here naming a port where nothing listens).
  ProgramRun flag_wins = run("--api " + f.apiAddress() + " sp list" + tokenFile(f), "NPACCTL_API=127.0.0.1:1");
  CHECK(flag_wins.exit_code == 0);
  ProgramRun bad = run("sp list" + tokenFile(f), "NPACCTL_API=npacd-without-port");
  INFO(bad.output);
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.output, Catch::Contains("$NPACCTL_API 'npacd-without-port' must be HOST:PORT"));
  ProgramRun bad_flag = run("--api npacd-without-port sp list" + tokenFile(f));
  CHECK_THAT(bad_flag.output, Catch::Contains("--api 'npacd-without-port' must be HOST:PORT"));
}

TEST_CASE("npacctl names a mistyped command and suggests the nearest one") {
  struct Case {
    const char* args;
    const char* said;
  };
  for (const Case& c : {Case{"spp list", "npacctl: 'spp' is not a command (did you mean 'sp'?)"},
                        Case{"sp lsit", "npacctl sp: 'lsit' is not a command (did you mean 'list'?)"},
                        Case{"--api 127.0.0.1:1 --token x tunabel list",
                             "npacctl: 'tunabel' is not a command (did you mean 'tunable'?)"},
                        Case{"assoc lgo --api 127.0.0.1:1", "npacctl assoc: 'lgo' is not a command (did you mean 'log'?)"},
                        Case{"frobnicate", "npacctl: 'frobnicate' is not a command; the commands: plan, sp"}}) {
    INFO(c.args);
    ProgramRun r = run(c.args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(c.said));
    CHECK_THAT(r.output, !Catch::Contains("A subcommand is required"));
  }
}

TEST_CASE("npacctl given a command group alone lists the commands it takes") {
  ProgramRun r = run("sp");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("npacctl sp: which command? add, list, show, disable, enable"));
}

TEST_CASE("Every npacctl command group's description names each of its commands") {
  ProgramRun top = run("--help");
  REQUIRE(top.exit_code == 0);
  const std::vector<std::string> groups = subcommands(top.output);
  REQUIRE(groups.size() > 10);
  int checked = 0;
  for (const std::string& group : groups) {
    ProgramRun help = run(group + " --help");
    INFO(group << ":\n" << help.output);
    REQUIRE(help.exit_code == 0);
    const std::string description = help.output.substr(0, help.output.find('\n'));
    for (const std::string& command : subcommands(help.output)) {
      INFO(command);
      CHECK(std::regex_search(description, std::regex("\\b" + command + "\\b")));
      ++checked;
    }
  }
  CHECK(checked > 20);
}

TEST_CASE("npacctl srr takes on and off in any case") {
  AdminApiFixture f;
  REQUIRE(f.call(V::post, "/v1/providers", json{{"spid", "0001"}, {"name", "One"}, {"system_type", "soa"}}).status ==
          201);
  ProgramRun on = run("srr 0001 ON --api " + f.apiAddress() + tokenFile(f));
  INFO(on.output);
  CHECK(on.exit_code == 0);
  CHECK(on.output == "srr 0001 on\n");
  ProgramRun off = run("srr 0001 Off --api " + f.apiAddress() + tokenFile(f));
  CHECK(off.output == "srr 0001 off\n");
  ProgramRun maybe = run("srr 0001 maybe --api " + f.apiAddress() + tokenFile(f));
  CHECK(maybe.exit_code == 2);
}

TEST_CASE("npac-soa-sim keygen and npacctl key add pair up with their defaults: the algorithm is read from the key") {
  AdminApiFixture f;
  REQUIRE(f.call(V::post, "/v1/providers", json{{"spid", "0001"}, {"name", "One"}, {"system_type", "soa"}}).status ==
          201);
  const std::string ed = f.dir() + "/ed.pem";
  REQUIRE(run("keygen --out " + ed, "", "npac-soa-sim").exit_code == 0);
  ProgramRun added = run("key add 0001 --list 1 --key 1 --pem " + ed + ".pub --api " + f.apiAddress() + tokenFile(f));
  INFO(added.output);
  CHECK(added.exit_code == 0);
  CHECK_THAT(added.output, Catch::Contains("added key 0001/1/1 ed25519"));

  // The spelling npacctl takes is the simulator's too; its old "rsa" still reads.
  for (const char* spelling : {"rsa-sha256", "rsa"}) {
    INFO(spelling);
    const std::string rsa = f.dir() + "/" + spelling + ".pem";
    ProgramRun made = run(std::string("keygen --algorithm ") + spelling + " --out " + rsa, "", "npac-soa-sim");
    INFO(made.output);
    REQUIRE(made.exit_code == 0);
    CHECK_THAT(made.output, Catch::Contains("private key (rsa-sha256)"));
  }
  ProgramRun rsa_added =
      run("key add 0001 --list 1 --key 2 --pem " + f.dir() + "/rsa-sha256.pem.pub --api " + f.apiAddress() + tokenFile(f));
  INFO(rsa_added.output);
  CHECK(rsa_added.exit_code == 0);
  CHECK_THAT(rsa_added.output, Catch::Contains("added key 0001/1/2 rsa-sha256"));

  ProgramRun refused = run("keygen --algorithm dsa --out " + f.dir() + "/dsa.pem", "", "npac-soa-sim");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.output, Catch::Contains("--algorithm must be ed25519 or rsa-sha256, not 'dsa'"));
}

TEST_CASE("npacctl key add with an --algorithm the key does not have is refused naming both") {
  AdminApiFixture f;
  REQUIRE(f.call(V::post, "/v1/providers", json{{"spid", "0001"}, {"name", "One"}, {"system_type", "soa"}}).status ==
          201);
  auto pair = associations::generateKeyPair(associations::SignatureAlgorithm::kEd25519);
  REQUIRE(pair.isOk());
  const std::string pem = f.dir() + "/ed.pub.pem";
  std::ofstream(pem) << pair.value().public_pem;
  ProgramRun r = run("key add 0001 --list 1 --key 1 --algorithm rsa-sha256 --pem " + pem + " --api " + f.apiAddress() +
              tokenFile(f));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("the key is ed25519, but algorithm says rsa-sha256"));
}

TEST_CASE("A refused tunable is said once, with the nearest name, and npacctl names the command listing them") {
  AdminApiFixture f;
  ProgramRun unknown = run("tunable get bind_timout --api " + f.apiAddress() + tokenFile(f));
  INFO(unknown.output);
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.output,
             Catch::Contains("npacctl: unknown_tunable: no tunable named \"bind_timout\" (did you mean 'bind_timeout'?)"));
  CHECK_THAT(unknown.output, Catch::Contains("npacctl tunable list shows every tunable"));
  CHECK_THAT(unknown.output, !Catch::Contains("unknown tunable:"));
  CHECK_THAT(unknown.output, !Catch::Contains("/v1/"));
  ProgramRun wrong = run("tunable set response_timeout soon --api " + f.apiAddress() + tokenFile(f));
  INFO(wrong.output);
  CHECK(wrong.exit_code == 1);
  CHECK_THAT(wrong.output, Catch::Contains("npacctl: wrong_type: "));
  CHECK_THAT(wrong.output, !Catch::Contains("wrong type:"));
}

TEST_CASE("npacctl says where a token npacd refused came from") {
  AdminApiFixture f;
  ProgramRun r = run("sp list --api " + f.apiAddress() + " --token npac_" + std::string(64, '0'));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("unknown token"));
  CHECK_THAT(r.output, Catch::Contains("npacd refused the token (from --token)"));
  ProgramRun reader = run("token list --api " + f.apiAddress() + " --token " + f.token("viewer", db::TokenRole::kReader));
  INFO(reader.output);
  CHECK(reader.exit_code == 1);
  CHECK_THAT(reader.output, Catch::Contains("may not do this"));
}

}  // namespace npac::npacd
