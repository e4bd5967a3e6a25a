// npac-soa-sim with several --npac addresses (the NPAC's two sites): it binds to the
// next address when nothing listens, when a bind is refused and when its association is
// lost (npacd killed with SIGKILL), answers the new site's messages, gives up after
// --rebind-attempts with exit 10, and refuses malformed addresses. Real npacd processes
// on their own SQLite files, real TCP on 127.0.0.1 (npacd) and 127.0.0.2/127.0.0.3 (the
// sim's side and the addresses nothing listens on).
#include "tests/npac/npacd/npacd_fixture.h"

#include <map>

using namespace npacd_test;

namespace {

// A loopback port nothing listens on: bound once, closed, not reused by the kernel for a
// while (ephemeral ports cycle through the whole range).
std::string deadAddress(const std::string& host) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address(host), 0));
  const std::uint16_t port = a.local_endpoint().port();
  a.close();
  return host + ":" + std::to_string(port);
}

std::string address(const NpacdProcess& npacd) { return "127.0.0.1:" + std::to_string(npacd.port()); }

// Provisions on `npacd` the provider `spid` with the public half of `key` (list 1, key 1):
// the second site knows the same provider and key as the first.
void provisionSameKey(NpacdProcess& npacd, const std::string& spid, const fs::path& key) {
  REQUIRE(npacd.call(http::verb::post, "/v1/providers",
                     Json{{"spid", spid}, {"name", "Provider " + spid}, {"system_type", "soa"}})
              .status == 201);
  REQUIRE(npacd.call(http::verb::post, "/v1/providers/" + spid + "/keys",
                     Json{{"key_list_id", 1}, {"key_id", 1}, {"algorithm", "ed25519"},
                          {"public_key_pem", slurp(key.string() + ".pub")}})
              .status == 201);
}

// A sim run in the background with its own argv (the fixture's sim() puts its one
// --npac first; these runs choose the order of theirs).
struct Run {
  pid_t pid = -1;
  fs::path report, log;
  int exit_code = -2;
  Json result;
  std::string stderr_text;
  int wait(std::chrono::milliseconds limit = 40s) {
    exit_code = waitFor(pid, limit);
    pid = -1;
    result = Json::parse(slurp(report), nullptr, false);
    stderr_text = slurp(log);
    return exit_code;
  }
  ~Run() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

std::unique_ptr<Run> startSim(const fs::path& dir, const std::vector<std::string>& npac, const fs::path& key,
                              std::vector<std::string> args) {
  static int runs = 0;
  auto run = std::make_unique<Run>();
  run->report = dir / label("rebind-", runs).append(".json");
  run->log = dir / label("rebind-", runs).append(".log");
  ++runs;
  std::vector<std::string> argv{binDir() + "/npac-soa-sim", "--spid", "0001", "--key", key.string(),
                                "--report", run->report.string(), "--log-level", "warn", "--from", "127.0.0.2",
                                "--functions", "soa-management,notifications"};
  // The sim takes each single-valued flag once: a test's own --rebind-delay replaces this.
  if (std::find(args.begin(), args.end(), "--rebind-delay") == args.end()) {
    argv.insert(argv.end(), {"--rebind-delay", "50ms"});
  }
  for (const std::string& a : npac) argv.insert(argv.end(), {"--npac", a});
  argv.insert(argv.end(), args.begin(), args.end());
  run->pid = spawn(argv, run->log);
  return run;
}

bool waitAcknowledged(const NpacdProcess& npacd, const std::vector<std::int64_t>& ids, std::chrono::seconds limit) {
  return eventually(
      [&] {
        bool all = true;
        for (std::int64_t id : ids) all = all && npacd.messageState(id) == "acknowledged";
        return all;
      },
      limit);
}

// Received records, as (npac address, answered) pairs, first copies only.
std::vector<std::string> receivedAt(const Json& report, const std::string& npac) {
  std::vector<std::string> tags;
  for (const Json& r : report["received"]) {
    if (r["npac"] == npac && r["answered"].get<bool>() && !r["retransmission"].get<bool>()) {
      tags.push_back(r["info"].get<std::string>());
    }
  }
  return tags;
}

}  // namespace

TEST_CASE("the sim binds to the second --npac address when nothing listens on the first") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  const std::string dead = deadAddress("127.0.0.3");
  auto sim = startSim(npacd.dir(), {dead, address(npacd)}, key,
                      {"--npac-key", npacd.exportNpacKeys().string(), "--sequence", "1000", "--expect", "2",
                       "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.submit("0001", "a", 2);
  REQUIRE(sim->wait() == 0);
  INFO(sim->stderr_text);
  const Json& r = sim->result;
  CHECK(r["npac_addresses"] == Json::array({dead, address(npacd)}));
  CHECK(r["bound_to"] == Json::array({address(npacd)}));
  const Json& binds = r["associations"][0]["binds"];
  REQUIRE(binds.size() == 2);
  CHECK(binds[0]["npac"] == dead);
  CHECK(binds[0]["outcome"] == "connect-failed");
  CHECK(binds[1]["npac"] == address(npacd));
  CHECK(binds[1]["outcome"] == "accepted");
  CHECK(receivedAt(r, address(npacd)).size() == 2);
  CHECK(sim->stderr_text.find("bind to " + dead + " failed (cannot connect from 127.0.0.2 to " + dead) !=
        std::string::npos);
  CHECK(sim->stderr_text.find("re-binding to " + address(npacd) + ", attempt 2 of 10") != std::string::npos);
}

TEST_CASE("the sim binds to the next --npac address when the first refuses the bind") {
  NpacdProcess refusing;  // does not know the provider: AARE rejected (unknown SPID)
  NpacdProcess owner;
  const fs::path key = owner.provision("0001");
  auto sim = startSim(owner.dir(), {address(refusing), address(owner)}, key,
                      {"--npac-key", refusing.exportNpacKeys("refusing.pub.pem").string(), "--npac-key",
                       owner.exportNpacKeys().string(), "--sequence", "1000", "--expect", "1", "--duration", "30s"});
  REQUIRE(owner.waitForAssociations(1));
  owner.submit("0001", "o", 1);
  REQUIRE(sim->wait() == 0);
  INFO(sim->stderr_text);
  const Json& binds = sim->result["associations"][0]["binds"];
  REQUIRE(binds.size() == 2);
  CHECK(binds[0]["outcome"] == "rejected");
  CHECK(binds[0]["detail"].get<std::string>().find("bind rejected by the NPAC") != std::string::npos);
  CHECK(binds[1]["npac"] == address(owner));
  CHECK(sim->result["bound_to"] == Json::array({address(owner)}));
  CHECK(sim->stderr_text.find("bind to " + address(refusing) + " failed (bind rejected by the NPAC") !=
        std::string::npos);
}

TEST_CASE("the sim re-binds to the second npacd when the first is killed and answers the second's messages") {
  NpacdProcess a;
  NpacdProcess b;
  const fs::path key = a.provision("0001");
  provisionSameKey(b, "0001", key);
  auto sim = startSim(a.dir(), {address(a), address(b)}, key,
                      {"--npac-key", a.exportNpacKeys().string(), "--npac-key",
                       b.exportNpacKeys("b-npac.pub.pem").string(), "--sequence", "1000", "--expect", "4",
                       "--duration", "40s"});
  REQUIRE(a.waitForAssociations(1));
  REQUIRE(waitAcknowledged(a, a.submit("0001", "a", 2), 20s));
  a.stopHard();  // SIGKILL: the sim sees its TCP connection end, no release, no ABRT
  REQUIRE(b.waitForAssociations(1, 20s));
  const std::vector<std::int64_t> at_b = b.submit("0001", "b", 2);
  REQUIRE(sim->wait() == 0);
  INFO(sim->stderr_text);
  CHECK(waitAcknowledged(b, at_b, 10s));
  const Json& r = sim->result;
  CHECK(r["bound_to"] == Json::array({address(a), address(b)}));
  CHECK(receivedAt(r, address(a)) ==
        std::vector<std::string>{NpacdProcess::tagHex("a0"), NpacdProcess::tagHex("a1")});
  CHECK(receivedAt(r, address(b)) ==
        std::vector<std::string>{NpacdProcess::tagHex("b0"), NpacdProcess::tagHex("b1")});
  const Json& assoc = r["associations"][0];
  CHECK(assoc["rebinds"] == 1);
  CHECK(assoc["npac"] == address(b));
  REQUIRE(assoc["binds"].size() == 2);
  CHECK(assoc["binds"][1]["outcome"] == "accepted");
  CHECK(sim->stderr_text.find("association 1 to " + address(a) + " lost (connection-lost") != std::string::npos);
  CHECK(sim->stderr_text.find("re-binding to " + address(b) + ", attempt 2 of 10") != std::string::npos);
}

TEST_CASE("the sim re-binds after the NPAC aborts its association and answers what the NPAC sends again") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  // One address and --rebind-attempts: re-binding to the same NPAC. The answers wait 2 s,
  // so the abort comes while both messages are unanswered.
  auto sim = startSim(npacd.dir(), {address(npacd)}, key,
                      {"--npac-key", npacd.exportNpacKeys().string(), "--sequence", "1000", "--rebind-attempts",
                       "5", "--delay", "2s", "--expect", "4", "--duration", "40s"});
  REQUIRE(npacd.waitForAssociations(1));
  const std::vector<std::int64_t> ids = npacd.submit("0001", "r", 2);
  Json listed;
  auto sent = [&] {
    listed = npacd.call(http::verb::get, "/v1/associations").body["associations"];
    return listed.size() == 1 && listed[0]["sent"] == 2;
  };
  eventually(sent, 10s, 10ms);
  REQUIRE(sent());
  REQUIRE(npacd.call(http::verb::post, "/v1/associations/" + std::to_string(listed[0]["id"].get<std::int64_t>()) +
                         "/abort",
                     Json{{"actor", "npacd-test"}})
              .status == 200);
  REQUIRE(sim->wait() == 0);
  INFO(sim->stderr_text);
  CHECK(waitAcknowledged(npacd, ids, 10s));
  const Json& r = sim->result;
  const Json& assoc = r["associations"][0];
  CHECK(assoc["rebinds"] == 1);
  REQUIRE(assoc["binds"].size() == 2);
  CHECK(assoc["binds"][1]["outcome"] == "accepted");
  // Each message first unanswered on the aborted association, then sent again by the
  // NPAC and answered on the new one.
  std::map<std::string, std::vector<bool>> answered;
  for (const Json& m : r["received"]) answered[m["info"].get<std::string>()].push_back(m["answered"].get<bool>());
  for (const std::string tag : {"r0", "r1"}) {
    const std::vector<bool>& copies = answered[NpacdProcess::tagHex(tag)];
    INFO(tag);
    REQUIRE(copies.size() >= 2);
    CHECK_FALSE(copies.front());
    CHECK(copies.back());
  }
  CHECK(sim->stderr_text.find("association 1 to " + address(npacd) + " lost (aborted-by-peer") != std::string::npos);
  CHECK(sim->stderr_text.find("re-binding to " + address(npacd) + ", attempt 2 of 5") != std::string::npos);
}

TEST_CASE("the sim exits 10 naming the addresses when every re-bind attempt fails") {
  NpacdProcess npacd;  // only for the provider key and a directory: nothing binds to it
  const fs::path key = npacd.provision("0001");
  const std::string first = deadAddress("127.0.0.3"), second = deadAddress("127.0.0.4");
  auto sim = startSim(npacd.dir(), {first, second}, key,
                      {"--no-npac-verify", "--rebind-attempts", "3", "--rebind-delay", "10ms", "--duration", "30s"});
  REQUIRE(sim->wait() == 10);
  INFO(sim->stderr_text);
  CHECK(sim->stderr_text.find("re-bind attempts exhausted (3 of 3 over " + first + ", " + second +
                              "); the last, to " + first + ": cannot connect") != std::string::npos);
  const Json& r = sim->result;
  CHECK(r["stop_reason"] == "rebind-attempts-exhausted");
  CHECK(r["exit_code"] == 10);
  CHECK(r["bound_to"].empty());
  const Json& binds = r["associations"][0]["binds"];
  REQUIRE(binds.size() == 3);
  CHECK(binds[0]["npac"] == first);
  CHECK(binds[1]["npac"] == second);
  CHECK(binds[2]["npac"] == first);
  for (const Json& b : binds) CHECK(b["outcome"] == "connect-failed");
}

TEST_CASE("malformed --npac values are refused with exit code 2 and a message naming the fault") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"127.0.0.1", "'127.0.0.1' has no port"},
      {"127.0.0.1:0", "the port must be a number 1-65535, not '0'"},
      {"127.0.0.1:65536", "the port must be a number 1-65535, not '65536'"},
      {":10102", "':10102' has no host"},
      {"127.0.0.1:ten", "the port must be a number 1-65535, not 'ten'"},
      {"npac site:10102", "'npac site' is not a host name or IPv4 address"},
      {"[::1]:10102", "'[::1]' is not a host name or IPv4 address"},
  };
  const fs::path dir = fs::temp_directory_path() / label("soa-sim-rebind-", getpid());
  fs::create_directories(dir);
  for (const auto& [value, message] : cases) {
    const fs::path log = dir / "malformed.log";
    fs::remove(log);
    // A good first address: the bad second one must still be refused.
    pid_t pid = spawn({binDir() + "/npac-soa-sim", "--npac", "127.0.0.1:10102", "--npac", value, "--spid", "0001",
                       "--key", "/nonexistent.pem", "--no-npac-verify"},
                      log);
    INFO(value);
    CHECK(waitFor(pid, 10s) == 2);
    const std::string text = slurp(log);
    INFO(text);
    CHECK(text.find("npac-soa-sim: --npac: ") != std::string::npos);
    CHECK(text.find(message) != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("a --rebind-attempts that is not a positive count or a --rebind-delay that is not a duration is refused") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--rebind-attempts", "0"}, "--rebind-attempts: '0' is not a count 1-1000000"},
      {{"--rebind-attempts", "-1"}, "--rebind-attempts: '-1' is not a count 1-1000000"},
      {{"--rebind-attempts", "many"}, "--rebind-attempts: 'many' is not a count 1-1000000"},
      {{"--rebind-delay", "soon"}, "--rebind-delay: 'soon' is not a duration"},
  };
  const fs::path dir = fs::temp_directory_path() / label("soa-sim-rebind-opts-", getpid());
  fs::create_directories(dir);
  for (const auto& [args, message] : cases) {
    const fs::path log = dir / "options.log";
    fs::remove(log);
    std::vector<std::string> argv{binDir() + "/npac-soa-sim", "--spid", "0001", "--key", "/nonexistent.pem",
                                  "--no-npac-verify"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_t pid = spawn(argv, log);
    INFO(args[0] << " " << args[1]);
    CHECK(waitFor(pid, 10s) == 2);
    const std::string text = slurp(log);
    INFO(text);
    CHECK(text.find(message) != std::string::npos);
  }
  fs::remove_all(dir);
}
