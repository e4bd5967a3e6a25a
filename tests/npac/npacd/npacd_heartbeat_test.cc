// npacd end to end: application heartbeats (NANC 404) are per provider. With heartbeats on
// for several providers and one of them silent, exactly the silent provider's association
// is aborted (heartbeat_timeout) while the others, which answer every heartbeat, stay
// bound for several intervals: an answer from one provider never completes (or fails)
// another provider's heartbeat. Real npacd, real npac-soa-sim processes, loopback TCP.
#include "tests/npac/npacd/multi_provider_fixture.h"

using namespace npacd_test;

namespace {

struct Member {
  std::string spid;
  std::string address;  // the sim's local address, its NSAP
  bool silent = false;
  std::unique_ptr<SimRun> sim;
  std::int64_t association = -1;
};

// Provisions and binds one association per member (heartbeat_timeout 2 s, the shortest
// interval accepted), waits until the silent ones are aborted, then watches the others
// for at least three more intervals: they stay bound on the same association, their log
// has no abort, and their simulator answered heartbeats all along.
void heartbeatsAbortOnlyTheSilent(std::vector<Member>& members) {
  NpacdProcess npacd;
  std::chrono::seconds interval = 0s;
  std::vector<fs::path> keys;
  for (Member& m : members) {
    keys.push_back(npacd.provision(m.spid));
    interval = enableHeartbeats(npacd, m.spid, "2s");
    REQUIRE(interval > 0s);
  }
  // One export for all: NpacdProcess::sim() would rewrite the file while the simulator
  // started just before is still reading it.
  const fs::path npac_keys = npacd.exportNpacKeys();
  for (std::size_t i = 0; i < members.size(); ++i) {
    Member& m = members[i];
    const fs::path& key = keys[i];
    std::vector<std::string> args{"--from", m.address, "--keep-running", "--duration", "90s", "--npac-key",
                                  npac_keys.string()};
    if (m.silent) args.insert(args.end(), {"--silent", "1"});
    m.sim = npacd.sim(m.spid, key, args);
  }
  REQUIRE(npacd.waitForAssociations(members.size(), 20s));
  for (Member& m : members) {
    m.association = associationFrom(npacd, m.address);
    REQUIRE(m.association > 0);
  }
  const auto bound = std::chrono::steady_clock::now();

  auto silentAborted = [&] {
    for (const Member& m : members) {
      if (m.silent && logEvents(npacd, "abort", m.spid).empty()) return false;
    }
    return true;
  };
  // Interval, then the 2 s timeout, with slack for a loaded machine.
  const bool aborted = eventually(silentAborted, interval * 3 + 10s, 100ms);
  INFO("npacd log:\n" << npacd.log());
  CHECK(aborted);

  // The answering members stay bound for three intervals past the first heartbeat's
  // timeout at least; checked every 100 ms, so a passing abort is seen.
  const auto now = std::chrono::steady_clock::now();
  const auto watch_until = std::max(bound + interval * 3 + 2s, now + interval * 3);
  const auto watch = std::chrono::duration_cast<std::chrono::milliseconds>(watch_until - now);
  const bool one_dropped = eventually(
      [&] {
        for (const Member& m : members) {
          if (!m.silent && associationFrom(npacd, m.address) != m.association) return true;
        }
        return false;
      },
      watch, 100ms);
  const bool all_up = !one_dropped;
  CHECK(all_up);

  for (Member& m : members) {
    INFO("provider " << m.spid << (m.silent ? " (silent)" : " (answering)"));
    const std::vector<Json> aborts = logEvents(npacd, "abort", m.spid);
    if (m.silent) {
      REQUIRE(aborts.size() == 1);
      CHECK(aborts[0]["association"] == m.association);
      CHECK(aborts[0]["nsap"] == nsapOf(m.address));
      CHECK(aborts[0].value("reason", "").find("heartbeat") != std::string::npos);
      CHECK(m.sim->wait(10s) == 7);  // every association ended by the NPAC
      CHECK(m.sim->result["associations"][0]["end"]["reason"] == "aborted-by-peer");
    } else {
      CHECK(aborts.empty());
      CHECK(logEvents(npacd, "release", m.spid).empty());
      kill(m.sim->pid, SIGTERM);
      m.sim->wait(10s);
      INFO(m.sim->result.dump());
      REQUIRE(m.sim->result.is_object());
      CHECK(m.sim->result["associations"][0]["heartbeats"].get<int>() >= 3);
    }
  }
}

}  // namespace

// Two providers are covered in milliseconds on the manual clock
// (provider_core_test.cc "A heartbeat answer completes only the heartbeat of its own
// provider and association"); end to end, five providers make the cross-provider match
// show reliably (it failed against the shared heartbeat map).
TEST_CASE("with heartbeats on for five providers only the silent one is aborted and the four answering stay bound") {
  std::vector<Member> members(5);
  for (int i = 0; i < 5; ++i) {
    members[static_cast<std::size_t>(i)].spid = spidOf(i);
    members[static_cast<std::size_t>(i)].address = label("127.0.0.", 2 + i);
  }
  members[2].silent = true;  // 0003, between answering ones in every id order
  heartbeatsAbortOnlyTheSilent(members);
}
