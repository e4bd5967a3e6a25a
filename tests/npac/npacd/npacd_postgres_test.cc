// npacd on PostgreSQL (--db postgresql://…): the real binary on a fresh database of the
// suite's own PostgreSQL cluster (tests/pg/cluster.sh; these cases are tagged [postgres]
// and run as npac-postgres/… with NPAC_TEST_PG set), real loopback TCP, providers played
// by npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"

#include <set>

#include "tests/support/postgres_test_database.h"
#include "tests/support/private_cluster.h"

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
    eventually([&] { return (state = npacd.messageState(id)) == "acknowledged"; }, 5s, 10ms);
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


TEST_CASE("npacd on PostgreSQL rides out a server restart under load and loses no accepted message", "[postgres]") {
  npac::testing::PrivateCluster cluster;
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
  eventually(
      [&] {
        submitBatch(round++);
        return accepted.size() > before;
      },
      5s, 50ms);
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
    eventually([&] { return (state = npacd.messageState(id)) == "acknowledged"; }, 10s, 10ms);
    INFO("message " << id);
    CHECK(state == "acknowledged");
  }
  CHECK(npacd.stop() == 0);
}

TEST_CASE("With its PostgreSQL server down, npacd answers a request 503 database_unavailable from the token check", "[postgres]") {
  npac::testing::PrivateCluster cluster;
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

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// How long `call` takes, in seconds.
template <typename Call>
double timed(Call call) {
  const auto started = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

}  // namespace

// docs/DATABASE.md "When PostgreSQL does not answer". The bounds checked here are far
// from the pause's length: before, every request waited for the whole pause.
TEST_CASE("With its PostgreSQL server paused, npacd refuses at once, keeps its associations and delivers again after",
          "[postgres]") {
  npac::testing::PrivateCluster cluster;
  npac::testing::PostgresTestDatabase database(cluster.url());
  NpacdProcess npacd(NpacdProcess::Options{database.url(), {"--db-timeout", "1s"}});
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--duration", "60s"});
  REQUIRE(npacd.waitForAssociations(1));
  waitAcknowledged(npacd, npacd.submit("0001", "before", 20));
  // The newcomer below verifies npacd's AARE with keys exported now: the API's key listing
  // reads the database, which answers nothing during the pause.
  const std::string npac_keys = npacd.exportNpacKeys("npac-keys-before-pause.pub.pem").string();

  npac::testing::PrivateCluster::Pause pause(cluster);
  const auto paused = std::chrono::steady_clock::now();
  const auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - paused).count(); };
  // Load continues: submissions, reads, probes, every 100 ms for 8 s.
  double slowest_health = 0;
  int health_ok = 0, refused = 0, late_refusals = 0, late_untried = 0;
  std::set<std::string> codes;
  std::string other;
  while (since() < 8) {
    Reply health;
    slowest_health = std::max(slowest_health, timed([&] { health = npacd.call(http::verb::get, "/health"); }));
    if (health.status == 200) ++health_ok;
    Reply submitted;
    const bool late = since() > 3;  // the answer bound (1 s) is long past: known not answering
    submitted = npacd.call(http::verb::post, "/v1/messages",
                           Json{{"messages", Json::array({NpacdProcess::notification("0001", "p")})}});
    if (submitted.status == 503) {
      ++refused;
      codes.insert(submitted.body["error"]["code"].get<std::string>());
      if (late) {
        ++late_refusals;
        // Refused at once, without trying the database: the state says how long it has
        // been silent (a try that waited would say "no answer within 1000 ms").
        if (submitted.text.find("has not answered for") != std::string::npos) ++late_untried;
      }
    } else if (other.empty()) {
      other = std::to_string(submitted.status) + " " + submitted.body.dump();
    }
    std::this_thread::sleep_for(100ms);
  }
  // A new association during the pause: its bind is refused transiently, not left hanging.
  auto newcomer = npacd.sim("0001", key, {"--from", "127.0.0.3", "--duration", "5s", "--npac-key", npac_keys});
  CHECK(newcomer->wait(15s) == 5);
  const Json bind = newcomer->result.is_object() ? newcomer->result["associations"][0]["bind"] : Json();
  Reply ready = npacd.call(http::verb::get, "/ready");
  const std::string log_paused = npacd.log();
  pause.end();

  INFO("other answer: " << other << "\nnewcomer: " << bind.dump() << "\nlog:\n" << log_paused);
  CHECK(health_ok > 0);
  CHECK(slowest_health < 5.0);  // at worst one answer bound (1 s) behind a request already waiting
  CHECK(other.empty());         // nothing but 503 while paused
  CHECK(codes == std::set<std::string>{"database_unavailable"});
  CHECK(late_refusals > 10);
  CHECK(late_untried == late_refusals);
  CHECK(bind["outcome"] == "rejected");
  CHECK(bind["result"] == 2);  // rejected-transient (X.227 §7.1.5.4)
  CHECK(ready.status == 503);
  CHECK(ready.text.find("has not answered for") != std::string::npos);
  CHECK(occurrences(log_paused, "database not answering: ") == 1);

  // Back: one line says so, the association bound before the pause is the same one, and
  // what is submitted now is delivered.
  CHECK(eventually([&] { return npacd.log().find("database answering again: ") != std::string::npos; }, 15s, 50ms));
  std::vector<std::int64_t> after;
  CHECK(eventually([&] {
    Reply r = npacd.call(http::verb::post, "/v1/messages",
                         Json{{"messages", Json::array({NpacdProcess::notification("0001", "after")})}});
    if (r.status != 201) return false;
    after.push_back(r.body["ids"][0].get<std::int64_t>());
    return true;
  }, 15s, 50ms));
  waitAcknowledged(npacd, after);
  CHECK(npacd.waitForAssociations(1));
  kill(sim->pid, SIGTERM);
  sim->wait(20s);
  REQUIRE(sim->result.is_object());
  CHECK(sim->result["associations"][0]["binds"].size() == 1);  // never lost, never re-bound
  CHECK(npacd.stop() == 0);
}
