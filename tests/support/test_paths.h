// Where the test programs find the source tree (scripts, docs, examples) and the build
// tree (the programs they run, scratch files): set for tests/support/test_paths.cc alone
// (tests/CMakeLists.txt), so that no other test file's compilation depends on where the
// checkout lies and a second checkout's build reuses the compiler cache (ccache).
//
// Threading: pure functions; safe from any thread.
#pragma once

#include <string>

namespace npac::testing {

std::string sourceDir();  // the checkout, e.g. /work/main
std::string binaryDir();  // the build tree, e.g. /work/main/build

}  // namespace npac::testing
