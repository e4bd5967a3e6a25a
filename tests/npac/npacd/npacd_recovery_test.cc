// npacd end to end: recovery mode (docs/OPERATIONS.md "Recovery"). A provider binds with
// recovery mode on, asks for what it missed, processes it for a while (npac-soa-sim
// --recovery-hold) and then says recovery is complete. What npacd must do: push nothing
// of its own during recovery, answer the recovery request with exactly the selected
// messages, hold what arrives meanwhile, and release the held messages in order once
// recovery is complete. The real binary, real SQLite, loopback TCP.
#include "tests/npac/npacd/npacd_fixture.h"

#include <cstdint>
#include <cstdio>
#include <ctime>

using namespace npacd_test;

namespace {

bool waitForLog(const NpacdProcess& npacd, const std::string& text, std::chrono::milliseconds limit) {
  return eventually([&] { return npacd.log().find(text) != std::string::npos; }, limit);
}

// Waits (bounded) until every message in `ids` is acknowledged; the states last read.
std::vector<std::string> waitUntilAcknowledged(const NpacdProcess& npacd, const std::vector<std::int64_t>& ids,
                                               std::chrono::milliseconds limit) {
  std::vector<std::string> states;
  eventually(
      [&] {
        states.clear();
        for (std::int64_t id : ids) states.push_back(npacd.messageState(id));
        return std::all_of(states.begin(), states.end(), [](const std::string& s) { return s == "acknowledged"; });
      },
      limit);
  return states;
}

// A message's created_at ("2026-11-29T16:02:11.402Z", docs/API.md) as Unix milliseconds.
std::int64_t createdAtMs(const NpacdProcess& npacd, std::int64_t id) {
  Reply r = npacd.call(http::verb::get, "/v1/messages/" + std::to_string(id));
  REQUIRE(r.status == 200);
  const std::string text = r.body.value("created_at", "");
  std::tm tm{};
  int millis = 0;
  REQUIRE(std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                      &tm.tm_min, &tm.tm_sec, &millis) == 7);
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000 + millis;
}

// Whole Unix seconds as the sim's --recover-from/--recover-to take them (YYYYMMDDHHMMSSZ).
std::string generalizedTime(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d%H%M%SZ", &tm);
  return text;
}

// Sleeps until the wall clock is a little past its next whole second, so messages
// submitted before and after fall in different seconds (the range's granularity).
void sleepPastNextSecond() {
  const auto now = std::chrono::system_clock::now();
  const auto next = std::chrono::ceil<std::chrono::seconds>(now);
  std::this_thread::sleep_until(next + 50ms);
}

}  // namespace

TEST_CASE("messages submitted during the recovery hold stay queued until recovery complete and then follow the recovered ones in order") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  const auto missed = npacd.submit("0001", "missed", 5);
  // The hold is the provider's processing time between the recovery result and
  // lnpRecoveryComplete: long enough for this test to submit and look, well inside it.
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--recovery", "--recover-all", "--recovery-hold", "2s",
                                     "--expect", "8", "--duration", "20s"});
  REQUIRE(waitForLog(npacd, "recovery request answered with 5 message(s)", 10s));
  const auto held = npacd.submit("0001", "held", 3);
  for (std::int64_t id : held) CHECK(npacd.messageState(id) == "queued");
  // The states above were read while the provider was still recovering (the test's
  // premise, not a timing claim: with a 2 s hold this only fails on a stalled machine).
  REQUIRE(npacd.log().find("recovery complete") == std::string::npos);

  REQUIRE(sim->wait(20s) == 0);
  CHECK(npacd.log().find("recovery complete, normal mode; 3 held message(s) follow") != std::string::npos);
  const Json& report = sim->result;
  REQUIRE(report.is_object());
  const Json& recovery = report["recovery"];
  CHECK(recovery["message_count"] == 5);
  CHECK(recovery["received_during"] == 5);
  CHECK(recovery["hold_ms"] == 2000);
  CHECK(recovery["received_while_holding"] == 0);
  CHECK(recovery["completed"] == true);
  const Json& received = report["received"];
  REQUIRE(received.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    const Json& r = received[i];
    INFO("received[" << i << "] = " << r.dump());
    CHECK(r["info"] == NpacdProcess::tagHex(i < 5 ? label("missed", static_cast<long>(i))
                                                  : label("held", static_cast<long>(i - 5))));
    CHECK(r["during_recovery"] == (i < 5));
    CHECK(r["retransmission"] == false);
  }
  std::vector<std::int64_t> all = missed;
  all.insert(all.end(), held.begin(), held.end());
  const auto states = waitUntilAcknowledged(npacd, all, 10s);
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO("message " << all[i]);
    CHECK(states[i] == "acknowledged");
  }
}

TEST_CASE("a recovery request by time range returns exactly the messages created in that range and the rest follow after recovery complete") {
  NpacdProcess npacd;
  auto key = npacd.provision("0001");
  const auto before = npacd.submit("0001", "before", 2);
  sleepPastNextSecond();
  const auto inside = npacd.submit("0001", "inside", 3);
  sleepPastNextSecond();
  const auto after = npacd.submit("0001", "after", 2);

  // The range, in whole seconds, from npacd's own timestamps: [from, to] holds every
  // "inside" message and no other (the sleeps above put a second boundary between them).
  std::int64_t before_max = 0, inside_min = INT64_MAX, inside_max = 0, after_min = INT64_MAX;
  for (auto id : before) before_max = std::max(before_max, createdAtMs(npacd, id));
  for (auto id : inside) inside_min = std::min(inside_min, createdAtMs(npacd, id));
  for (auto id : inside) inside_max = std::max(inside_max, createdAtMs(npacd, id));
  for (auto id : after) after_min = std::min(after_min, createdAtMs(npacd, id));
  const std::int64_t from_s = before_max / 1000 + 1;
  const std::int64_t to_s = inside_max / 1000 + 1;
  REQUIRE(inside_min >= from_s * 1000);
  REQUIRE(after_min > to_s * 1000);

  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--recovery", "--recover-from", generalizedTime(from_s),
                                     "--recover-to", generalizedTime(to_s), "--expect", "7", "--duration", "20s"});
  REQUIRE(sim->wait(20s) == 0);
  CHECK(npacd.log().find("recovery request answered with 3 message(s)") != std::string::npos);
  const Json& report = sim->result;
  REQUIRE(report.is_object());
  CHECK(report["recovery"]["range"] == generalizedTime(from_s) + ".." + generalizedTime(to_s));
  CHECK(report["recovery"]["message_count"] == 3);
  CHECK(report["recovery"]["received_during"] == 3);
  CHECK(report["recovery"]["completed"] == true);
  // The range first, then the queue in its order once the provider is back to normal.
  const std::vector<std::string> expected{"inside0", "inside1", "inside2", "before0", "before1", "after0", "after1"};
  const Json& received = report["received"];
  REQUIRE(received.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("received[" << i << "] = " << received[i].dump());
    CHECK(received[i]["info"] == NpacdProcess::tagHex(expected[i]));
    CHECK(received[i]["during_recovery"] == (i < 3));
    CHECK(received[i]["retransmission"] == false);
  }
  std::vector<std::int64_t> all = before;
  all.insert(all.end(), inside.begin(), inside.end());
  all.insert(all.end(), after.begin(), after.end());
  const auto states = waitUntilAcknowledged(npacd, all, 10s);
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO("message " << all[i]);
    CHECK(states[i] == "acknowledged");
  }
}
