// Test helpers that run the built tools and tshark: a command's stdout as bytes, and the
// path of the npac-pdu binary ($NPAC_BIN, set by CTest, else NPAC_BINARY_DIR/bin).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>
#include "tests/support/test_paths.h"

namespace npac::cmip::testing {

struct CommandOutput {
  int exit_code = -1;
  std::vector<uint8_t> out;
  std::string text() const { return std::string(out.begin(), out.end()); }
};

// Runs `command` with /bin/sh; stdout captured, stderr left to the caller's redirection.
inline CommandOutput runCommand(const std::string& command) {
  CommandOutput r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  uint8_t buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.insert(r.out.end(), buf, buf + n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string npacPduPath() {
  const char* bin = std::getenv("NPAC_BIN");
  std::string dir = bin != nullptr ? bin : npac::testing::binaryDir() + "/bin";
  return dir + "/npac-pdu";
}

// A fresh directory under the system temp dir, removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() /
            (tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

}  // namespace npac::cmip::testing
