// npacd end to end: GET /v1/events while npac-soa-sim binds and releases an association,
// and while npacd stops. Real binary, SQLite, loopback, npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"

#include <csignal>

#include "tests/npac/npacd/api/event_stream_client.h"

using namespace npacd_test;
using npac::npacd::testing::EventStreamClient;
using npac::npacd::testing::ServerSentEvent;

namespace {

// The next associations event listing `count` associations, each in `state` (bounded).
std::optional<Json> waitForListed(EventStreamClient& client, std::size_t count, const std::string& state) {
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<ServerSentEvent> event = client.nextNamed("associations", 1s);
    if (!event) {
      if (client.ended()) return std::nullopt;
      continue;
    }
    Json body = Json::parse(event->data, nullptr, false);
    if (!body.is_object() || !body["associations"].is_array()) continue;
    const Json& list = body["associations"];
    bool all = list.size() == count;
    for (const Json& a : list) all = all && a.value("state", "") == state;
    if (all) return body;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("GET /v1/events sends a new associations event when a provider binds and when it releases") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  EventStreamClient client(npacd.apiPort(), "Bearer " + npacd.token(), "/v1/events?interval_ms=200");
  REQUIRE(client.status() == 200);
  REQUIRE(waitForListed(client, 0, ""));
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "15s"});
  std::optional<Json> bound = waitForListed(client, 1, "bound");
  INFO(npacd.log());
  REQUIRE(bound);
  CHECK((*bound)["associations"][0]["spid"] == "0001");
  kill(sim->pid, SIGTERM);  // the sim releases its association
  sim->wait(10s);
  CHECK(waitForListed(client, 0, ""));
}

TEST_CASE("Stopping npacd ends an event stream with an end event saying why and the client sees the end without hanging") {
  NpacdProcess npacd;
  EventStreamClient client(npacd.apiPort(), "Bearer " + npacd.token(), "/v1/events?interval_ms=200");
  REQUIRE(client.status() == 200);
  REQUIRE(client.nextNamed("providers"));
  CHECK(npacd.stop() == 0);
  // npacd says why before it closes the stream (the console reconnects on this reason).
  const std::optional<ServerSentEvent> end = client.nextNamed("end", 5s);
  REQUIRE(end.has_value());
  CHECK_THAT(end->data, Catch::Contains("npacd is stopping its admin API"));
  CHECK(client.waitForEnd(5s));
}
