// Throttle groups across npacd nodes (DSR "Egress Throttle Lists"; docs/OPERATIONS.md
// "Throttle groups"): one group of three SPIDs served by two real npacd nodes on one
// PostgreSQL database, each member a real npac-soa-sim provider. What the providers
// receive, on one time line, is the measure: the sum stays under the group's max_rate
// over every 10 s window; with node b paused (SIGSTOP: it neither sends nor reports),
// node a falls to its reduced share (the seed's 50 %) within the documented 3 s, and both
// share the whole rate again once b runs. Nothing is lost, nothing discarded.
#include "tests/npac/npacd/two_sites_fixture.h"

#include <algorithm>
#include <map>

using namespace npacd_test;

namespace {

constexpr int kMaxRate = 100;       // the group's EMR maximum, msg/s
constexpr int kPerProvider = 1000;  // each member's backlog: more than the group lets out in the test
const std::vector<std::string> kMembers{"0001", "0002", "0003"};

// When each message reached its provider, in wall-clock milliseconds (the sims' reports:
// started_at_unix_ms plus each record's at_ms).
std::vector<std::int64_t> arrivals(const std::vector<const Run*>& runs) {
  std::vector<std::int64_t> at;
  for (const Run* run : runs) {
    const std::int64_t start = run->result.value("started_at_unix_ms", std::int64_t{0});
    for (const Json& r : run->result["received"]) at.push_back(start + r["at_ms"].get<std::int64_t>());
  }
  std::sort(at.begin(), at.end());
  return at;
}

std::size_t countIn(const std::vector<std::int64_t>& at, std::int64_t from, std::int64_t to) {
  return static_cast<std::size_t>(std::lower_bound(at.begin(), at.end(), to) - std::lower_bound(at.begin(), at.end(), from));
}

std::int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Json group(const NpacdProcess& npacd) { return npacd.call(http::verb::get, "/v1/throttle-groups/bureau").body; }

// Messages of `spids` acknowledged so far, as the shared database has them (node a's
// GET /v1/providers/{spid}/queue totals): how far the test's phases have come.
std::int64_t acknowledged(const NpacdProcess& npacd, const std::vector<std::string>& spids) {
  std::int64_t sum = 0;
  for (const std::string& spid : spids) {
    const Json queue = npacd.call(http::verb::get, "/v1/providers/" + spid + "/queue").body;
    sum += queue["totals"]["acknowledged"].get<std::int64_t>();
  }
  return sum;
}

}  // namespace

TEST_CASE("Two nodes hold a throttle group's sum under max_rate, fall to the reduced share while cut off, and lose "
          "nothing",
          "[postgres]") {
  TwoSites sites;
  // Leases long enough that the pause below tests the throttle, not a takeover.
  REQUIRE(sites.a.call(http::verb::put, "/v1/tunables/provider_lease_timeout", Json{{"value", "60s"}}).status == 200);
  std::map<std::string, fs::path> keys;
  for (const std::string& spid : kMembers) keys[spid] = sites.a.provision(spid);
  Reply made = sites.a.call(http::verb::post, "/v1/throttle-groups",
                            Json{{"name", "bureau"}, {"members", kMembers}, {"max_rate", kMaxRate},
                                 {"peer_loss_reduction_percent", 50}});
  INFO(made.text);
  REQUIRE(made.status == 201);
  // Both nodes have it in force (b reads it from the database within its period).
  REQUIRE(eventually([&] { return !group(sites.b)["live"].is_null() && !group(sites.a)["live"].is_null(); }, 10s,
                     50ms));

  // The backlog first, then the providers: 0001 and 0002 at node a, 0003 at node b.
  std::map<std::string, std::vector<std::int64_t>> ids;
  for (const std::string& spid : kMembers) ids[spid] = sites.a.submit(spid, "t" + spid + "-", kPerProvider);
  std::vector<std::unique_ptr<Run>> sims;
  const std::vector<std::string> from{"127.0.0.2", "127.0.0.3", "127.0.0.4"};
  for (std::size_t i = 0; i < kMembers.size(); ++i) {
    NpacdProcess& node = i < 2 ? sites.a : sites.b;
    sims.push_back(startSim(sites.a, {address(node)}, keys[kMembers[i]],
                            {"--from", from[i], "--expect",
                             std::to_string(kPerProvider), "--duration", "120s"},
                            kMembers[i]));
  }
  REQUIRE(sites.a.waitForAssociations(2, 20s));
  REQUIRE(sites.b.waitForAssociations(1, 20s));
  const std::int64_t started = wallMs();

  // Both nodes sending until the group has let out 12 s of its max_rate. The phases are
  // measured in messages, not slept: the windows below are read from the arrival times.
  REQUIRE(eventually([&] { return acknowledged(sites.a, kMembers) >= kMaxRate * 12; }, 40s, 100ms));
  Json shared_view = group(sites.a)["live"];
  CHECK(shared_view["max_rate"] == kMaxRate);
  CHECK(shared_view["unreachable"].empty());
  CHECK(shared_view["nodes"].size() == 2);

  // b paused (it neither sends nor reports) until a, on its own, has let out what 9 s
  // would: up to 3 s at its share before it notices, then 6 s at the reduced share.
  const std::vector<std::string> at_a{kMembers[0], kMembers[1]};
  REQUIRE(kill(sites.b.pid(), SIGSTOP) == 0);
  const std::int64_t cut = wallMs();
  const std::int64_t at_cut = acknowledged(sites.a, at_a);
  REQUIRE(eventually([&] { return acknowledged(sites.a, at_a) >= at_cut + kMaxRate * 2 + (kMaxRate / 2) * 6; }, 30s,
                     100ms));
  Json cut_view = group(sites.a)["live"];
  const std::string metrics = sites.a.call(http::verb::get, "/metrics").text;
  REQUIRE(kill(sites.b.pid(), SIGCONT) == 0);
  const std::int64_t resumed = wallMs();
  INFO("a's view while b was paused: " << cut_view.dump());
  CHECK(cut_view["max_rate"] == kMaxRate / 2);  // the seed's 50 % per lost peer
  CHECK(cut_view["unreachable"] == Json::array({"b"}));
  CHECK_THAT(metrics, Catch::Contains("npacd_throttle_group_max_rate{group=\"bureau\"} 50"));
  CHECK_THAT(metrics, Catch::Contains("npacd_throttle_group_peers_unreachable{group=\"bureau\"} 1"));

  // b back: the full rate is shared again.
  REQUIRE(eventually([&] { return group(sites.a)["live"]["unreachable"].empty(); }, 5s, 50ms));
  CHECK(group(sites.a)["live"]["max_rate"] == kMaxRate);
  // Both sending again until the group has let out 8 s of its max_rate more.
  const std::int64_t at_resume = acknowledged(sites.a, kMembers);
  REQUIRE(eventually([&] { return acknowledged(sites.a, kMembers) >= at_resume + kMaxRate * 8; }, 30s, 100ms));
  const std::int64_t shared_again_until = wallMs();

  // Everything arrives in the end; nothing lost, nothing twice.
  for (auto& sim : sims) CHECK(sim->wait(120s) == 0);
  std::vector<const Run*> runs;
  for (auto& sim : sims) runs.push_back(sim.get());
  const std::vector<std::int64_t> at = arrivals(runs);
  for (std::size_t i = 0; i < kMembers.size(); ++i) {
    std::map<std::string, int> copies;
    for (const Json& r : sims[i]->result["received"]) ++copies[r["info"].get<std::string>()];
    CHECK(copies.size() == static_cast<std::size_t>(kPerProvider));
    CHECK(eventually([&] { return acknowledgedCount(sites.a, ids[kMembers[i]]) == ids[kMembers[i]].size(); }, 30s,
                     50ms));
  }

  // The sum over every 10 s window (sliding by 1 s, from the start to the last arrival)
  // within max_rate + 5 %.
  for (std::int64_t from = started; from + 10'000 <= at.back(); from += 1000) {
    const std::size_t sum = countIn(at, from, from + 10'000);
    INFO("window from +" << (from - started) << " ms: " << sum);
    CHECK(sum <= static_cast<std::size_t>(kMaxRate * 10 * 105 / 100));
  }
  // Shared before the cut: the group was used (not starved by the exchange), at 70 % or more.
  CHECK(countIn(at, started + 2000, cut) >= static_cast<std::size_t>(kMaxRate * (cut - started - 2000) / 1000 * 70 / 100));
  // Cut off: from 3 s after the pause a alone stays within its reduced share (+5 %).
  const std::size_t during = countIn(at, cut + 3000, resumed);
  INFO("arrivals while b was paused, from 3 s after: " << during << " in " << (resumed - cut - 3000) << " ms");
  CHECK(during <= static_cast<std::size_t>((kMaxRate / 2) * (resumed - cut - 3000) / 1000 * 105 / 100 + 1));
  CHECK(during >= static_cast<std::size_t>((kMaxRate / 2) * (resumed - cut - 3000) / 1000 * 70 / 100));
  // Back: more than the reduced share again (both nodes send).
  const std::size_t after = countIn(at, resumed + 3000, shared_again_until);
  INFO("arrivals after b resumed, from 3 s after: " << after);
  CHECK(after > static_cast<std::size_t>((kMaxRate / 2) * (shared_again_until - resumed - 3000) / 1000 * 110 / 100));
}
