// Backup and restore of npacd on PostgreSQL (docs/OPERATIONS.md "Backup, restore and
// upgrade"): the database is the server's to back up, with PostgreSQL's own tools. A
// pg_dump of an npacd database restored with pg_restore into a fresh database is one npacd
// starts on with its providers, keys, tunables and queue; npacd's own backup route refuses,
// naming those tools. The real npacd binary, the suite's PostgreSQL cluster ([postgres],
// run as npac-postgres/…), PostgreSQL 15's pg_dump and pg_restore.
#include "tests/npac/npacd/npacd_fixture.h"

#include <sys/wait.h>

#include "tests/support/postgres_test_database.h"

using namespace npacd_test;

namespace {

constexpr const char* kPostgresBin = "/usr/lib/postgresql/15/bin";

// `command` through the shell; its exit code and output.
std::pair<int, std::string> shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) output.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

}  // namespace

TEST_CASE("A pg_dump of npacd's database restored into a new database keeps its providers, keys and queue",
          "[postgres]") {
  npac::testing::PostgresTestDatabase source;
  std::vector<std::int64_t> ids;
  std::string token;
  Json npac_keys;
  fs::path dump;
  const fs::path work = fs::temp_directory_path() / label("npacd-pg-dump-", getpid());
  fs::remove_all(work);
  fs::create_directories(work);
  {
    NpacdProcess npacd(NpacdProcess::Options{source.url(), {}});
    token = npacd.token();
    npacd.provision("0001", /*srr=*/true);
    REQUIRE(npacd.call(http::verb::put, "/v1/tunables/congestion_window", Json{{"value", "25"}}).status == 200);
    ids = npacd.submit("0001", "q", 300);  // no provider bound: they stay queued
    npac_keys = npacd.call(http::verb::get, "/v1/npac-keys").body["npac_keys"];
    // The dump is taken while npacd runs: pg_dump reads one consistent snapshot.
    dump = work / "npacd.dump";
    auto [dumped, dump_output] =
        shell(std::string(kPostgresBin) + "/pg_dump --format=custom --file=" + dump.string() + " " + quoted(source.url()));
    INFO(dump_output);
    REQUIRE(dumped == 0);
    CHECK(npacd.stop() == 0);
  }

  npac::testing::PostgresTestDatabase target;  // fresh and empty
  auto [restored, restore_output] = shell(std::string(kPostgresBin) + "/pg_restore --no-owner --exit-on-error --dbname=" +
                                          quoted(target.url()) + " " + dump.string());
  INFO(restore_output);
  REQUIRE(restored == 0);

  NpacdProcess npacd(NpacdProcess::Options{target.url(), {}});
  auto call = [&](const std::string& target_path) {
    return npacd.callWith("Bearer " + token, http::verb::get, target_path);
  };
  // The operator token of the first database works: its digest came with the dump.
  Reply provider = call("/v1/providers/0001");
  INFO(provider.body.dump());
  REQUIRE(provider.status == 200);
  CHECK(provider.body["keys"].size() == 1);
  CHECK(call("/v1/tunables/srr?spid=0001").body["value"] == "on");
  CHECK(call("/v1/tunables/congestion_window").body["value"] == "25");
  CHECK(call("/v1/npac-keys").body["npac_keys"] == npac_keys);
  std::vector<std::int64_t> missing;
  for (std::int64_t id : ids) {
    Reply m = call("/v1/messages/" + std::to_string(id));
    if (m.status != 200 || m.body["state"] != "queued") missing.push_back(id);
  }
  CHECK(missing.empty());
  // New submissions get new ids after the restored ones (the sequences came with the dump).
  Reply more = npacd.callWith("Bearer " + token, http::verb::post, "/v1/messages",
                              Json{{"messages", Json::array({NpacdProcess::notification("0001", "after")})}});
  REQUIRE(more.status == 201);
  CHECK(more.body["ids"][0].get<std::int64_t>() > ids.back());
  CHECK(npacd.stop() == 0);
  fs::remove_all(work);
}

TEST_CASE("npacd on PostgreSQL refuses POST /v1/backup naming pg_dump, and npacctl backup says so", "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  NpacdProcess npacd(NpacdProcess::Options{database.url(), {}});
  Reply refused = npacd.call(http::verb::post, "/v1/backup");
  INFO(refused.body.dump());
  CHECK(refused.status == 501);
  CHECK(refused.body["error"]["code"] == "backup_not_supported");
  CHECK_THAT(refused.body["error"]["message"].get<std::string>(), Catch::Contains("pg_dump"));
  const fs::path file = npacd.dir() / "copy.db";
  auto [code, output] = shell(binDir() + "/npacctl backup " + file.string() + " --api 127.0.0.1:" +
                              std::to_string(npacd.apiPort()) + " --token-file " + npacd.tokenFile().string());
  INFO(output);
  CHECK(code == 1);
  CHECK_THAT(output, Catch::Contains("backup_not_supported") && Catch::Contains("pg_dump"));
  CHECK_FALSE(fs::exists(file));
  for (const auto& entry : fs::directory_iterator(npacd.dir())) {
    CHECK(entry.path().filename().string().rfind("copy.db", 0) == std::string::npos);
  }
}
