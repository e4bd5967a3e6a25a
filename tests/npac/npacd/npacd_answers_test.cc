// npacd end to end: answers to a provider's own requests are as durable as the messages
// the NPAC pushes ("nothing lost"), and disabling a provider ends its live
// associations. Real binary, SQLite, loopback, npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"

using namespace npacd_test;

namespace {

// Polls the provider's inbound requests until `count` arrived (bounded); their ids.
std::vector<std::uint64_t> pollRequests(NpacdProcess& npacd, std::size_t count) {
  std::vector<std::uint64_t> ids;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (ids.size() < count && std::chrono::steady_clock::now() < deadline) {
    Reply polled = npacd.call(http::verb::get, "/v1/inbound?wait=1s&max=10");
    REQUIRE(polled.status == 200);
    for (const Json& request : polled.body["requests"]) ids.push_back(request["id"].get<std::uint64_t>());
  }
  return ids;
}

}  // namespace

TEST_CASE("answers given while the provider has no association survive kill -9 and leave at its next bind") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  // The provider asks twice, then goes away before the NPAC application answers.
  auto asking = npacd.sim("0001", key, {"--from", "127.0.0.2", "--send-requests", "2", "--duration", "2s"});
  std::vector<std::uint64_t> requests = pollRequests(npacd, 2);
  REQUIRE(requests.size() == 2);
  CHECK(asking->wait() == 6);  // its requests were not answered in time
  REQUIRE(npacd.waitForAssociations(0));
  for (std::uint64_t id : requests) {
    Reply r = npacd.call(http::verb::post, "/v1/inbound/" + std::to_string(id) + "/response",
                         Json{{"outcome", "result"}});
    CHECK(r.status == 200);
  }
  // Accepted answers are in the durable queue (ids 1 and 2): npacd dies and comes back.
  CHECK(npacd.messageState(1) == "queued");
  CHECK(npacd.messageState(2) == "queued");
  npacd.stopHard();
  npacd.start();

  auto back = npacd.sim("0001", key, {"--from", "127.0.0.3", "--expect", "1", "--duration", "10s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.submit("0001", "after", 1);
  REQUIRE(back->wait() == 0);
  // Both answers reached the provider (for invoke ids this run did not send) and were
  // acknowledged once written.
  CHECK(back->result["associations"][0]["unmatched_replies"] == 2);
  CHECK(npacd.messageState(1) == "acknowledged");
  CHECK(npacd.messageState(2) == "acknowledged");
  CHECK(npacd.messageState(3) == "acknowledged");
}

TEST_CASE("disabling a provider releases its live associations and its undelivered messages stay queued") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-running",
                                     "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(2));
  REQUIRE(npacd.call(http::verb::post, "/v1/providers/0001/disable").status == 200);
  REQUIRE(npacd.waitForAssociations(0));
  CHECK(sim->wait() == 7);  // every association ended, by the NPAC's release
  for (const Json& association : sim->result["associations"]) {
    CHECK(association["end"]["reason"] == "released-by-peer");
  }
  // The actor is the name of the token the call carried: the fixture's first-start token.
  CHECK(npacd.log().find("provider disabled by npacd-initial") != std::string::npos);
  // Accepted while disabled, kept for when it is enabled again.
  std::vector<std::int64_t> ids = npacd.submit("0001", "kept", 3);
  for (std::int64_t id : ids) CHECK(npacd.messageState(id) == "queued");
  REQUIRE(npacd.call(http::verb::post, "/v1/providers/0001/enable", Json{{"actor", "t"}}).status == 200);
  auto again = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "3", "--duration", "10s"});
  REQUIRE(again->wait() == 0);
  for (std::int64_t id : ids) CHECK(npacd.messageState(id) == "acknowledged");
}

TEST_CASE("a provider request still unanswered when npacd stops is named in a warning") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto asking = npacd.sim("0001", key, {"--from", "127.0.0.2", "--send-requests", "1", "--duration", "10s"});
  REQUIRE(pollRequests(npacd, 1).size() == 1);  // handed to the application, never answered
  CHECK(npacd.stop() == 0);
  asking->wait();
  CHECK(npacd.log().find("SPID 0001: 1 request(s) from the provider left unanswered at stop (invoke ids 1)") !=
        std::string::npos);
}
