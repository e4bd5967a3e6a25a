// npacd end to end: the database stops taking writes while a provider is bound and
// messages are being delivered — a full disk (a small tmpfs filled to ENOSPC) and,
// separately, an immutable WAL (chattr +i: every write fails with EPERM). npacd must then
// hold delivery (docs/DATABASE.md "Operator guidance": a message leaves the queue only once
// its acknowledgement is stored), not resend what it already sent as new PDUs, nor log a
// line per attempt; once the storage takes writes again every message is acknowledged and
// none is left `sent`, without a restart. Real npacd, real npac-soa-sim, real SQLite files
// on a real tmpfs, loopback TCP.
//
// Mounting a tmpfs and setting the immutable attribute need root (CI runs the tests as
// root); where either is refused the case says so with WARN and checks nothing more —
// it never passes as if it had run.
#include "tests/support/immutable_file.h"
#include "tests/npac/npacd/multi_provider_fixture.h"
#include "tests/npac/npacd/small_disk.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

using namespace npacd_test;

namespace {

constexpr int kMessages = 100;  // 10 acknowledged before the outage, 90 held through it
constexpr auto kOutage = 3s;   // six of the core's retries of the backlog (kTimerPeriod 500 ms)
constexpr std::size_t kMostProblemLines = 50;  // over kOutage; a flood is thousands a second
constexpr int kMostRetransmissions = 20;       // what was in flight, a few times over

using npac::testing::setImmutable;

// Clears the immutable attribute however the case ends.
struct ImmutableGuard {
  fs::path path;
  bool on = false;
  ~ImmutableGuard() {
    if (on) setImmutable(path, false);
  }
};

// Binds provider 0001 (answers 50 ms late, congestion_window 2: about 40 messages a second
// leave, so delivery is under way when storage fails), submits kMessages, waits for the
// first acknowledgements, then `fail()` stops the database taking writes for kOutage
// and `recover()` gives it back. Checks the log stayed quiet meanwhile, every message is
// acknowledged afterwards with none left sent, and the provider saw each message once
// apart from a bounded number of flagged retransmissions.
void deliveryThroughAnOutage(NpacdProcess& npacd, const std::function<bool()>& fail,
                             const std::function<void()>& recover) {
  const fs::path key = npacd.provision("0001");
  REQUIRE(setTunable(npacd, "congestion_window", 2, "0001") == 200);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--delay", "50ms", "--keep-running",
                                     "--duration", "60s"});
  REQUIRE(npacd.waitForAssociations(1));
  const std::vector<std::int64_t> ids = npacd.submit("0001", "f", kMessages);
  REQUIRE(eventually([&] { return countInState(npacd, ids, "acknowledged") >= 10; }, 10s, 20ms));

  const std::size_t log_before = npacd.log().size();
  REQUIRE(fail());
  // The outage: npacd is watched, not waited on; it must keep answering its API.
  const auto outage_end = std::chrono::steady_clock::now() + kOutage;
  int api_failures = 0;
  while (std::chrono::steady_clock::now() < outage_end) {
    api_failures += npacd.call(http::verb::get, "/v1/associations").status == 200 ? 0 : 1;
    std::this_thread::sleep_for(200ms);
  }
  const std::string during = npacd.log().substr(log_before);
  recover();
  INFO("npacd log during the outage (" << during.size() << " bytes):\n" << during.substr(0, 4000));
  CHECK(api_failures == 0);
  CHECK(problemLines(during) < kMostProblemLines);

  const bool all = eventually([&] { return countInState(npacd, ids, "acknowledged") == ids.size(); }, 30s, 100ms);
  CHECK(all);
  CHECK(countInState(npacd, ids, "sent") == 0);
  const std::string log = npacd.log();
  std::size_t starts = 0;
  for (std::size_t at = log.find("npacd listening for associations"); at != std::string::npos;
       at = log.find("npacd listening for associations", at + 1)) {
    ++starts;
  }
  CHECK(starts == 1);  // no restart

  kill(sim->pid, SIGTERM);
  sim->wait(10s);
  const Deliveries d = deliveriesOf(sim->result);
  INFO("sim received " << d.total << " PDUs, " << d.flagged_repeats << " flagged repeats, "
                       << d.unflagged_repeats << " unflagged");
  CHECK(d.copies.size() == static_cast<std::size_t>(kMessages));
  CHECK(d.unflagged_repeats == 0);
  CHECK(d.flagged_repeats <= kMostRetransmissions);
  CHECK(d.total <= static_cast<std::size_t>(kMessages + kMostRetransmissions));
}

}  // namespace

TEST_CASE("a full disk during delivery neither floods the provider nor the log and every message is acknowledged once room returns") {
  SmallDisk disk(16 << 20);
  if (!disk.mounted()) {
    WARN("SKIPPED: cannot mount a tmpfs here (" << disk.error() << "): the full disk during delivery is not exercised");
    return;
  }
  NpacdProcess npacd(NpacdProcess::Options{disk.file("npacd.db"), {}});
  deliveryThroughAnOutage(
      npacd, [&] { return disk.fill(); }, [&] { disk.makeRoom(); });
}

TEST_CASE("an immutable WAL during delivery neither floods the provider nor the log and every message is acknowledged once it is writable") {
  NpacdProcess npacd;
  ImmutableGuard guard{npacd.db().string() + "-wal"};
  REQUIRE(fs::exists(guard.path));
  // Can this machine set the attribute at all? Tried once before delivery starts.
  if (!setImmutable(guard.path, true)) {
    WARN("SKIPPED: cannot set the immutable attribute on " << guard.path
                                                           << " (not root, or the filesystem lacks it)");
    return;
  }
  REQUIRE(setImmutable(guard.path, false));
  deliveryThroughAnOutage(
      npacd, [&] { return guard.on = setImmutable(guard.path, true); },
      [&] { guard.on = guard.on && !setImmutable(guard.path, false); });
}
