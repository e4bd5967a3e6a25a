// "A tunable without a reader is a lie to the operator": every tunable of the catalogue
// npacd ships must be read somewhere in npacd, or setting it changes nothing. The test
// scans npacd's sources (npac/npacd/, found through NPAC_SOURCE_DIR) for a typed read of
// each tunable's key — `registry_.get(tunables::kName`, `registry->get(kName`, ... — and
// names every tunable it finds no reader for.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tunables/catalogue.h"
#include "tests/support/test_paths.h"

namespace npac::tunables {
namespace {

// catalogue.h names each typed key k + the tunable's name in CamelCase:
// max_associations_per_sp → kMaxAssociationsPerSp, throttle_onset_1 → kThrottleOnset1.
std::string keyName(std::string_view name) {
  std::string key = "k";
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    key += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return key;
}

// The text of a source file without its comments, so that a comment naming a tunable
// is not mistaken for a read of it. String literals are kept: no key name occurs in one.
std::string withoutComments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else if (text.compare(i, 2, "/*") == 0) {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string npacdSources() {
  const std::filesystem::path root = std::filesystem::path(npac::testing::sourceDir()) / "npac" / "npacd";
  std::string all;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cc") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    all += withoutComments(text.str());
    all += '\n';
  }
  return all;
}

bool isRead(const std::string& sources, const std::string& key) {
  // A typed read: <object>.get(key or <pointer>->get(key, the key optionally qualified.
  const std::regex read("(\\.|->)get\\s*\\(\\s*(npac::)?(tunables::)?" + key + "\\b");
  return std::regex_search(sources, read);
}

TEST_CASE("The key name of a tunable is k and its name in CamelCase") {
  CHECK(keyName("max_associations_per_sp") == "kMaxAssociationsPerSp");
  CHECK(keyName("throttle_onset_1") == "kThrottleOnset1");
  CHECK(keyName("srr") == "kSrr");
}

TEST_CASE("The reader scan finds a typed read and ignores one in a comment") {
  const std::string code = withoutComments(
      "auto a = registry_.get(tunables::kSrr, spid);\n"
      "auto b = registry->get(\n    tunables::kBindTimeout);\n"
      "// registry_.get(tunables::kQueries)\n/* registry_.get(kNothing) */\n");
  CHECK(isRead(code, "kSrr"));
  CHECK(isRead(code, "kBindTimeout"));
  CHECK_FALSE(isRead(code, "kQueries"));
  CHECK_FALSE(isRead(code, "kNothing"));
  CHECK_FALSE(isRead(code, "kSr"));
}

TEST_CASE("Every catalogue tunable has a typed key named after it") {
  std::ifstream in(std::filesystem::path(npac::testing::sourceDir()) / "tunables" / "catalogue.h");
  std::stringstream text;
  text << in.rdbuf();
  const std::string header = text.str();
  REQUIRE_FALSE(header.empty());
  for (const TunableSpec& spec : Catalogue::standard().all()) {
    INFO(spec.name);
    CHECK(std::regex_search(header, std::regex("Key<[^>]+> " + keyName(spec.name) + "\\{TunableId::")));
  }
}

TEST_CASE("Every catalogue tunable is read somewhere in npacd") {
  const std::string sources = npacdSources();
  REQUIRE_FALSE(sources.empty());
  std::vector<std::string> unread;
  for (const TunableSpec& spec : Catalogue::standard().all()) {
    if (!isRead(sources, keyName(spec.name))) unread.emplace_back(spec.name);
  }
  std::string list;
  for (const std::string& name : unread) list += "\n  " + name + " (" + keyName(name) + ")";
  INFO("tunables without a reader under npac/npacd/:" << list);
  CHECK(unread.empty());
}

}  // namespace
}  // namespace npac::tunables
