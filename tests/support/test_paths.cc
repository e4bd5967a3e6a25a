#include "tests/support/test_paths.h"

namespace npac::testing {

std::string sourceDir() { return NPAC_SOURCE_DIR; }
std::string binaryDir() { return NPAC_BINARY_DIR; }

}  // namespace npac::testing
