// Two npacd nodes on one PostgreSQL database (docs/OPERATIONS.md "Two sites") and the
// providers played by npac-soa-sim runs against them: the fixture of the two-site tests
// and of the throttle groups across nodes. Real npacd processes (--node a, --node b) on a
// fresh database of the suite's PostgreSQL cluster, real loopback TCP.
#pragma once

#include <csignal>
#include <functional>

#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/support/postgres_test_database.h"

namespace npacd_test {

inline std::string address(const NpacdProcess& npacd) { return "127.0.0.1:" + std::to_string(npacd.port()); }

// Two nodes on one database. The first start wrote the operator token to a's file; b's
// API knows the same tokens (they are in the database), so b's client uses a copy.
struct TwoSites {
  npac::testing::PostgresTestDatabase database;
  NpacdProcess a{NpacdProcess::Options{database.url(), {"--node", "a"}}};
  NpacdProcess b{NpacdProcess::Options{database.url(), {"--node", "b"}}};
  TwoSites() {
    fs::copy_file(a.tokenFile(), b.tokenFile(), fs::copy_options::overwrite_existing);
    // Short leases keep the takeover cases quick (the tunable's minimum is 1 s).
    REQUIRE(a.call(http::verb::put, "/v1/tunables/provider_lease_timeout", Json{{"value", "2s"}}).status == 200);
  }
};

struct Run {
  pid_t pid = -1;
  fs::path report, log;
  Json result;
  std::string stderr_text;
  int wait(std::chrono::milliseconds limit = 60s) {
    const int code = waitFor(pid, limit);
    pid = -1;
    result = Json::parse(slurp(report), nullptr, false);
    stderr_text = slurp(log);
    return code;
  }
  void signal(int sig) const {
    if (pid > 0) kill(pid, sig);
  }
  ~Run() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// npac-soa-sim for provider 0001 against `npac` (in that order), verifying the NPAC keys
// exported by `keys_from` (the nodes share them: one database).
inline std::unique_ptr<Run> startSim(const NpacdProcess& keys_from, const std::vector<std::string>& npac,
                                     const fs::path& key, const std::vector<std::string>& args,
                                     const std::string& spid = "0001") {
  static int runs = 0;
  auto run = std::make_unique<Run>();
  run->report = keys_from.dir() / label("two-sites-", runs).append(".json");
  run->log = keys_from.dir() / label("two-sites-", runs).append(".log");
  ++runs;
  std::vector<std::string> argv{binDir() + "/npac-soa-sim", "--spid", spid, "--key", key.string(),
                                "--report", run->report.string(), "--log-level", "warn", "--functions",
                                "soa-management,notifications", "--npac-key", keys_from.exportNpacKeys().string(),
                                "--sequence", std::to_string(1000 + 1000 * runs)};
  for (const std::string& a : npac) argv.insert(argv.end(), {"--npac", a});
  argv.insert(argv.end(), args.begin(), args.end());
  run->pid = spawn(argv, run->log);
  return run;
}

inline std::size_t acknowledgedCount(const NpacdProcess& npacd, const std::vector<std::int64_t>& ids) {
  std::size_t n = 0;
  for (std::int64_t id : ids) n += npacd.messageState(id) == "acknowledged" ? 1 : 0;
  return n;
}

}  // namespace npacd_test
