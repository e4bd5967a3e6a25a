// npac-soa-sim: the recovery sequence (recovery mode, --recovery-hold) and the bind's
// departure time, against the minimal NPAC responder of soa_sim_fixture.h.
#include "tests/npac/npac-soa-sim/soa_sim_fixture.h"

using namespace soa_sim_test;

TEST_CASE("The recovery sequence binds in recovery mode and counts the recovered messages before it completes", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.recovery_messages = 3;
  script.held_messages = 2;
  Responder npac(script);
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --recovery --recover-all --expect 5");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  REQUIRE(logs[0].access_control.has_value());
  CHECK(logs[0].access_control->recoveryMode);
  const Json& rec = run.report["recovery"];
  CHECK(rec["message_count"] == 3);
  CHECK(rec["received_during"] == 3);
  CHECK(rec["completed"] == true);
  const Json& order = run.report["received"];
  REQUIRE(order.size() == 5);
  for (int i = 0; i < 3; ++i) CHECK(order[i]["during_recovery"] == true);
  for (int i = 3; i < 5; ++i) CHECK(order[i]["during_recovery"] == false);
  CHECK(order[3]["info"] == hexOf(octets("held-0").bytes));
  // On the wire: recovery request, 3 answers, complete, 2 answers (the ReturnResults
  // interleave with the requests in exactly this order).
  REQUIRE(logs[0].from_sim.size() == 7);
  const auto* first = std::get_if<RoseInvoke>(&logs[0].from_sim[0]);
  REQUIRE(first != nullptr);
  auto action = fromRose(*first);
  REQUIRE(action.isOk());
  CHECK(std::get<ActionArgument>(action->argument).actionType == ActionTypeId::global(oids::kLnpRecoveryRequestAction));
  const auto* complete = std::get_if<RoseInvoke>(&logs[0].from_sim[4]);
  REQUIRE(complete != nullptr);
}

TEST_CASE("The departure offset option shifts the bind's departure time from the clock by a signed amount", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  auto nowMs = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  for (auto [flag, offset_ms] : {std::pair<std::string, int64_t>{"--departure-offset=-10m", -600'000},
                                 std::pair<std::string, int64_t>{"--departure-offset +2h", 7'200'000}}) {
    Responder npac(Script{pub, false, 1});
    const int64_t before = nowMs();
    SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " " + flag + " --expect 1");
    const int64_t after = nowMs();
    INFO(run.transcript);
    REQUIRE(run.exit_code == 0);
    auto logs = npac.logs();
    REQUIRE(logs.size() == 1);
    REQUIRE(logs[0].access_control.has_value());
    CHECK(logs[0].signature_verified);
    const GeneralizedTime sent = logs[0].access_control->departureTime;
    // Whole seconds of (the sim's clock + offset), taken between `before` and `after`.
    CHECK(sent.toUnixMillis() >= (before + offset_ms) / 1000 * 1000);
    CHECK(sent.toUnixMillis() <= after + offset_ms);
    CHECK(run.report["associations"][0]["departure_time"] == sent.toString());
  }
}

TEST_CASE("A departure offset that is not a signed duration or is over a year exits 2 with the reason", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  SimOutcome garbled = runSim(scratch, baseArgs(1, key) + " --departure-offset 10x");
  INFO(garbled.transcript);
  CHECK(garbled.exit_code == 2);
  CHECK(garbled.stderr_text.find("--departure-offset: '10x' is not a signed duration") != std::string::npos);
  SimOutcome far = runSim(scratch, baseArgs(1, key) + " --departure-offset=-9000h");
  INFO(far.transcript);
  CHECK(far.exit_code == 2);
  CHECK(far.stderr_text.find("more than a year away from the clock") != std::string::npos);
  // Past what 64-bit milliseconds hold: refused as too long, not wrapped round.
  SimOutcome huge = runSim(scratch, baseArgs(1, key) + " --departure-offset=-9999999999999999h");
  INFO(huge.transcript);
  CHECK(huge.exit_code == 2);
  CHECK(huge.stderr_text.find("'-9999999999999999h' is too long") != std::string::npos);
}

TEST_CASE("A recovery hold delays recovery complete and what the NPAC sends after it arrives outside recovery", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.recovery_messages = 2;
  script.held_messages = 2;
  Responder npac(script);
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --recovery --recovery-hold 300ms --expect 4");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  CHECK(npac.problems().empty());
  const Json& rec = run.report["recovery"];
  CHECK(rec["hold_ms"] == 300);
  CHECK(rec["received_during"] == 2);
  CHECK(rec["received_while_holding"] == 0);
  CHECK(rec["completed"] == true);
  const Json& order = run.report["received"];
  REQUIRE(order.size() == 4);
  CHECK(order[1]["info"] == hexOf(octets("recovered-1").bytes));
  CHECK(order[1]["during_recovery"] == true);
  CHECK(order[2]["info"] == hexOf(octets("held-0").bytes));
  CHECK(order[2]["during_recovery"] == false);
  // On the wire: recovery request, 2 answers, then (after the hold) complete.
  auto logs = npac.logs();
  REQUIRE(logs.size() == 1);
  REQUIRE(logs[0].from_sim.size() == 6);
  const auto* complete = std::get_if<RoseInvoke>(&logs[0].from_sim[3]);
  REQUIRE(complete != nullptr);
  auto action = fromRose(*complete);
  REQUIRE(action.isOk());
  CHECK(std::get<ActionArgument>(action->argument).actionType == ActionTypeId::global(oids::kLnpRecoveryCompleteAction));
}

TEST_CASE("A message pushed during the recovery hold fails the run with exit 8 and recovery complete is never sent", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.recovery_messages = 2;
  script.leaked_messages = 1;
  Responder npac(script);
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --recovery --recovery-hold 5s");
  INFO(run.transcript);
  CHECK(run.exit_code == 8);
  CHECK(run.report["stop_reason"] == "recovery-failed");
  const Json& rec = run.report["recovery"];
  CHECK(rec["received_while_holding"] == 1);
  CHECK(rec["completed"] == false);
  CHECK(rec["error"].get<std::string>().find("during --recovery-hold") != std::string::npos);
  CHECK(run.stderr_text.find("the NPAC should have held them") != std::string::npos);
  const Json& order = run.report["received"];
  REQUIRE(order.size() == 3);
  CHECK(order[2]["info"] == hexOf(octets("leaked-0").bytes));
  CHECK(order[2]["during_recovery"] == true);
  for (const Json& r : run.report["requests"]) CHECK(r["purpose"] != "recovery-complete");
}

TEST_CASE("A recovery hold that is not a duration or comes without recovery exits 2 with the reason", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  SimOutcome garbled = runSim(scratch, baseArgs(1, key) + " --recovery --recovery-hold 2x");
  INFO(garbled.transcript);
  CHECK(garbled.exit_code == 2);
  CHECK(garbled.stderr_text.find("--recovery-hold: '2x' is not a duration") != std::string::npos);
  SimOutcome alone = runSim(scratch, baseArgs(1, key) + " --recovery-hold 2s");
  INFO(alone.transcript);
  CHECK(alone.exit_code == 2);
  CHECK(alone.stderr_text.find("--recovery-hold needs --recovery") != std::string::npos);
}

TEST_CASE("The duration ends a recovery hold with exit 6 and a release and recovery complete is never sent", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.recovery_messages = 1;
  Responder npac(script);
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --recovery --recovery-hold 1h", "1s");
  INFO(run.transcript);
  CHECK(run.exit_code == 6);
  CHECK(run.report["stop_reason"] == "duration");
  CHECK(run.report["recovery"]["completed"] == false);
  CHECK(run.report["associations"][0]["end"]["reason"] == "released");
  for (const Json& r : run.report["requests"]) CHECK(r["purpose"] != "recovery-complete");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].release_requested);
  // Recovery request and the answer to the one recovered message: nothing after them.
  CHECK(logs[0].from_sim.size() == 2);
}
