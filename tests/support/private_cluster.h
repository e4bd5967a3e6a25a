// PrivateCluster: a PostgreSQL cluster of one test's own (tests/pg/cluster.sh), for a test
// that restarts, halts or pauses its server — the suite's shared cluster serves other
// tests meanwhile. Started by the constructor on a free port under /tmp, stopped and
// removed (unpaused first) by the destructor. Test set-up: a failure stops the case with
// REQUIRE.
//
// Threading: one object per test; restart/halt/resume/pause/unpause may be called from
// another thread than the one that made it, one at a time.
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include "tests/support/test_paths.h"

namespace npac::testing {

class PrivateCluster {
 public:
  PrivateCluster()
      : dir_(std::filesystem::temp_directory_path() / ("npac-pg-private-" + std::to_string(getpid()))) {
    REQUIRE(run("start") == 0);
    std::ifstream in(dir_ / "url");
    std::getline(in, url_);
    REQUIRE_FALSE(url_.empty());
  }
  ~PrivateCluster() {
    run("unpause");  // a test that failed while it was paused
    run("stop");
  }
  PrivateCluster(const PrivateCluster&) = delete;
  PrivateCluster& operator=(const PrivateCluster&) = delete;

  const std::string& url() const { return url_; }
  int restart() { return run("restart"); }
  int halt() { return run("halt"); }
  int resume() { return run("resume"); }
  int pause() { return run("pause"); }  // SIGSTOP: the server hangs, its sockets stay open
  int unpause() { return run("unpause"); }

 private:
  int run(const char* action) {
    const std::string command = std::string(npac::testing::sourceDir() + "/tests/pg/cluster.sh ") + action + " " +
                                dir_.string() + " >/dev/null 2>&1";
    return std::system(command.c_str());
  }
  std::filesystem::path dir_;
  std::string url_;
};

}  // namespace npac::testing
