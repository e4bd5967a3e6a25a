// renderTunablesMarkdown: docs/TUNABLES.md, generated from the catalogue.
//
// The catalogue (catalogue.cc) is the only place a tunable is described; this renders it
// as the operator document. The committed docs/TUNABLES.md must equal the output, which
// tests/tunables/markdown_test.cc checks. Regenerate with
//   build/bin/npac-tunables-doc > docs/TUNABLES.md
//
// Threading: pure function of the immutable catalogue; call from any thread.
#pragma once

#include <string>

#include "tunables/catalogue.h"

namespace npac::tunables {

std::string renderTunablesMarkdown(const Catalogue& catalogue = Catalogue::standard());

}  // namespace npac::tunables
