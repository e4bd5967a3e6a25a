// The feature table of docs/dispatch/throttle.md ("The seed's egress throttling in a running
// npacd") names, per behaviour of the seed document, the test case that shows it. This
// keeps the table honest: every name it quotes is the name of a TEST_CASE in tests/, so a
// renamed or removed test cannot leave a row that nothing shows.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_paths.h"

namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The names of every TEST_CASE in `source`: its first argument, adjacent string literals joined.
void testCaseNames(const std::string& source, std::set<std::string>& out) {
  for (std::size_t at = source.find("TEST_CASE("); at != std::string::npos; at = source.find("TEST_CASE(", at + 1)) {
    std::size_t i = at + 10;
    std::string name;
    for (;;) {
      while (i < source.size() && std::isspace(static_cast<unsigned char>(source[i]))) ++i;
      if (i >= source.size() || source[i] != '"') break;
      for (++i; i < source.size() && source[i] != '"'; ++i) {
        if (source[i] == '\\' && i + 1 < source.size()) ++i;
        name.push_back(source[i]);
      }
      ++i;
    }
    if (!name.empty()) out.insert(name);
  }
}

}  // namespace

TEST_CASE("Every test the egress throttling feature table names exists") {
  const std::string doc = readFile(fs::path(npac::testing::sourceDir()) / "docs/dispatch/throttle.md");
  const std::size_t begin = doc.find("<!-- feature-table:begin -->");
  const std::size_t end = doc.find("<!-- feature-table:end -->");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::set<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(npac::testing::sourceDir()) / "tests")) {
    if (entry.path().extension() == ".cc") testCaseNames(readFile(entry.path()), names);
  }
  std::istringstream table(doc.substr(begin, end - begin));
  std::size_t rows = 0;
  bool etl_row = false;
  for (std::string line; std::getline(table, line);) {
    const std::size_t open = line.find("| \"");
    if (open == std::string::npos) continue;
    const std::size_t close = line.rfind("\" |");
    REQUIRE(close > open);
    const std::string named = line.substr(open + 3, close - open - 3);
    INFO(line);
    CHECK(names.count(named) == 1);
    ++rows;
    if (line.rfind("| ETL across nodes |", 0) == 0) etl_row = true;
  }
  CHECK(rows >= 10);
  CHECK(etl_row);
}
