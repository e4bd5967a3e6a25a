#include "tunables/markdown.h"

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include "tests/support/test_paths.h"

namespace npac::tunables {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("The committed docs/TUNABLES.md is what the catalogue renders", "[markdown]") {
  const std::string path = npac::testing::sourceDir() + "/docs/TUNABLES.md";
  const std::string committed = readFile(path);
  const std::string rendered = renderTunablesMarkdown();
  INFO(path << " is stale or missing. Regenerate it with\n"
            << "  cmake --build build --target npac-tunables-doc && "
            << "build/bin/npac-tunables-doc > docs/TUNABLES.md");
  REQUIRE(committed == rendered);
}

TEST_CASE("The rendered document lists every tunable with its default", "[markdown]") {
  const std::string rendered = renderTunablesMarkdown();
  const Catalogue& catalogue = Catalogue::standard();
  for (const TunableSpec& spec : catalogue.all()) {
    INFO(spec.name);
    CHECK(rendered.find("\n### " + std::string(spec.name) + "\n") != std::string::npos);
    CHECK(rendered.find("- default: `" + catalogue.format(spec, spec.default_value) + "`") !=
          std::string::npos);
  }
  // An enumeration's '|' separators are escaped inside the summary table.
  CHECK(rendered.find("round-robin \\| weighted \\| lrtm") != std::string::npos);
}

}  // namespace
}  // namespace npac::tunables
