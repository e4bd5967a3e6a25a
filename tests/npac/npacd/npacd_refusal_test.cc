// npacd end to end: the BindGate refusals of docs/OPERATIONS.md "Admission" that
// npacd_admission_test.cc and npacd_resilience_test.cc leave out — system type, function
// mask, key unknown / revoked / expired / not yet valid, departure time outside
// departure_time_window, sequence number replayed. The real binary, a real SQLite file,
// loopback TCP, providers played by npac-soa-sim.
//
// Every refusal is checked in each place it leaves a trace: the refused sim exits 5 and
// its report shows the AARE (rejected-permanent, acse-service-user, the diagnostic
// associations::acseDiagnostic() gives for the code); npacd's log line names the SPID, the
// NSAP and "(code)"; the association log (read from npacd's SQLite file, as no admin API
// route lists it) has a "reject" row with the code and the operator's sentence. Meanwhile
// provider 0002 stays bound and receives and acknowledges messages before and after.
#include "tests/npac/npacd/npacd_fixture.h"

#include <cstdint>
#include <limits>

#include "associations/bind_diagnostic.h"
#include "db/association_log_store.h"
#include "db/database.h"

using namespace npacd_test;
namespace as = npac::associations;

namespace {

std::int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string hexOf(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 0xF]);
  }
  return s;
}

// Waits (bounded) until each message is acknowledged; false if one is not within 10 s.
bool allAcknowledged(const NpacdProcess& npacd, const std::vector<std::int64_t>& ids) {
  std::size_t next = 0;  // the ids before it are acknowledged
  return eventually(
      [&] {
        while (next < ids.size() && npacd.messageState(ids[next]) == "acknowledged") ++next;
        return next == ids.size();
      },
      10s, 10ms);
}

// Provider 0002, bound from 127.0.0.5 before the refusal and expecting four messages: two
// delivered and acknowledged before it, two after (checkStillWorking).
class OtherProvider {
 public:
  explicit OtherProvider(NpacdProcess& npacd) : npacd_(npacd) {
    const fs::path key = npacd.provision("0002");
    run_ = npacd.sim("0002", key, {"--from", "127.0.0.5", "--expect", "4", "--duration", "20s"});
    REQUIRE(npacd.waitForAssociations(1));
    REQUIRE(allAcknowledged(npacd, npacd.submit("0002", "before", 2)));
  }

  void checkStillWorking() {
    const std::vector<std::int64_t> after = npacd_.submit("0002", "after", 2);
    REQUIRE(run_->wait() == 0);
    CHECK(run_->result["totals"]["received"] == 4);
    CHECK(run_->result["associations"][0]["end"]["reason"] == "released");
    CHECK(allAcknowledged(npacd_, after));
  }

 private:
  NpacdProcess& npacd_;
  std::unique_ptr<SimRun> run_;
};

// The association log rows of `spid` that refused a bind from `nsap` with `code`.
std::vector<npac::db::AssociationEvent> rejections(const NpacdProcess& npacd, const std::string& spid,
                                                   const std::string& nsap, const std::string& code) {
  auto db = npac::db::Database::open((npacd.dir() / "npacd.db").string());
  REQUIRE(db.isOk());
  auto events = npac::db::AssociationLogStore(**db).forProvider(spid, 0, std::numeric_limits<std::int64_t>::max(), 1000);
  REQUIRE(events.isOk());
  std::vector<npac::db::AssociationEvent> out;
  for (const auto& e : *events) {
    if (e.kind == npac::db::AssociationEventKind::kReject && e.diagnostic == code && hexOf(e.nsap) == nsap) {
      out.push_back(e);
    }
  }
  return out;
}

// Runs a sim for `spid` from `from` whose bind npacd must refuse with `why`, and checks
// every trace of the refusal. `args` are added to the sim's command line.
void expectRefusal(NpacdProcess& npacd, const std::string& spid, const fs::path& key, const std::string& from,
                   std::vector<std::string> args, as::BindDiagnostic why) {
  const std::string code(as::toString(why));
  const int acse = static_cast<int>(as::acseDiagnostic(why));
  INFO("refusal expected: " << code);
  args.insert(args.end(), {"--from", from, "--duration", "5s"});
  auto refused = npacd.sim(spid, key, args);
  CHECK(refused->wait() == 5);
  const std::string sim_log = slurp(refused->log);
  INFO("sim stderr: " << sim_log);
  REQUIRE(refused->result.is_object());
  CHECK(refused->result["stop_reason"] == "bind-rejected");
  const Json& association = refused->result["associations"][0];
  const Json& bind = association["bind"];
  CHECK(bind["outcome"] == "rejected");
  CHECK(bind["result"] == 1);  // rejected-permanent (X.227 §7.1.5.4)
  CHECK(bind["diagnostic_source"] == "acse-service-user");
  CHECK(bind["diagnostic"] == acse);
  CHECK(association["end"].is_null());
  CHECK(sim_log.find("result 1 (rejected-permanent), acse-service-user diagnostic " + std::to_string(acse)) !=
        std::string::npos);
  // The AARE also carries the exact reason (LnpBindRefusal), which the provider sees.
  // (`bind` is const: operator[] on a missing key would be undefined, hence contains().)
  REQUIRE(bind.contains("refusal"));
  CHECK(bind["refusal"]["reason"] == code);
  CHECK(bind["refusal"]["text"].get<std::string>().rfind(std::string(as::describe(why)), 0) == 0);
  CHECK(sim_log.find(": " + code + " — ") != std::string::npos);

  const std::string nsap = association["nsap"].get<std::string>();
  const std::string log = npacd.log();
  CHECK(log.find("bind rejected: SPID " + spid + " NSAP " + nsap) != std::string::npos);
  CHECK(log.find("(" + code + ")") != std::string::npos);

  const auto rows = rejections(npacd, spid, nsap, code);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].reason.rfind(std::string(as::describe(why)), 0) == 0);
  CHECK_FALSE(rows[0].association_id.has_value());
}

// Adds key list 2 key 1 for `spid` with the public half of `key` and the given validity.
void addSecondKey(NpacdProcess& npacd, const std::string& spid, const fs::path& key, std::int64_t not_before,
                  std::int64_t not_after) {
  Reply added = npacd.call(http::verb::post, "/v1/providers/" + spid + "/keys",
                           Json{{"key_list_id", 2},
                                {"key_id", 1},
                                {"algorithm", "ed25519"},
                                {"public_key_pem", slurp(key.string() + ".pub")},
                                {"not_before", not_before},
                                {"not_after", not_after}});
  REQUIRE(added.status == 201);
}

constexpr std::int64_t kHourMs = 3'600'000;

}  // namespace

TEST_CASE("a bind whose system type is not the provider's is refused with system-type-mismatch while another provider keeps working") {
  NpacdProcess npacd;
  OtherProvider other(npacd);
  auto key = npacd.provision("0001");  // an SOA
  expectRefusal(npacd, "0001", key, "127.0.0.2",
                {"--system-type", "lsms", "--functions", "lsms-data-download,notifications"},
                as::BindDiagnostic::kSystemTypeMismatch);
  CHECK(npacd.waitForAssociations(1));
  other.checkStillWorking();
}

TEST_CASE("a bind asking for a function its system type may not use is refused with function-mask-not-allowed while another provider keeps working") {
  NpacdProcess npacd;
  OtherProvider other(npacd);
  auto key = npacd.provision("0001");  // an SOA: lsms-data-download is an LSMS function
  expectRefusal(npacd, "0001", key, "127.0.0.2", {"--functions", "soa-management,lsms-data-download"},
                as::BindDiagnostic::kFunctionMaskNotAllowed);
  CHECK(npacd.waitForAssociations(1));
  other.checkStillWorking();
}

TEST_CASE("a bind naming an unknown key list or key id is refused with unknown-key while another provider keeps working") {
  NpacdProcess npacd;
  OtherProvider other(npacd);
  auto key = npacd.provision("0001");  // key list 1 key 1 only
  expectRefusal(npacd, "0001", key, "127.0.0.2", {"--key-list", "7"}, as::BindDiagnostic::kUnknownKey);
  expectRefusal(npacd, "0001", key, "127.0.0.3", {"--key-list", "1", "--key-id", "2"},
                as::BindDiagnostic::kUnknownKey);
  CHECK(npacd.waitForAssociations(1));
  other.checkStillWorking();
}

TEST_CASE("a key revoked through the admin API refuses the next bind with key-revoked while another provider keeps working") {
  NpacdProcess npacd;
  OtherProvider other(npacd);
  auto key = npacd.provision("0001");
  // The key binds before the revocation.
  auto before = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "1", "--duration", "10s"});
  REQUIRE(npacd.waitForAssociations(2));
  npacd.submit("0001", "k", 1);
  REQUIRE(before->wait() == 0);

  Reply revoked = npacd.call(http::verb::post, "/v1/providers/0001/keys/1/1/revoke", Json{{"actor", "t"}});
  REQUIRE(revoked.status == 200);
  CHECK(revoked.body["state"] == "revoked");
  expectRefusal(npacd, "0001", key, "127.0.0.3", {}, as::BindDiagnostic::kKeyRevoked);
  CHECK(npacd.waitForAssociations(1));
  other.checkStillWorking();
}

TEST_CASE("a bind with a key past its not_after is refused with key-expired while another provider keeps working") {
  NpacdProcess npacd;
  OtherProvider other(npacd);
  auto key = npacd.provision("0001");
  addSecondKey(npacd, "0001", key, nowMs() - 2 * kHourMs, nowMs() - kHourMs);
  expectRefusal(npacd, "0001", key, "127.0.0.2", {"--key-list", "2"}, as::BindDiagnostic::kKeyExpired);
  CHECK(npacd.waitForAssociations(1));
  other.checkStillWorking();
}

TEST_CASE("a bind with a key before its not_before is refused with key-not-yet-valid while another provider keeps working") {
  NpacdProcess npacd;
  OtherProvider other(npacd);
  auto key = npacd.provision("0001");
  addSecondKey(npacd, "0001", key, nowMs() + kHourMs, nowMs() + 2 * kHourMs);
  expectRefusal(npacd, "0001", key, "127.0.0.2", {"--key-list", "2"}, as::BindDiagnostic::kKeyNotYetValid);
  CHECK(npacd.waitForAssociations(1));
  other.checkStillWorking();
}

TEST_CASE("a departure time outside departure_time_window either way is refused with departure-time-out-of-window and one inside binds while another provider keeps working") {
  NpacdProcess npacd;
  OtherProvider other(npacd);
  auto key = npacd.provision("0001");  // departure_time_window: 5 min by default
  expectRefusal(npacd, "0001", key, "127.0.0.2", {"--departure-offset", "-10m"},
                as::BindDiagnostic::kDepartureTimeOutOfWindow);
  expectRefusal(npacd, "0001", key, "127.0.0.3", {"--departure-offset", "+10m"},
                as::BindDiagnostic::kDepartureTimeOutOfWindow);
  CHECK(npacd.waitForAssociations(1));

  auto skewed = npacd.sim("0001", key, {"--from", "127.0.0.4", "--departure-offset=-2m", "--expect", "1",
                                        "--duration", "10s"});
  REQUIRE(npacd.waitForAssociations(2));
  npacd.submit("0001", "s", 1);
  CHECK(skewed->wait() == 0);

  // The window is read live: narrowed to 1 min, the same 2 min skew is refused.
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/departure_time_window", Json{{"value", "1m"}}).status == 200);
  expectRefusal(npacd, "0001", key, "127.0.0.6", {"--departure-offset", "-2m"},
                as::BindDiagnostic::kDepartureTimeOutOfWindow);
  other.checkStillWorking();
}

TEST_CASE("a bind repeating or going below the key's last sequence number is refused with sequence-replayed while another provider keeps working") {
  NpacdProcess npacd;
  OtherProvider other(npacd);
  auto key = npacd.provision("0001");
  auto first = npacd.sim("0001", key, {"--from", "127.0.0.2", "--sequence", "5000", "--expect", "1",
                                       "--duration", "10s"});
  REQUIRE(npacd.waitForAssociations(2));
  npacd.submit("0001", "q", 1);
  REQUIRE(first->wait() == 0);
  CHECK(first->result["associations"][0]["sequence_number"] == 5000);
  REQUIRE(npacd.waitForAssociations(1));

  expectRefusal(npacd, "0001", key, "127.0.0.3", {"--sequence", "5000"}, as::BindDiagnostic::kSequenceReplayed);
  expectRefusal(npacd, "0001", key, "127.0.0.4", {"--sequence", "4999"}, as::BindDiagnostic::kSequenceReplayed);
  CHECK(npacd.waitForAssociations(1));
  other.checkStillWorking();

  // The next number up binds: the refusals were about the number, not the key.
  auto next = npacd.sim("0001", key, {"--from", "127.0.0.6", "--sequence", "5001", "--expect", "1",
                                      "--duration", "10s"});
  REQUIRE(npacd.waitForAssociations(1));
  npacd.submit("0001", "n", 1);
  CHECK(next->wait() == 0);
}
