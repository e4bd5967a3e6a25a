// npacd --threads N end to end: providers sharded over core threads by SPID
// (npac/npacd/core/core_shards.h, docs/OPERATIONS.md "Threads"). The real binary, real
// SQLite, loopback TCP and npac-soa-sim: every connection is accepted on thread 0 and a
// provider of another thread is handed over there before its bind is admitted.
#include "tests/npac/npacd/npacd_fixture.h"

#include <set>

#include "npac/npacd/core/core_shards.h"

using namespace npacd_test;

namespace {

// Polls the inbound requests until `count` arrived (bounded); their ids and SPIDs.
std::vector<std::pair<std::uint64_t, std::string>> pollRequests(NpacdProcess& npacd, std::size_t count) {
  std::vector<std::pair<std::uint64_t, std::string>> requests;
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  while (requests.size() < count && std::chrono::steady_clock::now() < deadline) {
    Reply polled = npacd.call(http::verb::get, "/v1/inbound?wait=1s&max=10");
    REQUIRE(polled.status == 200);
    for (const Json& r : polled.body["requests"]) {
      requests.emplace_back(r["id"].get<std::uint64_t>(), r["spid"].get<std::string>());
    }
  }
  return requests;
}

}  // namespace

TEST_CASE("The core thread of a SPID is its FNV-1a hash modulo the threads") {
  // FNV-1a 32 of "a" is 0xe40c292c (the FNV reference test vectors).
  CHECK(npac::npacd::coreThreadOf("a", 7) == 0xe40c292cu % 7);
  CHECK(npac::npacd::coreThreadOf("0001", 1) == 0);
  for (const char* spid : {"0001", "0002", "0003", "0004"}) {
    CHECK(npac::npacd::coreThreadOf(spid, 2) < 2);
    CHECK(npac::npacd::coreThreadOf(spid, 2) == npac::npacd::coreThreadOf(spid, 2));
  }
}

TEST_CASE("With two core threads every provider on either thread gets each of its messages once and acknowledges it") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--threads", "2"}});
  const std::vector<std::string> spids{"0001", "0002", "0003", "0004"};
  std::set<std::size_t> threads;
  for (const std::string& spid : spids) threads.insert(npac::npacd::coreThreadOf(spid, 2));
  REQUIRE(threads == std::set<std::size_t>{0, 1});  // both threads have providers

  constexpr int kPerProvider = 40;
  std::vector<std::unique_ptr<SimRun>> sims;
  int n = 0;
  for (const std::string& spid : spids) {
    const fs::path key = npacd.provision(spid, /*srr=*/true);
    // Two associations each, from two addresses (two NSAPs) of the provider's own.
    const std::string a = "127.0.0." + std::to_string(10 + 2 * n), b = "127.0.0." + std::to_string(11 + 2 * n);
    sims.push_back(npacd.sim(spid, key, {"--from", a, "--from", b, "--expect", std::to_string(kPerProvider),
                                         "--duration", "20s"}));
    ++n;
  }
  if (!npacd.waitForAssociations(8)) {
    std::string logs;
    for (const auto& sim : sims) logs += slurp(sim->log) + "\n----\n";
    FAIL("not all 8 associations bound: " << npacd.call(http::verb::get, "/v1/associations").body.dump() << "\n"
                                           << logs << npacd.log());
  }
  Reply listed = npacd.call(http::verb::get, "/v1/associations");
  REQUIRE(listed.status == 200);
  REQUIRE(listed.body["associations"].size() == 8);
  std::set<std::int64_t> ids;
  for (const Json& a : listed.body["associations"]) {
    INFO(a.dump());
    CHECK(a["core_thread"] == npac::npacd::coreThreadOf(a["spid"].get<std::string>(), 2));
    ids.insert(a["id"].get<std::int64_t>());
  }
  CHECK(ids.size() == 8);  // association ids are unique across the threads

  std::vector<std::int64_t> messages;
  for (const std::string& spid : spids) {
    for (std::int64_t id : npacd.submit(spid, "m" + spid, kPerProvider)) messages.push_back(id);
  }
  REQUIRE(messages.size() == spids.size() * kPerProvider);
  for (std::size_t i = 0; i < sims.size(); ++i) {
    const int exit = sims[i]->wait();
    INFO(spids[i] << ": " << slurp(sims[i]->log) << npacd.log());
    REQUIRE(exit == 0);
    const Json& received = sims[i]->result["received"];
    REQUIRE(received.size() == kPerProvider);
    std::set<std::string> infos;
    for (const Json& r : received) {
      CHECK(r["retransmission"] == false);
      infos.insert(r["info"].get<std::string>());
    }
    CHECK(infos.size() == kPerProvider);  // each message once, none repeated
    // Both associations of the provider carried messages: the rotation held on its thread.
    for (const Json& assoc : sims[i]->result["associations"]) CHECK(assoc["received"].get<int>() > 0);
  }
  for (std::int64_t id : messages) CHECK(npacd.messageState(id) == "acknowledged");
}

TEST_CASE("With two core threads a request from a provider of thread 1 is polled and answered through the API") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--threads", "2"}});
  std::string spid;
  for (const char* candidate : {"0001", "0002", "0003", "0004", "0005"}) {
    if (npac::npacd::coreThreadOf(candidate, 2) == 1) {
      spid = candidate;
      break;
    }
  }
  REQUIRE(!spid.empty());
  const fs::path key = npacd.provision(spid);
  auto asking = npacd.sim(spid, key, {"--from", "127.0.0.2", "--send-requests", "2", "--duration", "15s"});
  auto requests = pollRequests(npacd, 2);
  REQUIRE(requests.size() == 2);
  for (const auto& [id, from] : requests) {
    CHECK(from == spid);
    Reply r = npacd.call(http::verb::post, "/v1/inbound/" + std::to_string(id) + "/response",
                         Json{{"outcome", "result"}});
    CHECK(r.status == 200);
  }
  const int exit = asking->wait();
  INFO(slurp(asking->log) << npacd.log());
  CHECK(exit == 0);  // both answers reached it, through thread 1's rotation
}

TEST_CASE("With two core threads SIGTERM releases the associations of both threads and npacd exits 0") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--threads", "2"}});
  std::vector<std::unique_ptr<SimRun>> sims;
  int n = 0;
  for (const char* spid : {"0001", "0002", "0003", "0004"}) {
    const fs::path key = npacd.provision(spid);
    sims.push_back(npacd.sim(spid, key, {"--from", "127.0.0." + std::to_string(20 + n), "--keep-running",
                                         "--duration", "20s"}));
    ++n;
  }
  REQUIRE(npacd.waitForAssociations(4));
  CHECK(npacd.stop() == 0);
  INFO(npacd.log());
  for (auto& sim : sims) {
    sim->wait(10s);
    INFO(slurp(sim->log));
    REQUIRE(sim->result.is_object());
    for (const Json& assoc : sim->result["associations"]) CHECK(assoc["end"]["reason"] == "released-by-peer");
  }
  CHECK(npacd.log().find("npacd stopped") != std::string::npos);
}

TEST_CASE("npacd refuses --threads 0 at start and names the range") {
  const fs::path dir = fs::temp_directory_path() / ("npacd-threads-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path log = dir / "npacd.log";
  pid_t pid = spawn({binDir() + "/npacd", "--db", (dir / "npacd.db").string(), "--listen", "127.0.0.1:0",
                     "--api", "127.0.0.1:0", "--threads", "0"},
                    log);
  CHECK(waitFor(pid, 10s) == 2);
  INFO(slurp(log));
  CHECK(slurp(log).find("--threads") != std::string::npos);
  CHECK(slurp(log).find("--threads: must be an integer from 1 to 64, got '0'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "npacd.db"));  // refused before touching anything
  fs::remove_all(dir);
}
