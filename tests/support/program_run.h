// Running the build's programs as child processes and collecting what they print.
// runCommand: a shell command line as given (append " 2>&1" for stderr too), its exit code
// and stdout. runNpacctl: the npacctl program of the build under test (NPAC_BIN, else the
// build tree's bin/) with `args`, stdout and stderr together. One definition for every test
// file, since a unity build (NPAC_UNITY) compiles several of them as one unit.
// Threading: any thread; each call is its own process.
#pragma once

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/test_paths.h"

namespace npac::testing {

struct ProgramRun {
  int exit_code = -1;  // -1 when the program did not exit by itself
  std::string output;  // stdout, and stderr where the command line sends it there
};

inline ProgramRun runCommand(const std::string& command_line) {
  FILE* pipe = popen(command_line.c_str(), "r");
  REQUIRE(pipe != nullptr);
  ProgramRun run;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) run.output.append(buf, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// The directory of the programs under test.
inline std::string programDir() {
  const char* env = std::getenv("NPAC_BIN");
  return env != nullptr ? env : binaryDir() + "/bin";
}

inline ProgramRun runNpacctl(const std::string& args) {
  return runCommand(programDir() + "/npacctl " + args + " 2>&1");
}

}  // namespace npac::testing
