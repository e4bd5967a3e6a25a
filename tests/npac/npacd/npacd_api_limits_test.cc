// npacd's admin API connection limits as options (--api-max-connections,
// --api-operator-reserve, --api-max-per-client, --api-max-per-token; docs/API.md
// "Connection limits"): each one changes what the running npacd admits, and values that
// cannot work are refused at start. Real npacd, real keep-alive connections on loopback,
// each client its own 127.0.0.0/8 source address.
#include "tests/npac/npacd/npacd_fixture.h"

#include "tests/npac/npacd/api/http_server_fixture.h"

using namespace npacd_test;
using npac::npacd::testing::Connection;
using npac::npacd::testing::TestReply;

namespace {

std::string errorOf(const std::optional<TestReply>& reply) { return reply ? reply->errorCode() : "closed"; }

}  // namespace

TEST_CASE("npacd --api-max-per-client 2 answers a third connection from one address too_many_connections_per_client") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--api-max-per-client", "2"}});
  const std::string auth = "Bearer " + npacd.token();
  Connection first("127.0.0.5", npacd.apiPort()), second("127.0.0.5", npacd.apiPort());
  REQUIRE(first.get("/v1/providers", auth)->status == 200);
  REQUIRE(second.get("/v1/providers", auth)->status == 200);
  Connection third("127.0.0.5", npacd.apiPort());
  std::optional<TestReply> refused = third.get("/v1/providers", auth);
  REQUIRE(refused.has_value());
  CHECK(refused->status == 503);
  CHECK(errorOf(refused) == "too_many_connections_per_client");
  Connection elsewhere("127.0.0.6", npacd.apiPort());
  CHECK(elsewhere.get("/v1/providers", auth)->status == 200);
}

TEST_CASE("npacd --api-max-per-token 2 answers a third connection with the same token too_many_connections_per_credential") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--api-max-per-token", "2"}});
  const std::string auth = "Bearer " + npacd.token();
  const std::string other = "Bearer " + tokenFor(npacd, "other", "reader");
  Connection a("127.0.0.5", npacd.apiPort()), b("127.0.0.6", npacd.apiPort()), c("127.0.0.7", npacd.apiPort());
  REQUIRE(a.get("/v1/providers", auth)->status == 200);
  REQUIRE(b.get("/v1/providers", auth)->status == 200);
  std::optional<TestReply> refused = c.get("/v1/providers", auth);
  REQUIRE(refused.has_value());
  CHECK(refused->status == 503);
  CHECK(errorOf(refused) == "too_many_connections_per_credential");
  // Another token is served from the same address.
  Connection d("127.0.0.7", npacd.apiPort());
  CHECK(d.get("/v1/providers", other)->status == 200);
}

TEST_CASE("npacd --api-max-connections 4 --api-operator-reserve 1 keeps the fourth connection for an operator") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--api-max-connections", "4", "--api-operator-reserve", "1"}});
  const std::string application = "Bearer " + tokenFor(npacd, "app", "application");
  const std::string reader = "Bearer " + tokenFor(npacd, "watcher", "reader");
  // Three long polls hold the three normal slots: none of them is idle.
  std::vector<std::unique_ptr<Connection>> polls;
  for (int i = 0; i < 3; ++i) {
    polls.push_back(std::make_unique<Connection>("127.0.0." + std::to_string(10 + i), npacd.apiPort()));
    polls.back()->send("/v1/inbound?wait=4s", application);
  }
  // The polls connected first, so npacd accepted them first (one listen backlog, FIFO):
  // a reader's fourth connection lands in the reserved slot.
  Connection fourth("127.0.0.20", npacd.apiPort());
  std::optional<TestReply> refused = fourth.get("/v1/providers", reader);
  REQUIRE(refused.has_value());
  CHECK(refused->status == 503);
  CHECK(errorOf(refused) == "operator_reserve");
  Connection operator_connection("127.0.0.21", npacd.apiPort());
  CHECK(operator_connection.get("/v1/providers", "Bearer " + npacd.token())->status == 200);
  for (auto& poll : polls) CHECK(poll->receive().has_value());  // the polls end normally
}

TEST_CASE("npacd refuses an operator reserve not below --api-max-connections and a connection limit of 0") {
  const fs::path dir = fs::temp_directory_path() / label("npacd-api-limits-test-", getpid());
  fs::create_directories(dir);
  const fs::path log = dir / "npacd.log";
  const std::string db = (dir / "npacd.db").string();
  pid_t pid = spawn({binDir() + "/npacd", "--db", db, "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0",
                     "--api-max-connections", "8", "--api-operator-reserve", "8"},
                    log);
  CHECK(waitFor(pid, 10s) == 2);
  CHECK_THAT(slurp(log), Catch::Contains("--api-operator-reserve 8 must be below --api-max-connections 8"));
  pid = spawn({binDir() + "/npacd", "--db", db, "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0",
               "--api-max-per-client", "0"},
              log);
  CHECK(waitFor(pid, 10s) == 2);
  CHECK_THAT(slurp(log), Catch::Contains("--api-max-per-client: must be an integer from 1 to 65536, got '0'"));
  CHECK_FALSE(fs::exists(db));  // refused before touching anything
  fs::remove_all(dir);
}
