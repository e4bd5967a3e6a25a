// npacd end to end: application heartbeats (NANC 404) are per provider. With heartbeats on
// for several providers and one of them silent, exactly the silent provider's association
// is aborted (heartbeat_timeout) while the others, which answer every heartbeat, stay
// bound for several intervals: an answer from one provider never completes (or fails)
// another provider's heartbeat. npacd's own start phases in-process on a manual clock
// (in_process_npacd.h), real npac-soa-sim processes, loopback TCP.
#include "tests/npac/npacd/in_process_npacd.h"
#include "tests/npac/npacd/metrics_scrape.h"
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

// Waits (bounded, real time) until each answering member's simulator has answered
// `count` heartbeats and npacd has read the answers; npacd's clock stands still meanwhile.
bool answeringCaughtUp(const NpacdClient& npacd, const std::vector<Member>& members, double count) {
  return eventually(
      [&] {
        for (const Member& m : members) {
          if (!m.silent && heartbeatsAnswered(npacd, m.spid) < count) return false;
        }
        return true;
      },
      20s);
}

// Provisions and binds one association per member (heartbeat_interval 10 s, the shortest
// accepted, and heartbeat_timeout 2 s), then drives npacd's clock: at 10 s every member
// gets its heartbeat; once the answering ones have answered, 2 s more abort the silent
// one; then two more intervals, each answered. The answering members stay bound on the
// same association through three heartbeats, their log has no abort, and their simulator
// answered every heartbeat.
void heartbeatsAbortOnlyTheSilent(std::vector<Member>& members) {
  InProcessNpacd npacd;
  std::chrono::seconds interval = 0s;
  std::vector<fs::path> keys;
  for (Member& m : members) {
    keys.push_back(npacd.provision(m.spid));
    interval = enableHeartbeats(npacd, m.spid, "2s");
    REQUIRE(interval == 10s);
  }
  // One export for all: NpacdClient::sim() would rewrite the file while the simulator
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

  // Every association has been quiet since its bind (the clock has not moved since): the
  // tick at 10 s sends each one a heartbeat.
  npacd.advance(interval);
  REQUIRE(answeringCaughtUp(npacd, members, 1));
  for (const Member& m : members) CHECK(logEvents(npacd, "abort", m.spid).empty());
  // 2 s later the silent one's heartbeat has timed out, and only its.
  npacd.advance(2s);
  for (const Member& m : members) {
    if (m.silent) {
      CHECK(eventually([&] { return logEvents(npacd, "abort", m.spid).size() == 1; }, 10s));
    }
  }
  // Two more intervals after the answers at 10 s: heartbeats at 20 s and 30 s.
  npacd.advance(interval - 2s);
  REQUIRE(answeringCaughtUp(npacd, members, 2));
  npacd.advance(interval);
  REQUIRE(answeringCaughtUp(npacd, members, 3));
  for (const Member& m : members) {
    if (!m.silent) CHECK(associationFrom(npacd, m.address) == m.association);
  }

  INFO("npacd log:\n" << npacd.log());
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
      CHECK(m.sim->result["associations"][0]["heartbeats"].get<int>() == 3);
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
