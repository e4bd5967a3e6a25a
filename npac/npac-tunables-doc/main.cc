// npac-tunables-doc: prints docs/TUNABLES.md, rendered from the tunable catalogue.
//
//   build/bin/npac-tunables-doc > docs/TUNABLES.md
//
// tests/tunables/markdown_test.cc fails while the committed document differs.
#include <iostream>

#include <CLI/CLI.hpp>

#include "npac/version.h"
#include "tunables/markdown.h"

int main(int argc, char** argv) {
  CLI::App app{
      "npac-tunables-doc: prints docs/TUNABLES.md (every tunable, its type, range, default and scope) "
      "from the tunable catalogue on stdout\n"
      "  npac-tunables-doc > docs/TUNABLES.md"};
  app.set_version_flag("--version", npac::versionLine("npac-tunables-doc"));
  CLI11_PARSE(app, argc, argv);
  std::cout << npac::tunables::renderTunablesMarkdown();
  return std::cout.good() ? 0 : 1;
}
