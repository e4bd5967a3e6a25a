// Every number npacd reads from its command line has a range (npac/npacd/config.h
// kNumberOptions, checked as the option is parsed, command_line.h): a value outside it —
// -1, 0 where 0 is no limit, more digits than 64 bits hold — stops npacd with exit 2
// naming the option, before anything is created (issue 24: -1 once turned the admin API's
// connection limits off).
#include "tests/npac/npacd/npacd_fixture.h"

#include "npac/npacd/config.h"

using namespace npacd_test;

namespace {

struct Refusal {
  int exit_code = -1;
  std::string output;
  bool created = false;  // whether the database file exists afterwards
};

// npacd started with `extra` on a fresh database path: how it ended.
Refusal startWith(const std::vector<std::string>& extra) {
  const fs::path dir = fs::temp_directory_path() / label("npacd-option-ranges-test-", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path log = dir / "npacd.log";
  std::vector<std::string> argv{binDir() + "/npacd", "--db", (dir / "npacd.db").string(), "--listen", "127.0.0.1:0",
                                "--api", "127.0.0.1:0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Refusal r;
  r.exit_code = waitFor(spawn(argv, log), 10s);
  r.output = slurp(log);
  r.created = fs::exists(dir / "npacd.db");
  fs::remove_all(dir);
  return r;
}

// Checks that --`option`=`value` is refused with the option's range.
void checkRefused(const std::string& option, const std::string& value) {
  const npac::npacd::IntegerRange range = *npac::npacd::numberRangeOf(option);
  const Refusal r = startWith({"--" + option + "=" + value});
  INFO("--" << option << "=" << value << ": " << r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("npacd: --" + option + ": must be an integer from " + std::to_string(range.min) +
                                       " to " + std::to_string(range.max) + ", got '" + value + "'"));
  CHECK_FALSE(r.created);
}

}  // namespace

TEST_CASE("npacd refuses -1 or 0 or an over-long number for an admin API connection limit and names the option") {
  for (const char* option : {"api-max-connections", "api-max-per-client", "api-max-per-token"}) {
    for (const char* value : {"-1", "0", "99999999999999999999999", "65537"}) checkRefused(option, value);
  }
  // 0 is a valid reserve; -1 was once reported as 18446744073709551615.
  for (const char* value : {"-1", "99999999999999999999999", "65536"}) checkRefused("api-operator-reserve", value);
}

TEST_CASE("npacd refuses a --log-max-size or --log-max-files outside its range and names the option") {
  for (const char* value : {"-1", "0", "1023", "1099511627777", "1e6"}) checkRefused("log-max-size", value);
  for (const char* value : {"-1", "1001", "+5"}) checkRefused("log-max-files", value);
}

TEST_CASE("npacd refuses a --threads written as hexadecimal or with a sign and names the option") {
  for (const char* value : {"0x10", "+2", "-1", " 2"}) checkRefused("threads", value);
}

TEST_CASE("a number option with a leading zero is read in decimal and not as octal") {
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--threads", "010"}});
  // Logged just after the line the fixture waits for: polled, bounded.
  eventually([&] { return npacd.log().find("core: ") != std::string::npos; }, 10s);
  CHECK_THAT(npacd.log(), Catch::Contains("core: 10 threads"));  // CLI11's strtoull (base 0) made it 8
}

TEST_CASE("npacd refuses a --db-timeout outside 100ms to 10m and names the option") {
  for (const char* value : {"-1", "99ms", "11m", "99999999999999999999999s"}) {
    const Refusal r = startWith({std::string("--db-timeout=") + value});
    INFO(value << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(std::string("npacd: --db-timeout: must be a duration from 100ms to 10m (e.g. "
                                                     "2s, 500ms), got '") + value + "'"));
    CHECK_FALSE(r.created);
  }
}

TEST_CASE("npacd refuses a --listen or --api port over 65535 or a host that is no IP address before creating anything") {
  const struct {
    const char* option;
    const char* value;
    const char* reason;
  } cases[] = {{"--listen", "127.0.0.1:65536", "bad port in '127.0.0.1:65536' (a port is 0 to 65535)"},
               {"--api", "127.0.0.1:-1", "bad port in '127.0.0.1:-1' (a port is 0 to 65535)"},
               {"--listen", "localhost:10102", "'localhost' in 'localhost:10102' is not a numeric IP address"},
               {"--api", "npac.example:10180", "'npac.example' in 'npac.example:10180' is not a numeric IP address"}};
  for (const auto& c : cases) {
    const Refusal r = startWith({c.option, c.value});
    INFO(c.option << " " << c.value << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::Contains(std::string("npacd: ") + c.option + ": " + c.reason));
    CHECK_FALSE(r.created);  // a host name once created the database, then failed to listen
  }
}

TEST_CASE("npacd --help shows the range of every number option and has no number option without one") {
  const fs::path out = fs::temp_directory_path() / label("npacd-help-ranges-", getpid());
  REQUIRE(waitFor(spawn({binDir() + "/npacd", "--help"}, out), 10s) == 0);
  const std::string help = slurp(out);
  fs::remove(out);
  for (const npac::npacd::NumberOption& option : npac::npacd::kNumberOptions) {
    INFO(option.name);
    CHECK_THAT(help, Catch::Contains("--" + std::string(option.name) + " UINT:" + std::to_string(option.range.min) +
                                     ".." + std::to_string(option.range.max) + "="));
  }
  // An integer option (CLI11 types INT, UINT) without a range would show no "min..max".
  const std::regex integer_option(R"(--([a-z-]+) U?INT(:[^ =]*)?)");
  int integers = 0;
  for (std::sregex_iterator it(help.begin(), help.end(), integer_option), end; it != end; ++it) {
    INFO((*it)[0]);
    CHECK(npac::npacd::numberRangeOf((*it)[1].str()).has_value());
    ++integers;
  }
  CHECK(integers == static_cast<int>(std::size(npac::npacd::kNumberOptions)));
}
