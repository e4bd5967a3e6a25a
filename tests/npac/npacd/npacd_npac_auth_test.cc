// npacd end to end: the NPAC's side of mutual authentication. npacd answers every
// accepted bind with its own LnpAccessControl (systemType npac, the npac_system_id
// tunable, the signing NPAC key, its next sequence number) signed with that key; the
// simulator verifies it with the public keys exported through the admin API (the
// fixture's default) and refuses an NPAC it cannot verify. NPAC keys are created, listed,
// exported and revoked through the API and npacctl. Real binaries, SQLite, loopback.
#include "tests/npac/npacd/npacd_fixture.h"

#include <cstdio>
#include <regex>

using namespace npacd_test;

namespace {

using npac::testing::ProgramRun;

// Runs a sim for `spid` that receives one message and exits; its report.
Json bindOnce(NpacdProcess& npacd, const std::string& spid, const fs::path& key, const std::string& tag,
              std::vector<std::string> args = {}) {
  npacd.submit(spid, tag, 1);
  args.insert(args.end(), {"--expect", "1"});
  auto run = npacd.sim(spid, key, args);
  const int code = run->wait();
  INFO(slurp(run->log));
  CHECK(code == 0);
  return run->result;
}

}  // namespace

TEST_CASE("npacd creates an NPAC key at first start logs its fingerprint and audits it as npacd") {
  NpacdProcess npacd;
  Reply keys = npacd.call(http::verb::get, "/v1/npac-keys");
  REQUIRE(keys.status == 200);
  REQUIRE(keys.body["npac_keys"].size() == 1);
  const Json& key = keys.body["npac_keys"][0];
  CHECK(key["key_list_id"] == 1);
  CHECK(key["key_id"] == 1);
  CHECK(key["algorithm"] == "ed25519");
  CHECK(key["state"] == "active");
  CHECK_FALSE(key.contains("private_key_pem"));
  CHECK(keys.body["signing"] == Json{{"key_list_id", 1}, {"key_id", 1}});
  const std::string fingerprint = key["fingerprint"].get<std::string>();
  CHECK(fingerprint.rfind("SHA256:", 0) == 0);
  CHECK(npacd.log().find("created NPAC key 1/1") != std::string::npos);
  CHECK(npacd.log().find(fingerprint) != std::string::npos);
  Reply audit = npacd.call(http::verb::get, "/v1/audit-log?limit=10");
  REQUIRE(audit.status == 200);
  bool audited = false;
  for (const Json& e : audit.body["entries"]) {
    if (e["action"] == "npac-key.add" && e["actor"] == "npacd" && e["subject"] == "npac key 1/1") audited = true;
  }
  CHECK(audited);
  // A restart with a usable key creates none.
  REQUIRE(npacd.stop() == 0);
  npacd.start();
  CHECK(npacd.call(http::verb::get, "/v1/npac-keys").body["npac_keys"].size() == 1);
}

TEST_CASE("npacd signs its accepting AARE and the simulator verifies the NPAC's key and system id") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  Json report = bindOnce(npacd, "0001", key, "m");
  const Json& bind = report["associations"][0]["bind"];
  INFO(report.dump(2));
  CHECK(bind["npac_verified"] == true);
  CHECK(bind["npac"]["system_id"] == "NPAC");
  CHECK(bind["npac"]["key_list_id"] == 1);
  CHECK(bind["npac"]["key_id"] == 1);
  CHECK(bind["npac"]["sequence_number"] == 1);
}

TEST_CASE("Each bind response takes the next sequence number of the NPAC key across restarts") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  CHECK(bindOnce(npacd, "0001", key, "a")["associations"][0]["bind"]["npac"]["sequence_number"] == 1);
  CHECK(bindOnce(npacd, "0001", key, "b")["associations"][0]["bind"]["npac"]["sequence_number"] == 2);
  REQUIRE(npacd.stop() == 0);
  npacd.start();
  CHECK(bindOnce(npacd, "0001", key, "c")["associations"][0]["bind"]["npac"]["sequence_number"] == 3);
  CHECK(npacd.call(http::verb::get, "/v1/npac-keys").body["npac_keys"][0]["last_sequence"] == 3);
}

TEST_CASE("The npac_system_id tunable is the system id of npacd's bind responses") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  CHECK(npacd.call(http::verb::put, "/v1/tunables/npac_system_id", Json{{"value", "NPAC-EAST"}}).status == 400);
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/npac_system_id", Json{{"value", "NPCE"}}).status == 200);
  CHECK(bindOnce(npacd, "0001", key, "m")["associations"][0]["bind"]["npac"]["system_id"] == "NPCE");
}

TEST_CASE("A simulator holding another NPAC key refuses npacd's bind response and exits 9") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  const fs::path foreign = npacd.dir() / "foreign.pem";
  pid_t kg = spawn({binDir() + "/npac-soa-sim", "keygen", "--out", foreign.string()}, npacd.dir() / "keygen.log");
  REQUIRE(waitFor(kg, 20s) == 0);
  auto run = npacd.sim("0001", key, {"--expect", "1", "--npac-key", foreign.string() + ".pub"});
  CHECK(run->wait() == 9);
  INFO(slurp(run->log));
  const Json& bind = run->result["associations"][0]["bind"];
  CHECK(bind["npac_verified"] == false);
  CHECK(bind["npac_reason"].get<std::string>().find("key list 1 key 1") != std::string::npos);
  CHECK(slurp(run->log).find("the NPAC is not authenticated") != std::string::npos);
  // npacd sees the provider's ABRT: the association is gone.
  CHECK(npacd.waitForAssociations(0));
}

TEST_CASE("A revoked NPAC key stops signing new binds and the associations it signed stay up") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001", true);
  const fs::path old_keys = npacd.exportNpacKeys("old.pub.pem");
  // Bound under key 1/1 and kept up: two messages, one before the rotation and one after.
  npacd.submit("0001", "before", 1);
  auto first = npacd.sim("0001", key, {"--from", "127.0.0.2", "--expect", "2", "--duration", "20s"});
  REQUIRE(npacd.waitForAssociations(1));
  // The rotation: add 2/1, export it to providers, revoke 1/1.
  REQUIRE(npacd.call(http::verb::post, "/v1/npac-keys", Json{{"key_list_id", 2}, {"key_id", 1}}).status == 201);
  const fs::path both = npacd.exportNpacKeys("both.pub.pem");
  REQUIRE(npacd.call(http::verb::post, "/v1/npac-keys/1/1/revoke", Json::object()).status == 200);
  Reply listed = npacd.call(http::verb::get, "/v1/npac-keys");
  CHECK(listed.body["signing"] == Json{{"key_list_id", 2}, {"key_id", 1}});

  auto second = npacd.sim("0001", key, {"--from", "127.0.0.3", "--expect", "1", "--npac-key", both.string()});
  REQUIRE(npacd.waitForAssociations(2));
  npacd.submit("0001", "after", 2);  // round robin: one to each association
  CHECK(second->wait() == 0);
  INFO(slurp(second->log));
  CHECK(second->result["associations"][0]["bind"]["npac"]["key_list_id"] == 2);
  CHECK(first->wait() == 0);
  INFO(slurp(first->log));
  CHECK(first->result["associations"][0]["bind"]["npac"]["key_list_id"] == 1);
  CHECK(first->result["associations"][0]["received"] == 2);

  // A provider that never installed the new key refuses the NPAC from now on.
  auto stale = npacd.sim("0001", key, {"--from", "127.0.0.4", "--expect", "1", "--npac-key", old_keys.string()});
  CHECK(stale->wait() == 9);
}

TEST_CASE("With no usable NPAC key npacd refuses binds saying so") {
  NpacdProcess npacd;
  const fs::path key = npacd.provision("0001");
  REQUIRE(npacd.call(http::verb::post, "/v1/npac-keys/1/1/revoke", Json::object()).status == 200);
  auto run = npacd.sim("0001", key, {"--expect", "1", "--no-npac-verify"});
  CHECK(run->wait() == 5);
  INFO(slurp(run->log));
  CHECK(run->result["associations"][0]["bind"]["refusal"]["reason"] == "npac-key-unavailable");
  CHECK(npacd.log().find("cannot sign the bind response") != std::string::npos);
}

TEST_CASE("POST npac-keys generates a pair whose public half is exported and whose private half never is") {
  NpacdProcess npacd;
  Reply added = npacd.call(http::verb::post, "/v1/npac-keys",
                           Json{{"key_list_id", 1}, {"key_id", 2}, {"algorithm", "rsa-sha256"},
                                {"not_after", "2099-01-01T00:00:00Z"}});
  REQUIRE(added.status == 201);
  CHECK(added.body["algorithm"] == "rsa-sha256");
  CHECK(added.body["not_after"] == "2099-01-01T00:00:00.000Z");
  CHECK(added.body["public_key_pem"].get<std::string>().rfind("-----BEGIN PUBLIC KEY-----", 0) == 0);
  CHECK_FALSE(added.body.contains("private_key_pem"));
  Reply exported = npacd.call(http::verb::get, "/v1/npac-keys/1/2/public");
  REQUIRE(exported.status == 200);
  CHECK(exported.body["public_key_pem"] == added.body["public_key_pem"]);
  CHECK(exported.body["fingerprint"] == added.body["fingerprint"]);
  CHECK(exported.body.dump().find("PRIVATE") == std::string::npos);
  CHECK(npacd.call(http::verb::get, "/v1/npac-keys").body.dump().find("PRIVATE") == std::string::npos);
  Reply audit = npacd.call(http::verb::get, "/v1/audit-log?limit=5");
  REQUIRE(audit.status == 200);
  CHECK(audit.body["entries"][0]["action"] == "npac-key.add");
  CHECK(audit.body["entries"][0]["actor"] == "npacd-initial");
  CHECK(audit.body.dump().find("PRIVATE") == std::string::npos);
}

TEST_CASE("Malformed npac-keys requests are 400 naming what is wrong") {
  NpacdProcess npacd;
  auto post = [&](const Json& body) { return npacd.call(http::verb::post, "/v1/npac-keys", body); };
  Reply no_key = post(Json{{"key_list_id", 1}});
  CHECK(no_key.status == 400);
  CHECK(no_key.body["error"]["message"].get<std::string>().find("key_id") != std::string::npos);
  CHECK(post(Json{{"key_list_id", -1}, {"key_id", 1}}).status == 400);
  CHECK(post(Json{{"key_list_id", 2147483648LL}, {"key_id", 1}}).status == 400);
  CHECK(post(Json{{"key_list_id", "1"}, {"key_id", 1}}).status == 400);
  Reply algorithm = post(Json{{"key_list_id", 1}, {"key_id", 3}, {"algorithm", "dsa"}});
  CHECK(algorithm.status == 400);
  CHECK(algorithm.body["error"]["message"].get<std::string>().find("algorithm") != std::string::npos);
  CHECK(post(Json{{"key_list_id", 1}, {"key_id", 3}, {"not_before", "yesterday"}}).status == 400);
  CHECK(post(Json{{"key_list_id", 1}, {"key_id", 3}, {"not_before", "2030-01-01T00:00:00Z"},
                  {"not_after", "2029-01-01T00:00:00Z"}})
            .status == 400);
  CHECK(post(Json::array({1, 2})).status == 400);
  CHECK(npacd.call(http::verb::get, "/v1/npac-keys/x/1/public").status == 400);
  CHECK(npacd.call(http::verb::post, "/v1/npac-keys/1/99999999999/revoke", Json::object()).status == 400);
  CHECK(npacd.call(http::verb::get, "/v1/npac-keys").body["npac_keys"].size() == 1);
}

TEST_CASE("Unknown NPAC keys are 404 and a duplicate is 409") {
  NpacdProcess npacd;
  Reply unknown = npacd.call(http::verb::get, "/v1/npac-keys/7/7/public");
  CHECK(unknown.status == 404);
  CHECK(unknown.body["error"]["code"] == "key_not_found");
  CHECK(npacd.call(http::verb::post, "/v1/npac-keys/7/7/revoke", Json::object()).status == 404);
  CHECK(npacd.call(http::verb::post, "/v1/npac-keys", Json{{"key_list_id", 1}, {"key_id", 1}}).status == 409);
  CHECK(npacd.call(http::verb::delete_, "/v1/npac-keys").status == 405);
}

TEST_CASE("npacctl npac-key add list export and revoke manage the NPAC keys") {
  NpacdProcess npacd;
  ProgramRun added = npacctlOn(npacd, "npac-key add --list 1 --key 2 --actor ops");
  INFO(added.output);
  REQUIRE(added.exit_code == 0);
  CHECK(added.output.find("added NPAC key 1/2 ed25519") != std::string::npos);
  ProgramRun listed = npacctlOn(npacd, "npac-key list");
  INFO(listed.output);
  REQUIRE(listed.exit_code == 0);
  CHECK(std::regex_search(listed.output, std::regex(R"(\n1\s+2\s+ed25519\s+active\s+\S+\s+\S+\s+0\s+yes)")));
  const fs::path out = npacd.dir() / "exported.pub.pem";
  ProgramRun exported = npacctlOn(npacd, "npac-key export 1 2 --out " + out.string());
  INFO(exported.output);
  REQUIRE(exported.exit_code == 0);
  CHECK(slurp(out) == npacd.call(http::verb::get, "/v1/npac-keys/1/2/public").body["public_key_pem"].get<std::string>());
  ProgramRun revoked = npacctlOn(npacd, "npac-key revoke 1 2 --actor ops");
  REQUIRE(revoked.exit_code == 0);
  CHECK(revoked.output.find("revoked NPAC key 1/2") != std::string::npos);
  CHECK(npacd.call(http::verb::get, "/v1/npac-keys").body["signing"] == Json{{"key_list_id", 1}, {"key_id", 1}});
  ProgramRun missing = npacctlOn(npacd, "npac-key revoke 9 9 --actor ops");
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find("key_not_found") != std::string::npos);
}
