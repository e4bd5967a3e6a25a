// npacd's command line: endpoints, and the refusal to start on a database it cannot open.
#include "tests/npac/npacd/npacd_fixture.h"

#include "npac/npacd/config.h"

using namespace npacd_test;
using npac::npacd::parseEndpoint;

TEST_CASE("an endpoint host:port splits into its host and port") {
  auto endpoint = parseEndpoint("127.0.0.1:10102");
  REQUIRE(endpoint.isOk());
  CHECK(endpoint->host == "127.0.0.1");
  CHECK(endpoint->port == 10102);
}

TEST_CASE("an endpoint without a port, with a bad port or over 65535 is refused with a reason") {
  auto no_port = parseEndpoint("127.0.0.1");
  REQUIRE_FALSE(no_port.isOk());
  CHECK(no_port.status().code() == npac::StatusCode::kBadOption);
  CHECK(no_port.status().message().find("host:port") != std::string::npos);
  CHECK_FALSE(parseEndpoint("127.0.0.1:").isOk());
  auto bad_port = parseEndpoint("127.0.0.1:12x");
  REQUIRE_FALSE(bad_port.isOk());
  CHECK(bad_port.status().message().find("bad port") != std::string::npos);
  CHECK_FALSE(parseEndpoint("127.0.0.1:70000").isOk());
}

TEST_CASE("npacd refuses to start on a database it cannot open and says why") {
  const fs::path dir = fs::temp_directory_path() / label("npacd-config-test-", getpid());
  fs::create_directories(dir);
  const fs::path not_a_db = dir / "garbage.db";
  {
    std::ofstream out(not_a_db);
    out << std::string(8192, 'x');
  }
  const fs::path log = dir / "npacd.log";
  pid_t pid = spawn({binDir() + "/npacd", "--db", not_a_db.string(), "--listen", "127.0.0.1:0",
                     "--api", "127.0.0.1:0"},
                    log);
  CHECK(waitFor(pid, 10s) == 2);
  CHECK(slurp(log).find("npacd: cannot open the database:") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("only numeric 127.0.0.0/8 and ::1 addresses count as loopback") {
  using npac::npacd::isLoopbackAddress;
  CHECK(isLoopbackAddress("127.0.0.1"));
  CHECK(isLoopbackAddress("127.0.0.9"));
  CHECK(isLoopbackAddress("::1"));
  CHECK_FALSE(isLoopbackAddress("0.0.0.0"));
  CHECK_FALSE(isLoopbackAddress("10.1.2.3"));
  CHECK_FALSE(isLoopbackAddress("localhost"));  // a name could resolve anywhere
}

TEST_CASE("npacd refuses an admin API on a non-loopback address without TLS") {
  const fs::path dir = fs::temp_directory_path() / label("npacd-api-remote-test-", getpid());
  fs::create_directories(dir);
  const fs::path log = dir / "npacd.log";
  pid_t pid = spawn({binDir() + "/npacd", "--db", (dir / "npacd.db").string(), "--listen", "127.0.0.1:0",
                     "--api", "0.0.0.0:0"},
                    log);
  CHECK(waitFor(pid, 10s) == 2);
  CHECK(slurp(log).find("--api 0.0.0.0:0 is not a loopback address (127.0.0.0/8, ::1): the admin API's bearer "
                        "tokens would cross the network in the clear; give --api-cert and --api-key") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "npacd.db"));  // refused before touching anything
  fs::remove_all(dir);
}

TEST_CASE("npacd no longer knows --api-allow-remote") {
  const fs::path dir = fs::temp_directory_path() / label("npacd-api-allow-remote-test-", getpid());
  fs::create_directories(dir);
  const fs::path log = dir / "npacd.log";
  pid_t pid = spawn({binDir() + "/npacd", "--db", (dir / "npacd.db").string(), "--listen", "127.0.0.1:0",
                     "--api", "0.0.0.0:0", "--api-allow-remote"},
                    log);
  CHECK(waitFor(pid, 10s) == 2);
  CHECK(slurp(log).find("--api-allow-remote") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "npacd.db"));
  fs::remove_all(dir);
}

TEST_CASE("a number option's text is decimal digits within its range and nothing else") {
  using npac::npacd::parseInteger;
  std::uint64_t value = 0;
  CHECK(parseInteger("64", {1, 64}, &value).empty());
  CHECK(value == 64);
  CHECK(parseInteger("010", {1, 64}, &value).empty());
  CHECK(value == 10);  // decimal: CLI11's strtoull with base 0 reads 8
  CHECK(parseInteger("18446744073709551615", {0, UINT64_MAX}, &value).empty());
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "0x10", "1e3", "1_0", "65", "0", "18446744073709551616",
                          "99999999999999999999999"}) {
    INFO(bad);
    CHECK(parseInteger(bad, {1, 64}, &value) == std::string("must be an integer from 1 to 64, got '") + bad + "'");
  }
}

TEST_CASE("an endpoint names a numeric IP address and a port from 0 to 65535") {
  using npac::npacd::checkEndpoint;
  CHECK(checkEndpoint("127.0.0.1:0").empty());
  CHECK(checkEndpoint("::1:10180").empty());
  CHECK(checkEndpoint("0.0.0.0:65535").empty());
  CHECK(checkEndpoint("127.0.0.1:65536") == "bad port in '127.0.0.1:65536' (a port is 0 to 65535)");
  CHECK(checkEndpoint("127.0.0.1:+1") == "bad port in '127.0.0.1:+1' (a port is 0 to 65535)");
  CHECK(checkEndpoint("localhost:102") ==
        "'localhost' in 'localhost:102' is not a numeric IP address (e.g. 127.0.0.1, ::1, 0.0.0.0)");
  CHECK(checkEndpoint("102") == "expected host:port, got '102'");
}
