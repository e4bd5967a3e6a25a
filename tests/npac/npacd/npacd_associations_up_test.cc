// npacd end to end: npacd_associations_up, one gauge per provider counting every live
// association that is up — bound, congested, silent or recovering, not releasing — and
// the example alert of docs/OPERATIONS.md "Metrics" that reads it. A provider whose
// associations are all congested is slow, not unbound: on-call must not be told it is
// down. Real npacd (the silent case in-process on a manual clock, in_process_npacd.h),
// real npac-soa-sim (`--silent`: an association that never answers,
// docs/SOA-SIM.md), real SQLite file, loopback TCP; the alert is evaluated by promtool
// (Debian package prometheus) over the values of a real scrape.
#include "tests/npac/npacd/in_process_npacd.h"
#include "tests/npac/npacd/metrics_scrape.h"
#include "tests/npac/npacd/multi_provider_fixture.h"

#include <cstdio>
#include <set>
#include "tests/support/test_paths.h"

using namespace npacd_test;

namespace {

// The state GET /v1/associations lists for each live association of `spid`.
std::multiset<std::string> statesOf(const NpacdClient& npacd, const std::string& spid) {
  std::multiset<std::string> states;
  for (const Json& a : liveAssociations(npacd, spid)) states.insert(a.value("state", ""));
  return states;
}

// Provider `spid` with SRR on, bound over three associations that never answer, and
// congestion_window 1: three notifications fill the three windows, the other fourteen
// wait `all-congested` (the picture: "Associations up 0" next to
// "notifications: all-congested (14)"). response_timeout keeps its 15-minute default, so
// the associations stay congested for the whole test.
std::unique_ptr<SimRun> congestAll(NpacdProcess& npacd, const std::string& spid) {
  const fs::path key = npacd.provision(spid, /*srr=*/true);
  REQUIRE(setTunable(npacd, "congestion_window", 1, spid) == 200);
  auto sim = npacd.sim(spid, key, {"--from", "127.0.0.2", "--from", "127.0.0.3", "--from", "127.0.0.4",
                                   "--silent", "1", "--silent", "2", "--silent", "3", "--keep-running",
                                   "--duration", "60s"});
  REQUIRE(npacd.waitForAssociations(3));
  npacd.submit(spid, "c", 17);
  const std::multiset<std::string> congested{"congested", "congested", "congested"};
  const bool all_congested = eventually([&] { return statesOf(npacd, spid) == congested; }, 10s);
  INFO("npacd log:\n" << npacd.log());
  REQUIRE(all_congested);
  return sim;
}

// The rule groups of docs/OPERATIONS.md's example alerts (the yaml block after
// "**Example alerts (PromQL).**"), as written there.
std::string exampleAlerts() {
  const std::string doc = slurp(fs::path(npac::testing::sourceDir()) / "docs" / "OPERATIONS.md");
  const std::size_t heading = doc.find("**Example alerts (PromQL).**");
  REQUIRE(heading != std::string::npos);
  const std::string open = "```yaml\n";
  const std::size_t begin = doc.find(open, heading);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = doc.find("\n```", begin + open.size());
  REQUIRE(end != std::string::npos);
  return doc.substr(begin + open.size(), end + 1 - begin - open.size());
}

// promtool input series holding each sample of `families` in `scrape` constant for 20
// minutes (one value a minute): what Prometheus would have stored scraping this npacd.
std::string inputSeries(const std::string& scrape, const std::set<std::string>& families) {
  std::string out;
  std::istringstream lines(scrape);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.rfind(' ');
    const std::string series = line.substr(0, space);
    if (families.count(series.substr(0, series.find('{'))) == 0) continue;
    const auto value = static_cast<long long>(std::stod(line.substr(space + 1)));
    out += "      - series: '" + series + "'\n        values: '" + std::to_string(value) + "+0x20'\n";
  }
  return out;
}

// `promtool test rules` on `tests` (with the example alerts as alerts.yml beside it): its
// exit code, with its output in `*out`.
int promtoolTestRules(const NpacdProcess& npacd, const std::string& tests, std::string* out) {
  std::ofstream(npacd.dir() / "alerts.yml", std::ios::binary | std::ios::trunc) << exampleAlerts();
  const fs::path file = npacd.dir() / "alerts_test.yml";
  std::ofstream(file, std::ios::binary | std::ios::trunc) << tests;
  const std::string command = "/usr/bin/promtool test rules " + file.string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) *out += buffer;
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("Three congested associations count as three up in npacd_associations_up and none as bound") {
  NpacdProcess npacd;
  auto sim = congestAll(npacd, "0001");
  const std::string text = scrape(npacd);
  INFO(text);
  CHECK(valueOr0(text, "npacd_associations_up", {{"spid", "0001"}}) == 3);
  CHECK(valueOr0(text, "npacd_associations", {{"spid", "0001"}, {"state", "congested"}}) == 3);
  CHECK(valueOr0(text, "npacd_associations", {{"spid", "0001"}, {"state", "bound"}}) == 0);
  CHECK(valueOr0(text, "npacd_queue_messages", {{"spid", "0001"}, {"state", "queued"}}) == 14);
}

TEST_CASE("A silent association counts as up in npacd_associations_up") {
  InProcessNpacd npacd;  // a manual clock: response_timeout is moved through
  const fs::path key = npacd.provision("0001");
  // Silent once a request passes response_timeout (2 s); aborted only after the tenth
  // (docs/OPERATIONS.md "Outstanding requests, congestion and timeouts").
  REQUIRE(setTunable(npacd, "response_timeout", "2s", "0001") == 200);
  REQUIRE(setTunable(npacd, "retry_attempts", 10, "0001") == 200);
  auto sim = npacd.sim("0001", key, {"--from", "127.0.0.2", "--silent", "1", "--keep-running", "--duration", "60s"});
  REQUIRE(npacd.waitForAssociations(1));
  const std::vector<std::int64_t> ids = npacd.submit("0001", "s", 1);
  REQUIRE(eventually([&] { return npacd.messageState(ids.at(0)) == "sent"; }, 10s));
  npacd.advance(2s);
  const bool silent = eventually([&] { return statesOf(npacd, "0001") == std::multiset<std::string>{"silent"}; }, 10s);
  INFO("npacd log:\n" << npacd.log());
  REQUIRE(silent);
  const std::string text = scrape(npacd);
  INFO(text);
  CHECK(valueOr0(text, "npacd_associations", {{"spid", "0001"}, {"state", "silent"}}) == 1);
  CHECK(valueOr0(text, "npacd_associations_up", {{"spid", "0001"}}) == 1);
}

TEST_CASE("Releasing associations do not count as up in npacd_associations_up") {
  NpacdProcess npacd;
  auto sim = congestAll(npacd, "0001");
  // Disabled: the associations are released once their outstanding requests are answered,
  // which these never are (docs/OPERATIONS.md "The console": Disable).
  REQUIRE(npacd.call(http::verb::post, "/v1/providers/0001/disable").status == 200);
  const std::multiset<std::string> releasing{"releasing", "releasing", "releasing"};
  const bool all_releasing = eventually([&] { return statesOf(npacd, "0001") == releasing; }, 10s);
  INFO("npacd log:\n" << npacd.log());
  REQUIRE(all_releasing);
  const std::string text = scrape(npacd);
  INFO(text);
  CHECK(valueOr0(text, "npacd_associations", {{"spid", "0001"}, {"state", "releasing"}}) == 3);
  CHECK(sampleValue(text, "npacd_associations_up", {{"spid", "0001"}}) == 0.0);
}

TEST_CASE("A provisioned provider that never bound reads 0 in npacd_associations_up") {
  NpacdProcess npacd;
  npacd.provision("0001");
  npacd.provision("0002");
  const std::string text = scrape(npacd);
  INFO(text);
  CHECK(sampleValue(text, "npacd_associations_up", {{"spid", "0001"}}) == 0.0);
  CHECK(sampleValue(text, "npacd_associations_up", {{"spid", "0002"}}) == 0.0);
}

TEST_CASE("The example alert NpacdProviderUnbound fires for a provider with nothing up, not for one whose associations are congested") {
  NpacdProcess npacd;
  auto sim = congestAll(npacd, "0001");
  npacd.provision("0002");  // provisioned, never bound, with messages waiting
  npacd.submit("0002", "u", 2);
  const std::string text = scrape(npacd);
  const std::string tests =
      "rule_files: [alerts.yml]\n"
      "evaluation_interval: 1m\n"
      "tests:\n"
      "  - interval: 1m\n"
      "    input_series:\n" +
      inputSeries(text, {"npacd_associations_up", "npacd_associations", "npacd_queue_messages"}) +
      "    alert_rule_test:\n"
      "      - eval_time: 10m\n"
      "        alertname: NpacdProviderUnbound\n"
      "        exp_alerts:\n"
      "          - exp_labels: {spid: \"0002\"}\n";
  std::string verdict;
  const int code = promtoolTestRules(npacd, tests, &verdict);
  INFO(tests);
  INFO("promtool: " << verdict);
  CHECK(code == 0);
}
