// npac-tunables-doc: prints docs/TUNABLES.md, rendered from the tunable catalogue.
//
//   build/bin/npac-tunables-doc > docs/TUNABLES.md
//
// tests/tunables/markdown_test.cc fails while the committed document differs.
#include <iostream>

#include "tunables/markdown.h"

int main() {
  std::cout << npac::tunables::renderTunablesMarkdown();
  return std::cout.good() ? 0 : 1;
}
