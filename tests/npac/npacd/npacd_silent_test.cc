// npacd end to end: a silent association in a SOA Round Robin group (NANC 353). With
// retry_attempts 2 and response_timeout 1 s, once a request on the silent association
// passes response_timeout it takes no new PDU (docs/OPERATIONS.md "Outstanding requests,
// congestion and timeouts": a retry goes to another association, avoiding the one it
// timed out on); after retry_attempts timeouts it is aborted with a reason naming
// response_timeout; every message is acknowledged through the answering association, and
// the provider sees a message twice only as a retransmission (same invoke id and argument,
// docs/SOA-SIM.md). npacd's own start phases in-process on a manual clock (the timeouts
// are moved through: in_process_npacd.h), one real npac-soa-sim with two associations,
// loopback TCP.
#include "tests/npac/npacd/in_process_npacd.h"
#include "tests/npac/npacd/multi_provider_fixture.h"

using namespace npacd_test;


TEST_CASE("a silent SRR association takes no new PDU after a timeout and is aborted after retry_attempts timeouts") {
  InProcessNpacd npacd;
  const fs::path key = npacd.provision("0001", /*srr=*/true);
  REQUIRE(setTunable(npacd, "retry_attempts", 2, "0001") == 200);
  REQUIRE(setTunable(npacd, "response_timeout", "1s", "0001") == 200);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--silent", "2",
                                     "--keep-running", "--duration", "40s"});
  REQUIRE(npacd.waitForAssociations(2));
  const std::int64_t answering = associationFrom(npacd, "127.0.0.2");
  const std::int64_t silent = associationFrom(npacd, "127.0.0.3");
  REQUIRE(answering > 0);
  REQUIRE(silent > 0);

  // Wave 1: round robin puts about half on the silent association.
  constexpr int kWave = 10;
  std::vector<std::int64_t> ids = npacd.submit("0001", "first-", kWave);
  // Round robin: the answering association's share is acknowledged, the silent one's waits.
  // Only then may the clock move: a request still unanswered on the answering association
  // would time out too.
  REQUIRE(eventually([&] { return onlySilentHolds(npacd, ids, silent); }, 10s, 50ms));
  // response_timeout passes: each request on the silent association is sent again, on the
  // answering one; from then on the silent one must take nothing new.
  npacd.advance(1s);
  const bool retried = eventually(
      [&] {
        for (std::int64_t id : ids) {
          if (messageRow(npacd, id).value("retransmission", false)) return true;
        }
        return false;
      },
      10s, 50ms);
  INFO("npacd log:\n" << npacd.log());
  INFO("associations: " << npacd.call(http::verb::get, "/v1/associations").body.dump());
  REQUIRE(retried);
  // Wave 2, after that timeout.
  const std::vector<std::int64_t> later = npacd.submit("0001", "second-", kWave);
  ids.insert(ids.end(), later.begin(), later.end());

  const bool all_acknowledged =
      eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 15s, 50ms);
  CHECK(all_acknowledged);
  for (std::int64_t id : ids) {
    const Json row = messageRow(npacd, id);
    INFO(row.dump());
    CHECK(row["state"] == "acknowledged");
    CHECK(row.value("association_id", std::int64_t{-1}) == answering);
  }

  // Not aborted after one timeout; aborted after retry_attempts (2) of them.
  CHECK(logEvents(npacd, "abort", "0001").empty());
  npacd.advance(1s);
  const bool aborted = eventually([&] { return !logEvents(npacd, "abort", "0001").empty(); }, 10s, 50ms);
  CHECK(aborted);
  const std::vector<Json> aborts = logEvents(npacd, "abort", "0001");
  CHECK(aborts.size() == 1);
  for (const Json& a : aborts) {
    INFO(a.dump());
    CHECK(a["association"] == silent);
    CHECK(a["nsap"] == nsapOf("127.0.0.3"));
    CHECK(a.value("reason", "").find("response_timeout") != std::string::npos);
  }
  CHECK(associationFrom(npacd, "127.0.0.2") == answering);

  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  const Json& report = sim->result;
  INFO(report.dump());
  REQUIRE(report.is_object());
  CHECK(report["associations"][1]["end"]["reason"] == "aborted-by-peer");
  const Deliveries d = deliveriesOf(report);
  CHECK(d.copies.size() == ids.size());  // each message reached the provider
  CHECK(d.unflagged_repeats == 0);       // a repeat is always a retransmission
  // Nothing of wave 2 reached the silent association (the second of the run).
  for (int i = 0; i < kWave; ++i) {
    const std::string info = NpacdProcess::tagHex(label("second-", i));
    INFO("second-" << i);
    const auto where = d.associations.find(info);
    CHECK((where == d.associations.end() || where->second.count(2) == 0));
  }
}
