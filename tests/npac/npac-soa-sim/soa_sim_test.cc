// npac-soa-sim: binding, answering, dropping, signals and its command line, against the
// minimal NPAC responder of soa_sim_fixture.h.
#include "tests/npac/npac-soa-sim/soa_sim_fixture.h"

using namespace soa_sim_test;

TEST_CASE("The simulator signs its bind and answers each event report with a ReturnResult of the same invoke id and opcode then releases",
          "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 5, true});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --from 127.0.0.2 --expect 5");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);

  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].signature_verified);
  REQUIRE(logs[0].access_control.has_value());
  CHECK(logs[0].access_control->systemId == "0001");
  CHECK(logs[0].access_control->listId == 3);
  CHECK(logs[0].access_control->keyId == 7);
  CHECK_FALSE(logs[0].access_control->recoveryMode);
  CHECK(logs[0].release_requested);
  // Heartbeat (invoke 101) and events 102..106, each answered once with its id and opcode.
  REQUIRE(logs[0].from_sim.size() == 6);
  for (size_t i = 0; i < 6; ++i) {
    const auto* rr = std::get_if<RoseReturnResult>(&logs[0].from_sim[i]);
    REQUIRE(rr != nullptr);
    CHECK(rr->invokeId.present == static_cast<int32_t>(101 + i));
    REQUIRE(rr->result.has_value());
    CHECK(rr->result->opcode == Code::local(static_cast<int32_t>(CmipOpcode::kEventReportConfirmed)));
  }

  const Json& rep = run.report;
  CHECK(rep["exit_code"] == 0);
  CHECK(rep["stop_reason"] == "goals-met");
  CHECK(rep["associations"][0]["received"] == 5);
  CHECK(rep["associations"][0]["answered"] == 5);
  CHECK(rep["associations"][0]["heartbeats"] == 1);
  CHECK(rep["associations"][0]["end"]["reason"] == "released");
  REQUIRE(rep["received"].size() == 5);
  for (int i = 0; i < 5; ++i) {
    const Json& m = rep["received"][i];
    CHECK(m["seq"] == i + 1);
    CHECK(m["invoke_id"] == 102 + i);
    CHECK(m["operation"] == "m-EventReport-Confirmed");
    CHECK(m["type"] == kTestEvent.toString());
    CHECK(m["info"] == hexOf(octets(label("c0-m", static_cast<size_t>(i))).bytes));
    CHECK(m["retransmission"] == false);
  }
}

TEST_CASE("An RSA key made by keygen signs a bind the NPAC side verifies", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "rsa");
  Responder npac(Script{pub, false, 1});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 1");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["key_algorithm"] == "rsa-sha256");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].signature_verified);
}

TEST_CASE("Associations bound with --from arrive from those local addresses in order with increasing sequence numbers",
          "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 2});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --from 127.0.0.2 --from 127.0.0.3 --expect 4");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 2);
  CHECK(logs[0].peer_address == "127.0.0.2");
  CHECK(logs[1].peer_address == "127.0.0.3");
  REQUIRE(logs[0].access_control.has_value());
  REQUIRE(logs[1].access_control.has_value());
  CHECK(logs[1].access_control->sequenceNumber == logs[0].access_control->sequenceNumber + 1);
  const Json& a = run.report["associations"];
  CHECK(a[0]["local_address"] == "127.0.0.2");
  CHECK(a[0]["nsap"] == "540072872203127000000002");
  CHECK(a[1]["local_address"] == "127.0.0.3");
  CHECK(a[0]["received"] == 2);
  CHECK(a[1]["received"] == 2);
}

TEST_CASE("A bind whose signature the NPAC cannot verify is rejected and the simulator exits 5 with the AARE diagnostic",
          "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519", "signer");
  auto [other_key, other_pub] = makeKey(scratch, "ed25519", "provisioned");
  (void)other_key;
  Responder npac(Script{other_pub, false, 0});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 1");
  INFO(run.transcript);
  CHECK(run.exit_code == 5);
  CHECK(run.stderr_text.find("authentication-failure") != std::string::npos);
  CHECK(run.report["stop_reason"] == "bind-rejected");
  CHECK(run.report["associations"][0]["bind"]["diagnostic"] == user_diagnostic::kAuthenticationFailure);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK_FALSE(logs[0].signature_verified);
}

TEST_CASE("Replies to the simulator's own requests are counted on the association they arrive on", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 0};
  script.answer_on_other = true;
  Responder npac(script);
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --from 127.0.0.2 --from 127.0.0.3 --send-requests 4");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  const Json& reqs = run.report["requests"];
  REQUIRE(reqs.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(reqs[i]["sent_on"] == 1 + i % 2);  // round robin over the two associations
    CHECK(reqs[i]["reply_on"] == 2 - i % 2);  // answered on the other one
    CHECK(reqs[i]["reply"] == "returnResult");
  }
  CHECK(run.report["associations"][0]["requests_sent"] == 2);
  CHECK(run.report["associations"][0]["replies_received"] == 2);
  std::set<int> ids;
  for (const Json& r : reqs) ids.insert(r["invoke_id"].get<int>());
  CHECK(ids.size() == 4);
}

TEST_CASE("Drop mode tcp resets the TCP connection without release after the given number of messages", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 4});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --drop-after 1=2 --drop-mode tcp");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);  // no goals; every association ended by our own hand
  CHECK(run.report["stop_reason"] == "all-associations-down");
  CHECK(run.report["associations"][0]["received"] == 2);
  CHECK(run.report["associations"][0]["end"]["reason"] == "dropped-tcp");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].ended_without_release);
  CHECK_FALSE(logs[0].release_requested);
  // A reset may discard what the peer had not read yet: at most the two answers arrived.
  CHECK(logs[0].from_sim.size() <= 2);
}

TEST_CASE("Drop mode close ends the TCP connection with FIN after the answers and without release", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 4});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --drop-after 3 --drop-mode close");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["associations"][0]["end"]["reason"] == "dropped-close");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].ended_without_release);
  CHECK_FALSE(logs[0].release_requested);
  CHECK(logs[0].from_sim.size() == 3);
}

TEST_CASE("Drop mode abort sends an ACSE ABRT", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 3});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --drop-after 1 --drop-mode abort");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["associations"][0]["end"]["reason"] == "dropped-abort");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].abrt);
}

TEST_CASE("A silent association answers nothing and --expect is still met by receipt", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 2, true});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --silent 1 --expect 2");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["associations"][0]["answered"] == 0);
  CHECK(run.report["associations"][0]["heartbeats"] == 1);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].from_sim.empty());
  CHECK(logs[0].release_requested);
}

TEST_CASE("Goals not met when the duration runs out exit 6", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 1});
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 3", "1s");
  INFO(run.transcript);
  CHECK(run.exit_code == 6);
  CHECK(run.report["stop_reason"] == "duration");
  CHECK(run.report["goals_met"] == false);
  CHECK(run.report["associations"][0]["received"] == 1);
}

TEST_CASE("A refused connection exits 4 with the reason on stderr", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  uint16_t closed_port = 0;
  {
    asio::io_context io;
    tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    closed_port = a.local_endpoint().port();
  }  // nothing listens there any more
  SimOutcome refused = runSim(scratch, baseArgs(closed_port, key));
  INFO(refused.transcript);
  CHECK(refused.exit_code == 4);
  CHECK(refused.stderr_text.find("Connection refused") != std::string::npos);
  CHECK(refused.report["associations"][0]["bind"]["outcome"] == "connect-failed");
}

TEST_CASE("A flag naming an association that does not exist exits 2 before connecting", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  SimOutcome bad_flag = runSim(scratch, baseArgs(1, key) + " --delay 3=50ms");
  INFO(bad_flag.transcript);
  CHECK(bad_flag.exit_code == 2);
  CHECK(bad_flag.stderr_text.find("association 3 does not exist") != std::string::npos);
}

TEST_CASE("A key file that is not a private key exits 3 naming the file", "[soa-sim]") {
  Scratch scratch;
  std::ofstream(scratch.file("garbage.pem")) << "not a key\n";
  SimOutcome bad_key = runSim(scratch, baseArgs(1, scratch.file("garbage.pem")));
  INFO(bad_key.transcript);
  CHECK(bad_key.exit_code == 3);
  CHECK(bad_key.stderr_text.find("garbage.pem") != std::string::npos);
  SimOutcome missing = runSim(scratch, baseArgs(1, scratch.file("missing.pem")));
  INFO(missing.transcript);
  CHECK(missing.exit_code == 3);
  CHECK(missing.stderr_text.find("cannot read key file") != std::string::npos);
}

TEST_CASE("keygen writes a key pair whose private half signs and whose public half verifies", "[soa-sim]") {
  Scratch scratch;
  for (const char* algorithm : {"ed25519", "rsa"}) {
    auto [key, pub] = makeKey(scratch, algorithm, algorithm);
    auto alg = std::string(algorithm) == "rsa" ? npac::associations::SignatureAlgorithm::kRsaSha256
                                               : npac::associations::SignatureAlgorithm::kEd25519;
    auto signer = npac::associations::SignatureSigner::fromPem(alg, slurp(key));
    REQUIRE(signer.isOk());
    const std::vector<uint8_t> message{1, 2, 3, 4};
    auto sig = signer.value().sign(message);
    REQUIRE(sig.isOk());
    CHECK(npac::associations::SignatureVerifier::verify(alg, pub, message, sig.value()).isOk());
    std::vector<uint8_t> other{1, 2, 3, 5};
    CHECK_FALSE(npac::associations::SignatureVerifier::verify(alg, pub, other, sig.value()).isOk());
    CHECK((std::filesystem::status(key).permissions() & std::filesystem::perms::others_read) ==
          std::filesystem::perms::none);
  }
}

TEST_CASE("SIGTERM releases every association with RLRQ and RLRE before the report is written", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(Script{pub, false, 1});
  pid_t pid = spawnSim(scratch, baseArgs(npac.port(), key) + " --from 127.0.0.2 --from 127.0.0.3");
  REQUIRE(pid > 0);
  // Wait (bounded) until both binds are accepted; the simulator has no goal and waits.
  eventually([&] { return npac.acceptedBinds() >= 2; }, std::chrono::seconds(10), std::chrono::milliseconds(10));
  REQUIRE(npac.acceptedBinds() == 2);
  REQUIRE(::kill(pid, SIGTERM) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  std::string out = slurp(scratch.file("spawned.json"));
  INFO("stderr: " << slurp(scratch.file("spawned.err")) << "\nreport: " << out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  Json report = Json::parse(out, nullptr, false);
  CHECK(report["stop_reason"] == "signal");
  CHECK(report["associations"][0]["end"]["reason"] == "released");
  CHECK(report["associations"][1]["end"]["reason"] == "released");
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 2);
  CHECK(logs[0].release_requested);
  CHECK(logs[1].release_requested);
}

TEST_CASE("An invoke received again with the same invoke id and argument is marked as a retransmission", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Script script{pub, false, 2};
  script.resend_last = true;
  Responder npac(script);
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 3");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  const Json& order = run.report["received"];
  REQUIRE(order.size() == 3);
  CHECK(order[0]["retransmission"] == false);
  CHECK(order[1]["retransmission"] == false);
  CHECK(order[2]["retransmission"] == true);
  CHECK(order[2]["duplicate_of"] == 2);
  CHECK(order[2]["invoke_id"] == order[1]["invoke_id"]);
  CHECK(order[2]["answered"] == true);
}

// --- the NPAC's side of mutual authentication (docs/SOA-SIM.md "Verifying the NPAC") ---

namespace {

Script npacAnswering(const std::string& pub, Script::NpacAnswer answer) {
  Script script{pub, false, 1};
  script.npac_answer = answer;
  return script;
}

// The simulator's refusal of an accepting AARE: exit 9, the reason reported, an ABRT sent
// and nothing used on the association.
void checkNpacRefused(const SimOutcome& run, Responder& npac, const std::string& reason) {
  INFO(run.transcript);
  CHECK(run.exit_code == 9);
  CHECK(run.report["stop_reason"] == "npac-unverified");
  const Json& bind = run.report["associations"][0]["bind"];
  CHECK(bind["npac_verified"] == false);
  CHECK(bind["accepted"] == false);
  CHECK(bind["outcome"] == "npac-unverified");
  CHECK(bind.value("npac_reason", "").find(reason) != std::string::npos);
  CHECK(run.stderr_text.find(reason) != std::string::npos);
  auto logs = npac.logs();
  CHECK(npac.problems().empty());
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].abrt);
  CHECK(logs[0].from_sim.empty());
}

}  // namespace

TEST_CASE("The simulator verifies the NPAC's signed bind response and reports the NPAC's key", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(npacAnswering(pub, Script::NpacAnswer::kSigned));
  SimOutcome run = runSim(scratch, baseArgs(npac.port(), key) + " --expect 1");
  INFO(run.transcript);
  REQUIRE(run.exit_code == 0);
  const Json& bind = run.report["associations"][0]["bind"];
  CHECK(bind["npac_verified"] == true);
  CHECK(bind["npac"]["system_id"] == "NPAC");
  CHECK(bind["npac"]["key_list_id"] == 1);
  CHECK(bind["npac"]["key_id"] == 1);
  CHECK(bind["npac"]["sequence_number"] == 1);
}

TEST_CASE("The simulator aborts an association whose NPAC signature verifies with no installed key and exits 9",
          "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(npacAnswering(pub, Script::NpacAnswer::kWrongKey));
  checkNpacRefused(runSim(scratch, baseArgs(npac.port(), key) + " --expect 1"), npac, "verifies with none");
}

TEST_CASE("The simulator aborts an accepting AARE without the NPAC's access control and exits 9", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(npacAnswering(pub, Script::NpacAnswer::kNone));
  checkNpacRefused(runSim(scratch, baseArgs(npac.port(), key) + " --expect 1"), npac, "no NPAC access control");
}

TEST_CASE("The simulator aborts an NPAC access control whose system type is not npac and exits 9", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(npacAnswering(pub, Script::NpacAnswer::kNotNpac));
  checkNpacRefused(runSim(scratch, baseArgs(npac.port(), key) + " --expect 1"), npac, "not npac");
}

TEST_CASE("The simulator refuses to start without --npac-key or --no-npac-verify", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(npacAnswering(pub, Script::NpacAnswer::kSigned));
  SimOutcome run = runSim(scratch, "--npac 127.0.0.1:" + std::to_string(npac.port()) + " --spid 0001 --key " + key);
  INFO(run.transcript);
  CHECK(run.exit_code == 2);
  CHECK(run.stderr_text.find("--npac-key FILE is required") != std::string::npos);
  CHECK(run.stderr_text.find("--no-npac-verify") != std::string::npos);
  CHECK(npac.logs().empty());
}

TEST_CASE("An --npac-key file without a public key exits 3 naming the file", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  const std::string not_a_key = scratch.file("npac.pem");
  std::ofstream(not_a_key) << "hello\n";
  SimOutcome run = runSim(scratch, "--npac 127.0.0.1:9 --spid 0001 --key " + key + " --npac-key " + not_a_key);
  INFO(run.transcript);
  CHECK(run.exit_code == 3);
  CHECK(run.stderr_text.find(not_a_key) != std::string::npos);
}

TEST_CASE("With --no-npac-verify the simulator binds without checking and warns on stderr", "[soa-sim]") {
  Scratch scratch;
  auto [key, pub] = makeKey(scratch, "ed25519");
  Responder npac(npacAnswering(pub, Script::NpacAnswer::kNone));
  SimOutcome run = runSim(scratch, "--npac 127.0.0.1:" + std::to_string(npac.port()) +
                                   " --spid 0001 --key-list 3 --key-id 7 --key " + key + " --no-npac-verify --expect 1");
  INFO(run.transcript);
  CHECK(run.exit_code == 0);
  CHECK(run.report["associations"][0]["bind"]["npac_verified"].is_null());
  CHECK(run.stderr_text.find("not verified") != std::string::npos);
}
