// How the programs are built, as the build options say (CMakeLists.txt):
// - NPAC_LINKER: the programs are linked by the linker it chose — auto picks mold, else
//   lld, else gold, else GNU ld — and each leaves its own mark in the ELF file: mold and
//   lld write their name into .comment, gold adds a .note.gnu.gold-version section, GNU ld
//   neither;
// - NPAC_UNITY: the server's sources are compiled in unity units, or one by one.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "service_fixture.h"

#include "tests/support/test_paths.h"

using namespace service_test;

namespace {

// A cache entry of this build tree's CMakeCache.txt, as written ("" when absent).
std::string cacheEntry(const std::string& key) {
  std::ifstream cache(npac::testing::binaryDir() + "/CMakeCache.txt");
  std::string line;
  while (std::getline(cache, line)) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(line.find('=') + 1);
  }
  return "";
}

// The compile commands CMake exported for this build tree (compile_commands.json).
std::string compileCommands() {
  std::ifstream commands(npac::testing::binaryDir() + "/compile_commands.json");
  REQUIRE(commands.good());
  return std::string((std::istreambuf_iterator<char>(commands)), std::istreambuf_iterator<char>());
}

// The #include lines of a unity unit CMake wrote: the sources it compiles together.
std::vector<std::string> unitSources(const std::filesystem::path& unit) {
  std::ifstream file(unit);
  std::vector<std::string> sources;
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("#include", 0) == 0) sources.push_back(line);
  }
  return sources;
}

}  // namespace

TEST_CASE("npacd carries the mark of the linker NPAC_LINKER chose and of no other") {
  const std::string linker = cacheEntry("NPAC_LINKER_USED");
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

// NPAC_UNITY (CMakeLists.txt, npac/CMakeLists.txt): read from the compile commands CMake
// exported for this tree and from the unity files it wrote.
TEST_CASE("With NPAC_UNITY on npacd's sources compile eight to a unit and its route files four to units of their "
          "own, and all one by one with it off") {
  const std::string unity = cacheEntry("NPAC_UNITY");
  INFO("NPAC_UNITY=" << unity);
  REQUIRE((unity == "ON" || unity == "OFF"));
  const std::string text = compileCommands();
  auto compiledAlone = [&](const std::string& source) {
    return std::regex_search(text, std::regex("npac_exe_npacd\\.dir/npacd/" + source + "\\.o"));
  };
  // The server library (npac_exe_npacd): units with it on, none with it off.
  CHECK(std::regex_search(text, std::regex("npac_exe_npacd\\.dir/Unity/unity_[a-z_0-9]+_cxx\\.cxx\\.o")) ==
        (unity == "ON"));
  CHECK(compiledAlone("core/session\\.cc") == (unity == "OFF"));
  CHECK(compiledAlone("api/token_routes\\.cc") == (unity == "OFF"));
  CHECK(compiledAlone("server\\.cc") == (unity == "OFF"));
  // Alone either way, in a library of its own: the generated version source, which
  // changes with every commit (cmake/NpacVersion.cmake).
  CHECK(std::regex_search(text, std::regex("npac_version_info\\.dir/generated/npac/version\\.cc\\.o")));
  if (unity != "ON") return;
  // A route unit holds one to four route files and nothing else; any other unit one to
  // eight sources and no route file.
  const std::filesystem::path dir = npac::testing::binaryDir() + "/npac/CMakeFiles/npac_exe_npacd.dir/Unity";
  bool session_found = false;
  bool token_routes_found = false;
  int route_units = 0;
  int other_units = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("unity_") || !name.ends_with("_cxx.cxx")) continue;
    INFO(name);
    const bool route_unit = name.starts_with("unity_routes_");
    ++(route_unit ? route_units : other_units);
    const std::vector<std::string> sources = unitSources(entry.path());
    for (const std::string& line : sources) {
      session_found = session_found || line.find("npacd/core/session.cc") != std::string::npos;
      token_routes_found = token_routes_found || line.find("npacd/api/token_routes.cc") != std::string::npos;
      CHECK((line.find("_routes.cc") != std::string::npos) == route_unit);
    }
    CHECK(!sources.empty());
    CHECK(sources.size() <= (route_unit ? 4u : 8u));
  }
  CHECK(route_units > 1);
  CHECK(other_units > 1);
  CHECK(session_found);
  CHECK(token_routes_found);
}

// The test executables (tests/CMakeLists.txt) follow NPAC_UNITY too, eight test sources to a
// unit; the test-paths source, which holds this checkout's paths, is compiled alone either way.
TEST_CASE("With NPAC_UNITY on the test sources compile eight to a unit, the test-paths source alone, and all one by "
          "one with it off") {
  const std::string unity = cacheEntry("NPAC_UNITY");
  INFO("NPAC_UNITY=" << unity);
  REQUIRE((unity == "ON" || unity == "OFF"));
  const std::string text = compileCommands();
  auto found = [&](const std::string& object) { return std::regex_search(text, std::regex(object)); };
  CHECK(found("npac_tests\\.dir/Unity/unity_[0-9]+_cxx\\.cxx\\.o") == (unity == "ON"));
  CHECK(found("db_tests\\.dir/Unity/unity_[0-9]+_cxx\\.cxx\\.o") == (unity == "ON"));
  CHECK(found("npac_tests\\.dir/npac/programs_test\\.cc\\.o") == (unity == "OFF"));
  CHECK(found("npac_tests\\.dir/support/test_paths\\.cc\\.o"));
  if (unity != "ON") return;
  const std::filesystem::path dir = npac::testing::binaryDir() + "/tests/CMakeFiles/npac_tests.dir/Unity";
  int units = 0;
  bool programs_test_found = false;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("unity_") || !name.ends_with("_cxx.cxx")) continue;
    INFO(name);
    ++units;
    const std::vector<std::string> sources = unitSources(entry.path());
    for (const std::string& line : sources) {
      programs_test_found = programs_test_found || line.find("tests/npac/programs_test.cc") != std::string::npos;
      CHECK(line.find("test_paths.cc") == std::string::npos);
    }
    CHECK(!sources.empty());
    CHECK(sources.size() <= 8u);
  }
  CHECK(units > 1);
  CHECK(programs_test_found);
}
