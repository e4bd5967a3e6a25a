// `npacctl plan` on bad scenario input: every required step field, every field that a
// step or policy would silently ignore, and the bounds on the plan's size. Each refusal
// is exit status 1 with "npacctl plan: FILE: <JSON path>: <reason>" on stderr, as
// docs/DISPATCH.md "Scenario files" promises. Runs the real binary from $NPAC_BIN.
#include <catch2/catch.hpp>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/npac/npacctl/npacctl_plan_fixture.h"
#include "tests/support/test_paths.h"

using npac::test::PlanRun;
using npac::test::runPlanText;

extern char** environ;

namespace {

std::string fileName() {
  static int n = 0;
  return "npacctl_plan_input_" + std::to_string(::getpid()) + "_" + std::to_string(++n) + ".json";
}

// A round-robin scenario with members A and B and the given steps.
std::string roundRobin(const std::string& steps) {
  return R"({"policy": {"name": "round-robin"}, "members": [{"name": "A"}, {"name": "B"}], "steps": [)" +
         steps + "]}";
}

// A throttle over round robin with a list whose only peer is 2.
std::string throttleList(const std::string& steps) {
  return R"({"policy": {"name": "throttle"}, "throttle": {"list": {
      "rate": {"maximum": 100, "levels": [{"onset": 80, "abatement": 60}]},
      "pending": {"maximum": 100, "levels": [{"onset": 80, "abatement": 60}]},
      "peers": [2], "reduction_percent": 50}},
    "members": [{"name": "A"}], "steps": [)" +
         steps + "]}";
}

// Runs `npacctl plan --json FILE` with its address space limited to `limit_bytes`,
// stdout to /dev/null and stderr to `err_path`; returns the raw wait status.
int runLimited(const std::string& file, rlim_t limit_bytes, const std::string& err_path) {
  const std::string bin = npac::test::planBinDir() + "/npacctl";
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const struct rlimit limit {limit_bytes, limit_bytes};
    ::setrlimit(RLIMIT_AS, &limit);
    ::dup2(::open("/dev/null", O_WRONLY), 1);
    ::dup2(::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    ::execl(bin.c_str(), bin.c_str(), "plan", "--json", file.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int raw = 0;
  REQUIRE(::waitpid(pid, &raw, 0) == pid);
  return raw;
}

// The run is refused with exit 1 and a message that names `where` and says `reason`.
void checkRefused(const std::string& text, const std::string& where, const std::string& reason) {
  PlanRun r = runPlanText(fileName(), text);
  INFO(text << "\noutput:\n" << r.out);
  CHECK(r.status == 1);
  CHECK(r.out.rfind("npacctl plan: ", 0) == 0);
  CHECK(r.out.find(": " + where + ": " + reason) != std::string::npos);
  CHECK(r.steps.empty());
}

}  // namespace

TEST_CASE("npacctl plan refuses a complete step without latency_ms", "[npacctl][input]") {
  checkRefused(roundRobin(R"({"op": "pick"}, {"op": "complete", "member": "A"})"),
               "steps[1].latency_ms", "required");
}

TEST_CASE("npacctl plan refuses a fail step that carries a latency_ms it would ignore",
          "[npacctl][input]") {
  checkRefused(roundRobin(R"({"op": "fail", "member": "A", "latency_ms": 20})"),
               "steps[0].latency_ms", "unknown field");
}

TEST_CASE("npacctl plan refuses a peer-lost step without peer", "[npacctl][input]") {
  checkRefused(throttleList(R"({"op": "peer-lost"})"), "steps[0].peer", "required");
}

TEST_CASE("npacctl plan refuses a peer-restored step without peer", "[npacctl][input]") {
  checkRefused(throttleList(R"({"op": "peer-restored"})"), "steps[0].peer", "required");
}

TEST_CASE("npacctl plan refuses a peer-counts step without peer", "[npacctl][input]") {
  checkRefused(throttleList(R"({"op": "peer-counts", "rate": 10, "pending": 5})"),
               "steps[0].peer", "required");
}

TEST_CASE("npacctl plan refuses a peer-counts step without rate", "[npacctl][input]") {
  checkRefused(throttleList(R"({"op": "peer-counts", "peer": 2, "pending": 5})"),
               "steps[0].rate", "required");
}

TEST_CASE("npacctl plan refuses a peer-counts step without pending", "[npacctl][input]") {
  checkRefused(throttleList(R"({"op": "peer-counts", "peer": 2, "rate": 10})"),
               "steps[0].pending", "required");
}

TEST_CASE("npacctl plan refuses a peer step for a peer the throttle list does not name",
          "[npacctl][input]") {
  checkRefused(throttleList(R"({"op": "peer-lost", "peer": 9})"), "steps[0].peer",
               "unknown peer 9");
}

TEST_CASE("npacctl plan refuses a peer step when the policy has no throttle list",
          "[npacctl][input]") {
  checkRefused(roundRobin(R"({"op": "peer-lost", "peer": 2})"), "steps[0].op",
               "peer-lost needs policy.name \"throttle\" with a throttle.list");
}

TEST_CASE("npacctl plan refuses a peer id that does not fit a peer id", "[npacctl][input]") {
  std::string text = throttleList("");
  const std::string from = "\"peers\": [2]";
  text.replace(text.find(from), from.size(), "\"peers\": [4294967298]");
  checkRefused(text, "throttle.list.peers[0]", "must be in 0–4294967295, got 4294967298");
}

TEST_CASE("npacctl plan refuses a throttle block under a policy that is not the throttle",
          "[npacctl][input]") {
  checkRefused(R"({"policy": {"name": "round-robin"}, "members": [],
                  "throttle": {"group": {"pending": {"maximum": 4, "levels": [{"onset": 50, "abatement": 25}]}}}})",
               "throttle", "only used with policy.name \"throttle\"");
}

TEST_CASE("npacctl plan refuses policy.inner on a policy that is not the throttle",
          "[npacctl][input]") {
  checkRefused(R"({"policy": {"name": "weighted", "inner": "lrtm"}, "members": []})",
               "policy.inner", "only used with policy.name \"throttle\"");
}

TEST_CASE("npacctl plan refuses weighted thresholds on an LRTM policy", "[npacctl][input]") {
  checkRefused(R"({"policy": {"name": "lrtm", "thresholds": {"10": 75}}, "members": []})",
               "policy.thresholds", "only used by the weighted policy");
}

TEST_CASE("npacctl plan refuses LRTM monitor settings on a round-robin policy", "[npacctl][input]") {
  checkRefused(R"({"policy": {"name": "throttle", "inner": "round-robin", "monitor_alpha": 0.5}, "members": []})",
               "policy.monitor_alpha", "only used by the lrtm policy");
}

TEST_CASE("npacctl plan refuses a threshold key that is not plain digits", "[npacctl][input]") {
  checkRefused(R"({"policy": {"name": "weighted", "thresholds": {"+10": 75}}, "members": []})",
               "policy.thresholds.+10", "the key must be a relative cost");
}

TEST_CASE("npacctl plan refuses send false through the throttle gate which records its own sends",
          "[npacctl][input]") {
  checkRefused(throttleList(R"({"op": "pick", "send": false})"), "steps[0].send",
               "the throttle gate records every send itself");
}

TEST_CASE("npacctl plan refuses a scenario whose picks add up to more than the limit quickly",
          "[npacctl][input][limits]") {
  const auto start = std::chrono::steady_clock::now();
  checkRefused(roundRobin(R"({"op": "pick", "count": 1500000}, {"op": "pick", "count": 1500000})"),
               "steps[1].count", "the scenario's picks would total 3000000, over the limit of 2000000");
  // Refused while reading the file, before a single pick: well under a second of work.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("npacctl plan refuses a single pick step over the limit", "[npacctl][input][limits]") {
  checkRefused(roundRobin(R"({"op": "pick", "count": 10000000})"), "steps[0].count",
               "must be in 1–2000000");
}

TEST_CASE("npacctl plan streams two million picks in bounded memory", "[npacctl][input][limits]") {
  const std::string path = npac::testing::binaryDir() + "/" + fileName();
  {
    std::ofstream f(path, std::ios::trunc);
    f << roundRobin(R"({"op": "pick", "count": 2000000})");
  }
  {
    const std::string bin = npac::test::planBinDir() + "/npacctl";
    std::vector<std::string> args = {bin, "plan", "--json", path};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    REQUIRE(posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    int raw = 0;
    struct rusage usage {};
    REQUIRE(::wait4(pid, &raw, 0, &usage) == pid);
    CHECK(WIFEXITED(raw));
    CHECK(WEXITSTATUS(raw) == 0);
    // Holding 2,000,000 pick objects took well over 500 MB; streamed, the process stays
    // at its start-up size (ru_maxrss is in kilobytes on Linux).
    CHECK(usage.ru_maxrss < 64 * 1024);
  }
}

TEST_CASE("npacctl plan that runs out of memory exits 1 with a message instead of aborting",
          "[npacctl][input][limits]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  WARN("skipped: a sanitizer reserves more address space than the limit this test sets");
  return;
#endif
  const rlim_t limit = 100u << 20;  // 100 MB of address space
  // Control: an ordinary scenario runs within the limit.
  const std::string example = npac::testing::sourceDir() + "/docs/examples/throttle-group-hold-release.json";
  const int control = runLimited(example, limit, npac::testing::binaryDir() + "/" + fileName() + ".err");
  REQUIRE(WIFEXITED(control));
  REQUIRE(WEXITSTATUS(control) == 0);
  // The throttle holds every priority-0 message once EPT passes 50 % of 4: 2,000,000 held
  // messages (over 100 MB in the gate's queues) cannot fit.
  const std::string path = npac::testing::binaryDir() + "/" + fileName();
  {
    std::ofstream f(path, std::ios::trunc);
    f << R"({"policy": {"name": "throttle"}, "throttle": {"group": {
             "pending": {"maximum": 4, "levels": [{"onset": 50, "abatement": 25}]}}},
           "members": [{"name": "A"}],
           "steps": [{"op": "pick", "count": 2000000}]})";
  }
  const std::string err = path + ".err";
  const int raw = runLimited(path, limit, err);
  std::ifstream in(err);
  const std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(message);
  CHECK_FALSE(WIFSIGNALED(raw));
  REQUIRE(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 1);
  CHECK(message.find("npacctl plan: " + path + ": out of memory") != std::string::npos);
}
