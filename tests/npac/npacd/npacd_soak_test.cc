// npacd end to end under load, bounded (about a minute at most): 30 providers with SRR on
// (NANC 353), two associations each from their own loopback addresses, heartbeats on
// (NANC 404), 50 messages per provider of two association functions submitted concurrently
// by several API clients, and three associations dropped part-way (TCP reset, TCP FIN,
// ACSE ABRT). Every message is acknowledged; each provider saw each of its messages once
// apart from retransmissions (the same invoke id and argument, docs/SOA-SIM.md) of what
// was in flight on a dropped association; the association log shows no abort of an
// association that answered. npacd's own start phases in-process on a manual clock
// (in_process_npacd.h: the heartbeat intervals are moved through, not waited for), 30 real
// npac-soa-sim processes, loopback TCP, the real SQLite file.
#include "tests/npac/npacd/in_process_npacd.h"
#include "tests/npac/npacd/metrics_scrape.h"
#include "tests/npac/npacd/multi_provider_fixture.h"

using namespace npacd_test;

namespace {

constexpr int kProviders = 30;
constexpr int kMessagesEach = 50;
constexpr int kBatch = 10;
constexpr int kClients = 6;  // concurrent API clients, each posting for every 6th provider

// Providers whose second association drops after its 10th message, and how.
struct Drop {
  int provider;
  const char* mode;
};
constexpr Drop kDrops[] = {{4, "tcp"}, {14, "close"}, {24, "abort"}};

std::string firstAddress(int provider) { return label("127.0.1.", provider + 1); }
std::string secondAddress(int provider) { return label("127.0.2.", provider + 1); }

const char* dropModeOf(int provider) {
  for (const Drop& d : kDrops) {
    if (d.provider == provider) return d.mode;
  }
  return nullptr;
}

// What one API client did: the statuses it got and the ids it was given.
struct ClientResult {
  std::vector<int> statuses;
  std::vector<std::int64_t> ids;
};

}  // namespace

TEST_CASE("thirty providers with heartbeats and three dropped associations get every message acknowledged and no answering association aborted") {
  InProcessNpacd npacd;
  std::vector<fs::path> keys;
  std::chrono::seconds interval = 0s;
  for (int p = 0; p < kProviders; ++p) {
    keys.push_back(npacd.provision(spidOf(p), /*srr=*/true));
    interval = enableHeartbeats(npacd, spidOf(p), "5s");
    REQUIRE(interval == 10s);
  }
  // One export for all: NpacdClient::sim() would rewrite the file while the simulator
  // started just before is still reading it.
  const fs::path npac_keys = npacd.exportNpacKeys();
  std::vector<std::unique_ptr<SimRun>> sims;
  for (int p = 0; p < kProviders; ++p) {
    std::vector<std::string> args{"--from", firstAddress(p), "--from", secondAddress(p), "--keep-running",
                                  "--duration", "90s", "--npac-key", npac_keys.string()};
    if (const char* mode = dropModeOf(p)) args.insert(args.end(), {"--drop-after", "2=10", "--drop-mode", mode});
    sims.push_back(npacd.sim(spidOf(p), keys[static_cast<std::size_t>(p)], args));
  }
  const bool bound = npacd.waitForAssociations(2 * kProviders, 30s);
  {
    const std::vector<Json> aborts = logEvents(npacd, "abort");
    const std::vector<Json> rejects = logEvents(npacd, "reject");
    INFO("live associations " << liveAssociations(npacd).size() << ", aborts " << aborts.size() << " (first: "
                              << (aborts.empty() ? Json() : aborts.back()).dump() << "), rejects " << rejects.size()
                              << " (first: " << (rejects.empty() ? Json() : rejects.back()).dump() << ")");
    std::string sim_logs;
    for (const auto& sim : sims) sim_logs += slurp(sim->log);
    INFO("simulators' warnings: " << sim_logs.substr(0, 4000));
    REQUIRE(bound);
  }

  // Concurrent submission: client c posts for providers c, c+6, …, one batch at a time
  // in turn, so every provider's messages arrive from one client while all clients post.
  std::vector<ClientResult> results(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&npacd, &results, c] {
      for (int first = 0; first < kMessagesEach; first += kBatch) {
        for (int p = c; p < kProviders; p += kClients) {
          Json batch = Json::array();
          for (int m = first; m < first + kBatch; ++m) {
            const char* function = m % 2 == 0 ? "notifications" : "soa-management";
            batch.push_back(messageFor(spidOf(p), function, std::string(spidOf(p)).append("-").append(std::to_string(m))));
          }
          Reply r = npacd.call(http::verb::post, "/v1/messages", Json{{"messages", batch}});
          results[static_cast<std::size_t>(c)].statuses.push_back(r.status);
          if (r.status == 201) {
            for (const Json& id : r.body["ids"]) results[static_cast<std::size_t>(c)].ids.push_back(id.get<std::int64_t>());
          }
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  std::size_t submitted = 0;
  for (const ClientResult& r : results) {
    for (int status : r.statuses) CHECK(status == 201);
    submitted += r.ids.size();
  }
  REQUIRE(submitted == static_cast<std::size_t>(kProviders * kMessagesEach));

  std::map<std::string, std::size_t> states;
  const bool all = eventually(
      [&] {
        states = statesOf(queueRows(npacd.db()));
        return states["acknowledged"] == submitted;
      },
      40s, 250ms);
  INFO("queue states: " << Json(states).dump());
  CHECK(all);

  // Quiet now: every live association gets a heartbeat (NANC 404) at each interval, all
  // at the same tick. Two rounds, each answered before its timeout is moved past: still no
  // association that answers is aborted.
  auto liveOf = [&](int p) { return dropModeOf(p) ? 1.0 : 2.0; };
  constexpr std::chrono::seconds kTimeout = 5s;  // heartbeat_timeout, as set above
  for (int round = 1; round <= 2; ++round) {
    // To the tick that sends them: an interval after the last PDU each association received
    // (the clock stood still through the load, then through the answers to the last round).
    npacd.advance(round == 1 ? interval : interval - kTimeout);
    const bool answered = eventually(
        [&] {
          const std::string metrics = scrape(npacd);
          for (int p = 0; p < kProviders; ++p) {
            const double seen = valueOr0(metrics, "npacd_heartbeat_round_trip_seconds_count", {{"spid", spidOf(p)}});
            if (seen < round * liveOf(p)) return false;
          }
          return true;
        },
        30s, 50ms);
    INFO("heartbeat round " << round);
    REQUIRE(answered);
    npacd.advance(kTimeout);  // past every heartbeat's timeout: only unanswered ones would go
  }
  // An abort is logged within milliseconds of its tick: a second without one is enough.
  const std::size_t dropped_count = std::size(kDrops);
  CHECK_FALSE(eventually([&] { return logEvents(npacd, "abort").size() > dropped_count; }, 1s, 50ms));

  // Every abort is of a dropped association, and only those were aborted.
  std::set<std::string> dropped;
  for (const Drop& d : kDrops) dropped.insert(nsapOf(secondAddress(d.provider)));
  const std::vector<Json> aborts = logEvents(npacd, "abort");
  for (const Json& a : aborts) {
    INFO("abort: " << a.dump());
    CHECK(dropped.count(a.value("nsap", "")) == 1);
  }
  CHECK(aborts.size() <= dropped.size());
  CHECK(liveAssociations(npacd).size() == static_cast<std::size_t>(2 * kProviders) - std::size(kDrops));

  for (int p = 0; p < kProviders; ++p) kill(sims[static_cast<std::size_t>(p)]->pid, SIGTERM);
  for (int p = 0; p < kProviders; ++p) {
    SimRun& sim = *sims[static_cast<std::size_t>(p)];
    sim.wait(15s);
    INFO("provider " << spidOf(p) << (dropModeOf(p) ? " (association 2 dropped)" : ""));
    REQUIRE(sim.result.is_object());
    const Deliveries d = deliveriesOf(sim.result);
    CHECK(d.copies.size() == static_cast<std::size_t>(kMessagesEach));
    CHECK(d.unflagged_repeats == 0);
    if (!dropModeOf(p)) CHECK(d.flagged_repeats == 0);
    for (const Json& a : sim.result["associations"]) {
      const bool was_dropped = dropModeOf(p) && a["index"] == 2;
      if (!was_dropped) CHECK(a["end"]["reason"] == "released");
    }
  }
}
