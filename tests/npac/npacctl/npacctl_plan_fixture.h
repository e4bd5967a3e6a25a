// Runs the real `npacctl plan` binary (from $NPAC_BIN) on a scenario file or on scenario
// text written to a file under the build directory, and collects its exit status, its
// output (stdout and stderr together) and, with --json, the parsed step objects.
//
// Threading: each call spawns one child and waits for it; call from the test's thread.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "tests/support/test_paths.h"

namespace npac::test {

struct PlanRun {
  int status = -1;
  std::string out;
  std::vector<nlohmann::json> steps;
};

inline std::string planBinDir() {
  const char* env = std::getenv("NPAC_BIN");
  return env != nullptr ? env : npac::testing::binaryDir() + "/bin";
}

inline PlanRun runPlanFile(const std::string& file, bool json_mode = true) {
  const std::string cmd =
      planBinDir() + "/npacctl plan " + (json_mode ? "--json " : "") + "'" + file + "' 2>&1";
  PlanRun r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p) != nullptr) r.out += buf;
  const int raw = pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  if (json_mode && r.status == 0) {
    std::size_t start = 0;
    while (start < r.out.size()) {
      const std::size_t end = r.out.find('\n', start);
      const std::string line = r.out.substr(start, end - start);
      if (!line.empty()) r.steps.push_back(nlohmann::json::parse(line));
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return r;
}

// Writes `text` to <build>/<name> and runs the plan on it.
inline PlanRun runPlanText(const std::string& name, const std::string& text, bool json_mode = true) {
  const std::string path = npac::testing::binaryDir() + "/" + name;
  {
    std::ofstream f(path, std::ios::trunc);
    f << text;
  }
  return runPlanFile(path, json_mode);
}

}  // namespace npac::test
