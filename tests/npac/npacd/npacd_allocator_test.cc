// npacd allocates with jemalloc (CMakeLists.txt: measured faster than glibc's malloc on
// every per-message path of bench/compare.sh): the running program has it mapped, ahead of
// the C library, so its malloc and free are jemalloc's.
#include <fstream>
#include <string>

#include "tests/npac/npacd/npacd_fixture.h"

using namespace npacd_test;

TEST_CASE("npacd runs with jemalloc as its allocator") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  SUCCEED("sanitizer builds keep the sanitizer's allocator");
#else
  NpacdProcess npacd;
  std::ifstream maps("/proc/" + std::to_string(npacd.pid()) + "/maps");
  REQUIRE(maps);
  bool jemalloc = false;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("libjemalloc.so") != std::string::npos) jemalloc = true;
  }
  CHECK(jemalloc);
  // And it answers: the allocator serves a real request path.
  CHECK(npacd.call(http::verb::get, "/v1/providers").status == 200);
#endif
}
