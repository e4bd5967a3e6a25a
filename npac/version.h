// The version every program prints with --version: npac::kVersion is the project version
// (CMakeLists.txt), npac::kGitRevision the source tree's `git describe --always --dirty`
// ("c5364a5", "c5364a5-dirty"), or "unknown" outside a git checkout. Both are defined in
// version.cc, which cmake/NpacVersion.cmake writes into the build tree before each build
// (library npac_version_info, CMakeLists.txt): a new revision recompiles that one file.
//
// Threading: constants; safe from any thread.
#pragma once

#include <string>

namespace npac {

extern const char* const kVersion;
extern const char* const kGitRevision;

// What `PROGRAM --version` prints: "npacctl 0.1.0 (git c5364a5)".
inline std::string versionLine(const std::string& program) {
  return program + " " + kVersion + " (git " + kGitRevision + ")";
}

}  // namespace npac
