// npacd end to end: more BindGate refusals, each with its diagnostic in the log while the
// provider's live association keeps working; the response and heartbeat timeouts. The real
// binary, or (for the timeouts) npacd's own start phases in-process on a manual clock
// (in_process_npacd.h); SQLite, loopback, npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/npac/npacd/in_process_npacd.h"
#include "tests/npac/npacd/metrics_scrape.h"
#include "tests/npac/npacd/multi_provider_fixture.h"

using namespace npacd_test;

namespace {

// Runs a sim whose bind must be refused; returns npacd's log.
void expectRefused(NpacdProcess& npacd, const std::string& spid, const fs::path& key,
                   std::vector<std::string> args, const std::string& code) {
  args.insert(args.end(), {"--duration", "5s"});
  auto refused = npacd.sim(spid, key, args);
  CHECK(refused->wait() == 5);
  CHECK(refused->result["associations"][0]["bind"]["outcome"] == "rejected");
  CHECK(refused->result["associations"][0]["bind"]["refusal"]["reason"] == code);
  CHECK(npacd.log().find("(" + code + ")") != std::string::npos);
}

}  // namespace

TEST_CASE("a disabled provider's bind is refused with spid-disabled") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  REQUIRE(npacd.call(http::verb::post, "/v1/providers/0001/disable", Json{{"actor", "t"}}).status == 200);
  expectRefused(npacd, "0001", key, {"--from", "127.0.0.2"}, "spid-disabled");
}

TEST_CASE("a bind from an NSAP outside the provider's provisioned list is refused with nsap-not-provisioned") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  REQUIRE(npacd.call(http::verb::post, "/v1/providers/0001/nsaps", Json{{"address", "127.0.0.9"}}).status == 201);
  expectRefused(npacd, "0001", key, {"--from", "127.0.0.2"}, "nsap-not-provisioned");
}

TEST_CASE("recovery mode while an association is up is refused and the live association keeps working") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto live = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "5", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  expectRefused(npacd, "0001", key, {"--from", "127.0.0.3", "--recovery"}, "recovery-mode-while-up");
  npacd.submit("0001", "live", 5);
  CHECK(live->wait() == 0);
}

TEST_CASE("max_associations_per_sp refuses a bind beyond the maximum with too-many-associations") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/max_associations_per_sp",
                     Json{{"value", 1}, {"spid", "0001"}}).status == 200);
  auto live = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  expectRefused(npacd, "0001", key, {"--from", "127.0.0.3"}, "too-many-associations");
  CHECK(npacd.waitForAssociations(1));
}

TEST_CASE("with SRR off and duplicate_bind reject a second bind with the same mask is refused") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/duplicate_bind",
                     Json{{"value", "reject"}}).status == 200);  // a global tunable
  auto live = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  expectRefused(npacd, "0001", key, {"--from", "127.0.0.3"}, "duplicate-bind-rejected");
}

TEST_CASE("an association that never answers is aborted after response_timeout and its messages reach the survivor") {
  InProcessNpacd npacd;  // a manual clock: response_timeout is moved through
  auto key = npacd.provision("0001", /*srr=*/true);
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/response_timeout", Json{{"value", "1s"}}).status == 200);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--silent", "2",
                                     "--keep-going", "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(2));
  const std::int64_t silent = associationFrom(npacd, "127.0.0.3");
  const std::vector<std::int64_t> ids = npacd.submit("0001", "t", 20);
  // Round robin: the answering association's share is acknowledged, the silent one's waits.
  // Only then may the clock move: a request still unanswered on the answering association
  // would time out too.
  REQUIRE(eventually([&] { return onlySilentHolds(npacd, ids, silent); }, 10s, 50ms));
  CHECK(npacd.waitForAssociations(2, 0s));
  npacd.advance(1s);
  const bool one_left = npacd.waitForAssociations(1);
  INFO("npacd log:\n" << npacd.log());
  INFO("associations: " << npacd.call(http::verb::get, "/v1/associations").body.dump());
  REQUIRE(one_left);
  CHECK(eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 10s, 50ms));
  for (std::int64_t id : ids) CHECK(npacd.messageState(id) == "acknowledged");
  CHECK(npacd.log().find("no response within response_timeout") != std::string::npos);
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
}

TEST_CASE("with heartbeats on an association that does not answer them is aborted and the other stays") {
  // In-process on a manual clock (in_process_npacd.h): the 10 s interval and the 1 s
  // timeout are moved through, not waited for.
  InProcessNpacd npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/heartbeat_interval",
                     Json{{"value", "10s"}, {"spid", "0001"}}).status == 200);
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/heartbeat_timeout",
                     Json{{"value", "1s"}, {"spid", "0001"}}).status == 200);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--silent", "2",
                                     "--keep-going", "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(2));
  // Both quiet since their bind: each gets a heartbeat at 10 s; the first answers it.
  npacd.advance(10s);
  REQUIRE(eventually([&] { return heartbeatsAnswered(npacd, "0001") == 1; }, 20s));
  CHECK(npacd.waitForAssociations(2, 0s));
  // 1 s later the silent one's has timed out: it is aborted, the other stays.
  npacd.advance(1s);
  const bool one_left = npacd.waitForAssociations(1, 20s);
  INFO("npacd log:\n" << npacd.log());
  REQUIRE(one_left);
  CHECK(associationFrom(npacd, "127.0.0.2") > 0);
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  REQUIRE(sim->result.is_object());
  CHECK(sim->result["associations"][0]["heartbeats"].get<int>() == 1);
  CHECK(sim->result["associations"][1]["end"]["reason"] == "aborted-by-peer");
  CHECK(npacd.log().find("no heartbeat response within heartbeat_timeout") != std::string::npos);
}

TEST_CASE("Two binds of one provider arriving together under max_associations_per_sp 1 admit one and refuse the other") {
  // The binds of one turn commit together (npac/npacd/core/bind_queue.h), but a provider's
  // second bind is decided after its first is live: the maximum holds for simultaneous binds.
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/max_associations_per_sp",
                     Json{{"value", 1}, {"spid", "0001"}}).status == 200);
  // --expect 0: the sim's goal is met once both binds are answered; it releases and ends.
  auto both = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-going", "--expect", "0",
                                      "--duration", "20s"});
  both->wait();
  INFO(slurp(both->log) << npacd.log());
  REQUIRE(both->result["associations"].size() == 2);
  int accepted = 0, refused = 0;
  for (const Json& a : both->result["associations"]) {
    if (a["bind"]["outcome"] == "rejected") {
      CHECK(a["bind"]["refusal"]["reason"] == "too-many-associations");
      ++refused;
    } else if (a["bind"]["accepted"] == true) {
      ++accepted;
    }
  }
  CHECK(accepted == 1);
  CHECK(refused == 1);
}

TEST_CASE("Binds accepted together survive kill -9: after the restart their sequence numbers are refused as replayed") {
  // An AARE accepts a bind only once the batch holding its sequence number committed
  // (npac/npacd/core/bind_queue.h), so a replay after a crash is still caught.
  NpacdProcess npacd;
  const std::vector<std::string> spids{"0001", "0002", "0003"};
  std::vector<fs::path> keys;
  std::vector<std::unique_ptr<SimRun>> bound;
  for (std::size_t i = 0; i < spids.size(); ++i) {
    keys.push_back(npacd.provision(spids[i]));
    bound.push_back(npacd.sim(spids[i], keys[i], {"--from", "127.0.0." + std::to_string(2 + i), "--sequence", "1000",
                                                  "--keep-running", "--duration", "20s"}));
  }
  REQUIRE(npacd.waitForAssociations(spids.size()));
  npacd.stopHard();
  bound.clear();
  npacd.start();
  for (std::size_t i = 0; i < spids.size(); ++i) {
    expectRefused(npacd, spids[i], keys[i], {"--from", "127.0.0." + std::to_string(2 + i), "--sequence", "1000"},
                  "sequence-replayed");
  }
  auto fresh = npacd.sim(spids[0], keys[0], {"--from", "127.0.0.2", "--sequence", "1001", "--keep-running",
                                             "--duration", "15s"});
  CHECK(npacd.waitForAssociations(1));
}
