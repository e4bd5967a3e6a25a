// npacd end to end: the SRR table rows of NANC 353 (docs/OPERATIONS.md) and a provider's own requests answered
// through the rotation (NANC 353 7.b.iv). Real binary, SQLite, loopback, npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"

#include <map>
#include <set>

using namespace npacd_test;

namespace {

std::vector<std::string> peers(const NpacdProcess& npacd) {
  std::vector<std::string> out;
  const Reply listed = npacd.call(http::verb::get, "/v1/associations");
  for (const Json& a : listed.body["associations"]) {
    out.push_back(a.value("peer", a.value("peer_address", "")));
  }
  return out;
}

}  // namespace

TEST_CASE("with SRR off a bind with the same mask from another NSAP replaces the live association") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto first = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  auto second = npacd.sim("0001", key, {"--from", "127.0.0.3", "--keep-running", "--duration", "15s"});
  std::vector<std::string> now;
  eventually(
      [&] {
        now = peers(npacd);
        return now.size() == 1 && now[0].rfind("127.0.0.3:", 0) == 0;
      },
      10s);
  INFO(npacd.log());
  REQUIRE(now.size() == 1);
  CHECK(now[0].rfind("127.0.0.3:", 0) == 0);
  first->wait(10s);
  CHECK(first->result["associations"][0]["end"]["reason"] == "aborted-by-peer");
  CHECK(npacd.log().find("replaced by a new bind (NANC 386)") != std::string::npos);
  kill(second->pid, SIGTERM);
  second->wait(10s);
}

TEST_CASE("turning SRR off with three associations up keeps the earliest-bound and releases the others gracefully") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--from", "127.0.0.4",
                                     "--keep-going", "--keep-running", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(3));
  REQUIRE(npacd.call(http::verb::put, "/v1/providers/0001/srr", Json{{"on", false}}).status == 200);
  REQUIRE(npacd.waitForAssociations(1));
  std::vector<std::string> left = peers(npacd);
  REQUIRE(left.size() == 1);
  CHECK(left[0].rfind("127.0.0.2:", 0) == 0);
  npacd.submit("0001", "s", 10);
  auto sentOnFirst = [&] {
    const Reply listed = npacd.call(http::verb::get, "/v1/associations");
    return listed.body["associations"].empty() ? Json(0) : listed.body["associations"][0]["sent"];
  };
  eventually([&] { return sentOnFirst() == 10; }, 10s);
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  const Json& report = sim->result;
  REQUIRE(report.is_object());
  CHECK(report["associations"][0]["received"] == 10);
  CHECK(report["associations"][1]["end"]["reason"] == "released-by-peer");
  CHECK(report["associations"][2]["end"]["reason"] == "released-by-peer");
}

TEST_CASE("a provider's requests reach the NPAC application and its answers leave through the rotation") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--send-requests", "4",
                                     "--duration", "15s"});
  std::size_t answered = 0;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (answered < 4 && std::chrono::steady_clock::now() < deadline) {
    Reply polled = npacd.call(http::verb::get, "/v1/inbound?wait=2s&max=10");
    REQUIRE(polled.status == 200);
    for (const Json& request : polled.body["requests"]) {
      Reply r = npacd.call(http::verb::post, "/v1/inbound/" + std::to_string(request["id"].get<std::uint64_t>()) + "/response",
                           Json{{"outcome", "result"}});
      CHECK(r.status == 200);
      ++answered;
    }
  }
  REQUIRE(answered == 4);
  REQUIRE(sim->wait() == 0);
  std::multiset<std::size_t> reply_on;
  for (const Json& q : sim->result["requests"]) {
    CHECK(q["reply"] == "returnResult");
    reply_on.insert(q["reply_on"].get<std::size_t>());
  }
  // Four answers over two associations in rotation: two each.
  CHECK(reply_on.count(1) == 2);
  CHECK(reply_on.count(2) == 2);
}

TEST_CASE("responses that come back on another association acknowledge every request exactly once and leave none outstanding") {
  // NANC 353 7.b.iv: the provider may answer on any of its associations.
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  constexpr int kMessages = 300;
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--from", "127.0.0.4",
                                     "--answer-on", "next", "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(3));
  std::vector<std::int64_t> ids = npacd.submit("0001", "x", kMessages);
  for (std::int64_t id : ids) {
    std::string state;
    eventually([&] { return (state = npacd.messageState(id)) == "acknowledged"; }, 5s, 10ms);
    CHECK(state == "acknowledged");
  }
  // Every association sent its third of the requests and received a third of the
  // answers (those to its predecessor's requests), and has nothing outstanding.
  const Reply listed = npacd.call(http::verb::get, "/v1/associations");
  REQUIRE(listed.status == 200);
  REQUIRE(listed.body["associations"].size() == 3);
  for (const Json& a : listed.body["associations"]) {
    CHECK(a["outstanding"] == 0);
    CHECK(a["sent"] == kMessages / 3);
    CHECK(a["received"] == kMessages / 3);
  }
  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  const Json& report = sim->result;
  REQUIRE(report.is_object());
  std::map<std::string, int> seen;  // message tag → copies received
  for (const Json& r : report["received"]) ++seen[r["info"].get<std::string>()];
  CHECK(seen.size() == static_cast<std::size_t>(kMessages));
  for (const auto& [tag, copies] : seen) CHECK(copies == 1);  // none sent twice
  for (const Json& r : report["received"]) {
    CHECK_FALSE(r["retransmission"].get<bool>());
    CHECK(r["answered"].get<bool>());
    // Answered on the next association of the three, never on the one it came on.
    CHECK(r["answered_on"].get<int>() == r["association"].get<int>() % 3 + 1);
  }
  for (const Json& a : report["associations"]) CHECK(a["answered"] == kMessages / 3);
  for (std::int64_t id : ids) {
    const Reply row = npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id));
    CHECK(row.body["state"] == "acknowledged");
    CHECK(row.body["retransmission"] == false);
  }
}

TEST_CASE("turning SRR on lets a bind from another NSAP join at once, without a restart") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto first = npacd.sim("0001", key, {"--from", "127.0.0.2", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  REQUIRE(npacd.call(http::verb::put, "/v1/providers/0001/srr", Json{{"on", true}}).status == 200);
  auto second = npacd.sim("0001", key, {"--from", "127.0.0.3", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(2));
  std::vector<std::string> up = peers(npacd);
  CHECK(up[0].rfind("127.0.0.2:", 0) == 0);
  CHECK(up[1].rfind("127.0.0.3:", 0) == 0);
  kill(first->pid, SIGTERM);
  kill(second->pid, SIGTERM);
}

TEST_CASE("an association at congestion_window gets no further request until answers arrive") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--silent", "1", "--keep-running", "--duration", "15s"});
  REQUIRE(npacd.waitForAssociations(1));
  // Set live, after the provider bound.
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/congestion_window", Json{{"value", 5}}).status == 200);
  npacd.submit("0001", "c", 20);
  Json association;
  eventually(
      [&] {
        const Reply listed = npacd.call(http::verb::get, "/v1/associations");
        association = listed.body["associations"][0];
        return association["state"] == "congested";
      },
      10s);
  CHECK(association["state"] == "congested");
  CHECK(association["outstanding"] == 5);
  CHECK(association["sent"] == 5);
  int queued = 0;
  for (int id = 1; id <= 20; ++id) queued += npacd.messageState(id) == "queued";
  CHECK(queued == 15);
  kill(sim->pid, SIGTERM);
}

TEST_CASE("a simulator kept running after its goals exits 7 once a replacing bind aborts all its associations") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001", /*srr=*/true);
  auto first = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--expect", "4",
                                       "--keep-running", "--duration", "30s"});
  REQUIRE(npacd.waitForAssociations(2));
  const auto ids = npacd.submit("0001", "before", 4);
  auto all_acknowledged = [&] {
    for (auto id : ids)
      if (npacd.messageState(id) != "acknowledged") return false;
    return true;
  };
  eventually(all_acknowledged, 10s);
  REQUIRE(all_acknowledged());
  // Both associations of the first simulator are replaced by binds with the same function
  // mask from the same NSAPs (NANC 386): it has nothing left and must end by itself.
  auto second = npacd.sim("0001", key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--keep-running",
                                        "--duration", "30s"});
  const int code = first->wait(15s);
  INFO(npacd.log());
  CHECK(code == 7);
  CHECK(first->result["received"].size() == 4);
  CHECK(first->result["stop_reason"] == "all-associations-down");
  CHECK(first->result["associations"][0]["end"]["reason"] == "aborted-by-peer");
  CHECK(first->result["associations"][1]["end"]["reason"] == "aborted-by-peer");
  kill(second->pid, SIGTERM);
  second->wait(10s);
}
