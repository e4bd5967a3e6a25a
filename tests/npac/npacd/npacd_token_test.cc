// The real npacd's first operator token (<db>.token, npac/npacd/initial_token.h) and
// npacctl's token commands and search order, as child processes on real files and
// loopback TCP.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>

#include "tests/npac/npacd/npacd_fixture.h"

using namespace npacd_test;

namespace {

using npac::testing::ProgramRun;

// npacctl `args` run in `cwd` with NPACCTL_TOKEN and NPACCTL_TOKEN_FILE unset.
ProgramRun npacctlIn(const fs::path& cwd, const std::string& args) {
  return npac::testing::runCommand("cd '" + cwd.string() + "' && env -u NPACCTL_TOKEN -u NPACCTL_TOKEN_FILE " +
                                   binDir() + "/npacctl " + args + " 2>&1");
}

std::string api(const NpacdProcess& npacd) { return " --api 127.0.0.1:" + std::to_string(npacd.apiPort()); }

unsigned modeOf(const fs::path& file) {
  struct stat st{};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The secret npacctl token create printed (its last line).
std::string secretIn(const std::string& output) {
  std::smatch m;
  REQUIRE(std::regex_search(output, m, std::regex(R"((npac_[0-9a-f]{64}))")));
  return m[1].str();
}

}  // namespace

TEST_CASE("npacd's first start writes an operator token file of mode 0600 that npacctl finds with no flag") {
  NpacdProcess npacd;
  REQUIRE(fs::exists(npacd.tokenFile()));
  CHECK(modeOf(npacd.tokenFile()) == 0600);
  CHECK(modeOf(npacd.db()) == 0600);
  CHECK_THAT(npacd.log(), Catch::Contains("operator token 'npacd-initial'"));
  // From the database's directory npacctl finds npacd.db.token by itself.
  ProgramRun added = npacctlIn(npacd.dir(), "sp add 0001 --name First --type soa" + api(npacd));
  INFO(added.output);
  CHECK(added.exit_code == 0);
  // And from a subdirectory, through the parent walk (the README runs npacctl in var/demo).
  fs::create_directories(npacd.dir() / "demo" / "deeper");
  ProgramRun listed = npacctlIn(npacd.dir() / "demo" / "deeper", "sp list" + api(npacd));
  INFO(listed.output);
  CHECK(listed.exit_code == 0);
  CHECK_THAT(listed.output, Catch::Contains("0001"));
  Reply audit = npacd.call(http::verb::get, "/v1/audit-log?limit=1");
  CHECK(audit.body["entries"][0]["actor"] == "npacd-initial");
}

TEST_CASE("A restart keeps the token file and the token in it") {
  NpacdProcess npacd;
  const std::string before = slurp(npacd.tokenFile());
  REQUIRE(npacd.stop() == 0);
  npacd.start();
  CHECK(slurp(npacd.tokenFile()) == before);
  CHECK(npacd.call(http::verb::get, "/v1/providers").status == 200);
  Reply tokens = npacd.call(http::verb::get, "/v1/tokens");
  REQUIRE(tokens.status == 200);
  CHECK(tokens.body["tokens"].size() == 1);
}

TEST_CASE("A revoked initial token is not replaced at restart and npacd says why") {
  NpacdProcess npacd;
  Reply other = npacd.call(http::verb::post, "/v1/tokens", Json{{"name", "ops-2"}, {"role", "operator"}});
  REQUIRE(other.status == 201);
  const std::string ops2 = other.body["token"].get<std::string>();
  REQUIRE(npacd.call(http::verb::post, "/v1/tokens/npacd-initial/revoke").status == 200);
  const std::string before = slurp(npacd.tokenFile());
  REQUIRE(npacd.stop() == 0);
  npacd.start();
  CHECK(slurp(npacd.tokenFile()) == before);
  CHECK_THAT(npacd.log(), Catch::Contains("which is revoked"));
  CHECK(npacd.call(http::verb::get, "/v1/providers").status == 401);
  Reply tokens = npacd.callWith("Bearer " + ops2, http::verb::get, "/v1/tokens");
  REQUIRE(tokens.status == 200);
  CHECK(tokens.body["tokens"].size() == 2);
}

TEST_CASE("npacctl token create list and revoke manage tokens end to end") {
  NpacdProcess npacd;
  const std::string auth = api(npacd) + " --token-file " + npacd.tokenFile().string();
  ProgramRun created = npacctlIn(npacd.dir(), "token create watcher --role reader" + auth);
  INFO(created.output);
  REQUIRE(created.exit_code == 0);
  CHECK_THAT(created.output, Catch::Contains("created token watcher (role reader)"));
  const std::string secret = secretIn(created.output);

  ProgramRun reads = npacctlIn(npacd.dir(), "sp list" + api(npacd) + " --token " + secret);
  INFO(reads.output);
  CHECK(reads.exit_code == 0);
  ProgramRun writes = npacctlIn(npacd.dir(), "sp add 0001 --name A --type soa" + api(npacd) + " --token " + secret);
  INFO(writes.output);
  CHECK(writes.exit_code == 1);
  CHECK_THAT(writes.output, Catch::Contains("forbidden") && Catch::Contains("needs the operator role"));

  ProgramRun listed = npacctlIn(npacd.dir(), "token list" + auth);
  INFO(listed.output);
  REQUIRE(listed.exit_code == 0);
  CHECK_THAT(listed.output, Catch::Contains("NAME") && Catch::Contains("watcher") && Catch::Contains("reader") &&
                                Catch::Contains("npacd-initial") && Catch::Contains("operator"));
  CHECK(listed.output.find(secret) == std::string::npos);

  ProgramRun revoked = npacctlIn(npacd.dir(), "token revoke watcher" + auth);
  INFO(revoked.output);
  CHECK(revoked.exit_code == 0);
  ProgramRun refused = npacctlIn(npacd.dir(), "sp list" + api(npacd) + " --token " + secret);
  INFO(refused.output);
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.output, Catch::Contains("unauthenticated") && Catch::Contains("was revoked"));
}

TEST_CASE("npacctl with no token anywhere names every path it tried") {
  NpacdProcess npacd;
  const fs::path lonely = npacd.dir() / "elsewhere";
  fs::create_directories(lonely);
  // Hide npacd's own token file from the parent walk.
  fs::rename(npacd.tokenFile(), npacd.dir() / "hidden.token");
  ProgramRun r = npacctlIn(lonely, "sp list" + api(npacd));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("no admin API token") &&
                           Catch::Contains((lonely / "npacd.db.token").string()) &&
                           Catch::Contains((lonely / "var" / "npacd.db.token").string()) &&
                           Catch::Contains("/var/lib/npacd/npacd.db.token"));
}

TEST_CASE("npacctl names a token file given by flag that does not exist") {
  NpacdProcess npacd;
  ProgramRun r = npacctlIn(npacd.dir(), "sp list" + api(npacd) + " --token-file /nonexistent/npacd.db.token");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("/nonexistent/npacd.db.token (--token-file) no such file"));
}

TEST_CASE("npacctl takes its token from NPACCTL_TOKEN_FILE") {
  NpacdProcess npacd;
  const fs::path elsewhere = npacd.dir() / "elsewhere";
  fs::create_directories(elsewhere);
  fs::copy_file(npacd.tokenFile(), elsewhere / "my.token");
  fs::rename(npacd.tokenFile(), npacd.dir() / "hidden.token");
  const std::string cmd = "cd '" + elsewhere.string() + "' && env -u NPACCTL_TOKEN NPACCTL_TOKEN_FILE=my.token " +
                          binDir() + "/npacctl sp list" + api(npacd) + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[1024];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  INFO(out);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("npacd --token-file writes the first operator token there instead of beside the SQLite file") {
  const fs::path elsewhere = fs::temp_directory_path() / ("npacd-token-elsewhere-" + std::to_string(getpid()));
  fs::remove_all(elsewhere);
  fs::create_directories(elsewhere);
  const fs::path token_file = elsewhere / "operator.token";
  {
    NpacdProcess npacd(NpacdProcess::Options{{}, {"--token-file", token_file.string()}});
    REQUIRE(fs::exists(token_file));
    CHECK(modeOf(token_file) == 0600);
    CHECK_FALSE(fs::exists(npacd.db().string() + ".token"));
    CHECK_THAT(npacd.log(), Catch::Contains(token_file.string()));
    // The token in it is the operator's: npacctl given that file is admitted.
    ProgramRun listed = npacctlIn(npacd.dir(), "sp list" + api(npacd) + " --token-file " + token_file.string());
    INFO(listed.output);
    CHECK(listed.exit_code == 0);
    CHECK(npacd.stop() == 0);
  }
  fs::remove_all(elsewhere);
}
