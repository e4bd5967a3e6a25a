// PrivateCluster: a PostgreSQL cluster of one test's own (tests/pg/cluster.sh), for a test
// that restarts, halts or pauses its server — the suite's shared cluster serves other
// tests meanwhile. Started by the constructor on a free port beside the suite's cluster
// ($NPAC_TEST_PG's parent: /dev/shm or /tmp, tests/CMakeLists.txt), else under /tmp; stopped and
// removed (unpaused first) by the destructor. Test set-up: a failure stops the case with
// REQUIRE.
//
// Threading: one object per test; restart/halt/resume and a Pause may be used from
// another thread than the one that made it, one at a time.
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include "tests/support/test_paths.h"

namespace npac::testing {

class PrivateCluster {
 public:
  PrivateCluster() : dir_(parentDir() / ("npac-pg-private-" + std::to_string(getpid()))) {
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

  // The server paused (SIGSTOP: it hangs, its sockets stay open) while this object lives,
  // resumed by end() or, when a REQUIRE failed meanwhile, by the destructor — which runs
  // before those of the databases and processes made after the cluster, so none of them
  // waits on a stopped server.
  class Pause {
   public:
    explicit Pause(PrivateCluster& cluster) : cluster_(&cluster) { REQUIRE(cluster_->run("pause") == 0); }
    ~Pause() {
      if (cluster_ != nullptr) cluster_->run("unpause");
    }
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;
    void end() {
      REQUIRE(cluster_ != nullptr);
      PrivateCluster* cluster = std::exchange(cluster_, nullptr);
      REQUIRE(cluster->run("unpause") == 0);
    }

   private:
    PrivateCluster* cluster_;
  };

 private:
  static std::filesystem::path parentDir() {
    const char* suite = std::getenv("NPAC_TEST_PG");
    if (suite == nullptr || *suite == '\0') return std::filesystem::temp_directory_path();
    return std::filesystem::path(suite).parent_path();
  }
  int run(const char* action) {
    const std::string command = std::string(npac::testing::sourceDir() + "/tests/pg/cluster.sh ") + action + " " +
                                dir_.string() + " >/dev/null 2>&1";
    return std::system(command.c_str());
  }
  std::filesystem::path dir_;
  std::string url_;
};

}  // namespace npac::testing
