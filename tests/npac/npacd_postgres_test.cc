// npacd on PostgreSQL (--db postgresql://…): the real binary on a fresh database of the
// suite's own PostgreSQL cluster (tests/pg/cluster.sh; these cases are tagged [postgres]
// and run as npac-postgres/… with NPAC_TEST_PG set), real loopback TCP, providers played
// by npac-soa-sim.
#include "npacd_fixture.h"

#include <set>

#include "tests/support/postgres_test_database.h"

using namespace npacd_test;

namespace {

struct Exited {
  int code = -1;
  std::string output;
};

// Runs npacd with `args`, expecting it to exit by itself within `limit`.
Exited runNpacd(const std::vector<std::string>& args, std::chrono::milliseconds limit) {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("npacd-postgres-test-" + std::to_string(getpid()) + "-" + std::to_string(++counter));
  fs::create_directories(dir);
  std::vector<std::string> argv{binDir() + "/npacd", "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0",
                                "--token-file", (dir / "npacd.token").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = spawn(argv, dir / "npacd.log");
  Exited out;
  out.code = waitFor(pid, limit);
  out.output = slurp(dir / "npacd.log");
  fs::remove_all(dir);
  return out;
}

void waitAcknowledged(NpacdProcess& npacd, const std::vector<std::int64_t>& ids) {
  for (std::int64_t id : ids) {
    std::string state;
    for (int i = 0; i < 500 && (state = npacd.messageState(id)) != "acknowledged"; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    CHECK(state == "acknowledged");
  }
}

}  // namespace

TEST_CASE("npacd on PostgreSQL delivers submitted messages once each and marks them acknowledged", "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  NpacdProcess npacd(NpacdProcess::Options{database.url(), {}});
  auto key = npacd.provision("0001", /*srr=*/true);  // SRR: both associations carry PDUs
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--expect", "200",
                                     "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  std::vector<std::int64_t> ids = npacd.submit("0001", "p", 200);
  REQUIRE(sim->wait() == 0);
  CHECK(sim->result["totals"]["received"] == 200);
  CHECK(sim->result["totals"]["answered"] == 200);
  for (const Json& a : sim->result["associations"]) CHECK(a["received"] == 100);  // round robin
  waitAcknowledged(npacd, ids);
  CHECK(npacd.log().find("database postgresql://") != std::string::npos);
  CHECK(npacd.stop() == 0);
}

TEST_CASE("npacd restarted on its PostgreSQL database keeps its providers and delivers what was queued", "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  NpacdProcess npacd(NpacdProcess::Options{database.url(), {}});
  auto key = npacd.provision("0001");
  std::vector<std::int64_t> ids = npacd.submit("0001", "q", 20);
  npacd.stopHard();  // kill -9 with everything still queued
  npacd.start();
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "20", "--duration", "15s"});
  REQUIRE(sim->wait() == 0);
  CHECK(sim->result["totals"]["received"] == 20);
  waitAcknowledged(npacd, ids);
  CHECK(npacd.stop() == 0);
}

TEST_CASE("A second npacd with the same node name on a PostgreSQL database is refused naming the first", "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  NpacdProcess first(NpacdProcess::Options{database.url(), {"--node", "site-a"}});
  Exited second = runNpacd({"--db", database.url(), "--node", "site-a"}, 10s);
  INFO(second.output);
  CHECK(second.code == 2);
  CHECK(second.output.find("another npacd is using this PostgreSQL database as node 'site-a' (npacd node site-a, pid") !=
        std::string::npos);
  CHECK(second.output.find("changed nothing in it") != std::string::npos);
  CHECK(second.output.find("give this one its own --node name") != std::string::npos);
  CHECK(first.stop() == 0);
}

TEST_CASE("npacd refuses a node name that could not be quoted to a provider") {
  // Refused while the command line is read, before any database is opened.
  Exited refused = runNpacd({"--db", "postgresql://127.0.0.1:1/nowhere", "--node", "site a"}, 10s);
  INFO(refused.output);
  CHECK(refused.code != 0);
  CHECK(refused.output.find("a node name holds only A-Z a-z 0-9 . _ : - (not ' ')") != std::string::npos);
}

TEST_CASE("npacd refuses to start when its PostgreSQL server cannot be reached, hiding the password", "[postgres]") {
  Exited npacd = runNpacd({"--db", "postgresql://npacd:hunter2@127.0.0.1:1/npac"}, 20s);
  INFO(npacd.output);
  CHECK(npacd.code == 2);
  CHECK(npacd.output.find("database unavailable") != std::string::npos);
  CHECK(npacd.output.find("postgresql://npacd:***@127.0.0.1:1/npac") != std::string::npos);
  CHECK(npacd.output.find("hunter2") == std::string::npos);
}

namespace {

// A PostgreSQL cluster of the test's own (tests/pg/cluster.sh), for a test that restarts
// its server: the suite's shared cluster serves other tests meanwhile.
class PrivateCluster {
 public:
  PrivateCluster()
      : dir_(fs::temp_directory_path() / ("npac-pg-private-" + std::to_string(getpid()))) {
    REQUIRE(run("start") == 0);
    std::ifstream in(dir_ / "url");
    std::getline(in, url_);
    REQUIRE_FALSE(url_.empty());
  }
  ~PrivateCluster() { run("stop"); }
  const std::string& url() const { return url_; }
  int restart() { return run("restart"); }
  int halt() { return run("halt"); }
  int resume() { return run("resume"); }

 private:
  int run(const char* action) {
    const std::string command = std::string(NPAC_SOURCE_DIR "/tests/pg/cluster.sh ") + action + " " +
                                dir_.string() + " >/dev/null 2>&1";
    return std::system(command.c_str());
  }
  fs::path dir_;
  std::string url_;
};

}  // namespace

TEST_CASE("npacd on PostgreSQL rides out a server restart under load and loses no accepted message", "[postgres]") {
  PrivateCluster cluster;
  npac::testing::PostgresTestDatabase database(cluster.url());
  NpacdProcess npacd(NpacdProcess::Options{database.url(), {}});
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--duration", "40s"});
  REQUIRE(npacd.waitForAssociations(1));

  // Submissions of 20 messages each, before, during and after the restart. A refused
  // one must say why with 503; an accepted one must reach the provider and be acknowledged.
  // Every refusal, whether the token check or the submission itself met the dead server,
  // is the same 503 database_unavailable.
  std::vector<std::int64_t> accepted;
  int refused = 0;
  std::set<std::string> refusal_codes;
  std::string refusal, other;
  auto submitBatch = [&](int round) {
    Json batch = Json::array();
    for (int i = 0; i < 20; ++i) batch.push_back(NpacdProcess::notification("0001", label("r", round * 100 + i)));
    Reply r = npacd.call(http::verb::post, "/v1/messages", Json{{"messages", batch}});
    if (r.status == 201) {
      for (auto& id : r.body["ids"]) accepted.push_back(id.get<std::int64_t>());
    } else if (r.status == 503) {
      ++refused;
      refusal_codes.insert(r.body["error"]["code"].get<std::string>());
      refusal = r.body.dump();
    } else if (other.empty()) {
      other = std::to_string(r.status) + " " + r.body.dump();
    }
  };
  int round = 0;
  for (; round < 5; ++round) submitBatch(round);
  std::thread restarter([&] { CHECK(cluster.restart() == 0); });
  for (const auto until = std::chrono::steady_clock::now() + 3s; std::chrono::steady_clock::now() < until; ++round) {
    submitBatch(round);
    std::this_thread::sleep_for(20ms);
  }
  restarter.join();
  // Bounded: the server is back; submissions are accepted again.
  std::size_t before = accepted.size();
  for (int tries = 0; tries < 100 && accepted.size() == before; ++tries, ++round) {
    submitBatch(round);
    std::this_thread::sleep_for(50ms);
  }
  INFO("refused " << refused << ", first other answer " << other << ", last refusal " << refusal);
  CHECK(accepted.size() > before);
  if (!other.empty()) WARN("npacd's log:\n" << npacd.log());  // what the database failures were
  CHECK(other.empty());
  // While the server was down the API said so: 503 database_unavailable (a fast restart
  // takes about a second; submissions went every 20 ms).
  CHECK(refused > 0);
  CHECK(refusal_codes == std::set<std::string>{"database_unavailable"});
  for (std::int64_t id : accepted) {
    std::string state;
    for (int i = 0; i < 1000 && (state = npacd.messageState(id)) != "acknowledged"; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    INFO("message " << id);
    CHECK(state == "acknowledged");
  }
  CHECK(npacd.stop() == 0);
}

TEST_CASE("With its PostgreSQL server down, npacd answers a request 503 database_unavailable from the token check", "[postgres]") {
  PrivateCluster cluster;
  npac::testing::PostgresTestDatabase database(cluster.url());
  NpacdProcess npacd(NpacdProcess::Options{database.url(), {}});
  REQUIRE(cluster.halt() == 0);
  // The bearer token cannot be checked: not the caller's fault, so not 401, and the same
  // answer a route gives when its own statement meets the dead server.
  Reply r = npacd.call(http::verb::get, "/v1/providers");
  INFO(r.status << " " << r.body.dump());
  CHECK(r.status == 503);
  CHECK(r.body["error"]["code"] == "database_unavailable");
  CHECK(r.body["error"]["message"].get<std::string>().find("cannot check the token") != std::string::npos);
  REQUIRE(cluster.resume() == 0);
  // Reconnected on the next request, without a restart of npacd.
  Reply back = npacd.call(http::verb::get, "/v1/providers");
  CHECK(back.status == 200);
  CHECK(npacd.stop() == 0);
}
