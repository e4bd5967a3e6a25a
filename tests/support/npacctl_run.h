// runNpacctl: runs the npacctl program of the build under test (NPAC_BIN, else the build
// tree's bin/) with `args` as a shell command line, and returns its exit code and what it
// wrote to stdout and stderr together. Threading: any thread; each call is its own process.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/test_paths.h"

namespace npac::testing {

struct NpacctlRun {
  int exit_code = -1;  // -1 when npacctl did not exit by itself
  std::string output;  // stdout and stderr
};

inline NpacctlRun runNpacctl(const std::string& args) {
  const char* env = std::getenv("NPAC_BIN");
  const std::string bin = env != nullptr ? env : binaryDir() + "/bin";
  FILE* pipe = popen((bin + "/npacctl " + args + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  NpacctlRun run;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) run.output.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace npac::testing
