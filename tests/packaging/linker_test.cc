// NPAC_LINKER (CMakeLists.txt): the programs are linked by the linker it chose — auto picks
// mold, else lld, else gold, else GNU ld — and each leaves its own mark in the ELF file:
// mold and lld write their name into .comment, gold adds a .note.gnu.gold-version
// section, GNU ld neither.
#include <fstream>
#include <regex>

#include "service_fixture.h"

#include "tests/support/test_paths.h"

using namespace service_test;

namespace {

// NPAC_LINKER_USED from this build tree's CMakeCache.txt ("" when absent).
std::string linkerUsed() {
  std::ifstream cache(npac::testing::binaryDir() + "/CMakeCache.txt");
  std::string line;
  const std::string key = "NPAC_LINKER_USED:INTERNAL=";
  while (std::getline(cache, line)) {
    if (line.rfind(key, 0) == 0) return line.substr(key.size());
  }
  return "";
}

}  // namespace

TEST_CASE("npacd carries the mark of the linker NPAC_LINKER chose and of no other") {
  const std::string linker = linkerUsed();
  INFO("NPAC_LINKER_USED=" << linker);
  REQUIRE(std::regex_match(linker, std::regex("mold|lld|gold|bfd")));
  const std::string npacd = npac::testing::binaryDir() + "/bin/npacd";
  Run comment = runCommand("readelf -p .comment " + npacd + " 2>&1");
  REQUIRE(comment.exit_code == 0);
  Run sections = runCommand("readelf -S -W " + npacd + " 2>&1");
  REQUIRE(sections.exit_code == 0);
  INFO(comment.output);
  const bool mold = comment.output.find("mold ") != std::string::npos;
  const bool lld = comment.output.find("Linker: LLD") != std::string::npos;
  const bool gold = sections.output.find(".note.gnu.gold-version") != std::string::npos;
  CHECK(mold == (linker == "mold"));
  CHECK(lld == (linker == "lld"));
  CHECK(gold == (linker == "gold"));
}
