// Every program's --version and --help, run as child processes ($NPAC_BIN), and the
// build-time script that writes npac/version.h (cmake/NpacVersion.cmake) run by cmake -P
// on fresh directories: a git checkout, the same with a changed file, and no checkout.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "npac/version.h"
#include "tests/support/program_run.h"
#include "tests/support/test_paths.h"

namespace {

using npac::testing::ProgramRun;
using npac::testing::programDir;
using npac::testing::runCommand;

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh directory under the system temp dir, removed at the end of the test.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "npac-programs-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~ScratchDir() { fs::remove_all(path); }
};

// Runs cmake/NpacVersion.cmake on `source` and returns the header it wrote.
std::string versionSourceFor(const fs::path& source, const fs::path& out) {
  ProgramRun r = runCommand("cmake -DNPAC_SOURCE_DIR=" + source.string() + " -DNPAC_VERSION=9.8.7 -DNPAC_VERSION_SOURCE=" +
              out.string() + " -P " + npac::testing::sourceDir() + "/cmake/NpacVersion.cmake 2>&1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return readFile(out);
}

const char* const kPrograms[] = {"npacd", "npacctl", "npac-soa-sim", "npac-pdu", "npac-tunables-doc"};

}  // namespace

TEST_CASE("every program prints its name and version and git revision with --version") {
  for (const char* program : kPrograms) {
    INFO(program);
    ProgramRun r = runCommand(programDir() + "/" + program + " --version 2>&1");
    CHECK(r.exit_code == 0);
    CHECK(r.output == npac::versionLine(program) + "\n");
  }
  CHECK_THAT(npac::versionLine("npacctl"),
             Catch::StartsWith(std::string("npacctl ") + npac::kVersion + " (git ") && Catch::EndsWith(")"));
}

TEST_CASE("every program answers --help with its usage and exit 0") {
  for (const char* program : kPrograms) {
    INFO(program);
    ProgramRun r = runCommand(programDir() + "/" + program + " --help 2>&1");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.output, Catch::Contains("Usage:") && Catch::Contains("--version"));
  }
}

TEST_CASE("npac-tunables-doc --help prints its usage instead of the document") {
  ProgramRun help = runCommand(programDir() + "/npac-tunables-doc --help 2>&1");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.output, Catch::Contains("Usage:") && Catch::Contains("docs/TUNABLES.md"));
  ProgramRun doc = runCommand(programDir() + "/npac-tunables-doc 2>&1");
  REQUIRE(doc.exit_code == 0);
  CHECK_THAT(help.output, !Catch::Contains(doc.output.substr(0, 40)));
  CHECK(doc.output == readFile(npac::testing::sourceDir() + "/docs/TUNABLES.md"));
}

TEST_CASE("the generated version source names a checkout's git revision and marks a changed tree dirty") {
  ScratchDir dir;
  const fs::path repo = dir.path / "repo";
  fs::create_directories(repo);
  std::ofstream(repo / "file.txt") << "one\n";
  const std::string git = "git -C " + repo.string() + " -c user.name=test -c user.email=test@example.invalid ";
  REQUIRE(runCommand(git + "init -q 2>&1").exit_code == 0);
  REQUIRE(runCommand(git + "add file.txt 2>&1").exit_code == 0);
  REQUIRE(runCommand(git + "commit -q -m one 2>&1").exit_code == 0);
  ProgramRun head = runCommand(git + "rev-parse --short HEAD");
  REQUIRE(head.exit_code == 0);
  const std::string revision = head.output.substr(0, head.output.find('\n'));
  REQUIRE(revision.size() >= 7);

  std::string source = versionSourceFor(repo, dir.path / "clean/npac/version.cc");
  CHECK_THAT(source, Catch::Contains("kVersion = \"9.8.7\"") &&
                         Catch::Contains("kGitRevision = \"" + revision + "\""));
  std::ofstream(repo / "file.txt") << "two\n";
  source = versionSourceFor(repo, dir.path / "dirty/npac/version.cc");
  CHECK_THAT(source, Catch::Contains("kGitRevision = \"" + revision + "-dirty\""));
}

TEST_CASE("the generated version source says unknown for a source tree outside git") {
  ScratchDir dir;
  const fs::path source = dir.path / "source";
  fs::create_directories(source);
  const std::string generated = versionSourceFor(source, dir.path / "out/npac/version.cc");
  CHECK_THAT(generated, Catch::Contains("kGitRevision = \"unknown\""));
}

TEST_CASE("make run builds only npacd and the programs the README walkthrough uses") {
  // make -n prints the recipes without running them (the package check included).
  ProgramRun run_recipe = runCommand("make -n -C " + npac::testing::sourceDir() + " run BUILD=/nonexistent/build JOBS=2 2>&1");
  INFO(run_recipe.output);
  REQUIRE(run_recipe.exit_code == 0);
  CHECK_THAT(run_recipe.output,
             Catch::Contains("cmake --build /nonexistent/build --target npacd npacctl npac-soa-sim -j 2") &&
                 Catch::Contains("/nonexistent/build/bin/npacd --db var/npacd.db") &&
                 !Catch::Contains("cmake --build /nonexistent/build -j 2"));
  ProgramRun test_recipe = runCommand("make -n -C " + npac::testing::sourceDir() + " test BUILD=/nonexistent/build JOBS=2 2>&1");
  CHECK_THAT(test_recipe.output, Catch::Contains("cmake --build /nonexistent/build -j 2"));
}

TEST_CASE("make run installs only what npacd needs and prints no make directory lines, and make test installs the rest") {
  ProgramRun run_recipe = runCommand("make -n -C " + npac::testing::sourceDir() + " run BUILD=/nonexistent/build JOBS=2 2>&1");
  INFO(run_recipe.output);
  REQUIRE(run_recipe.exit_code == 0);
  for (const char* test_only : {"postgresql-15", "chromium", "prometheus", "tshark", "catch2", "nodejs"}) {
    INFO(test_only);
    CHECK_THAT(run_recipe.output, !Catch::Contains(test_only));
  }
  CHECK_THAT(run_recipe.output, Catch::Contains("libsqlite3-dev") && Catch::Contains("--no-print-directory"));
  ProgramRun test_recipe = runCommand("make -n -C " + npac::testing::sourceDir() + " test BUILD=/nonexistent/build JOBS=2 2>&1");
  for (const char* test_only : {"postgresql-15", "chromium", "prometheus", "tshark", "catch2", "nodejs"}) {
    INFO(test_only);
    CHECK_THAT(test_recipe.output, Catch::Contains(test_only));
  }
}
