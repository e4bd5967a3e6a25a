// returnFreedHeap(): the allocator the process runs on does the work. This test program
// runs on glibc's malloc; npacd runs on jemalloc, where tests/npac/npacd/npacd_api_flood_test.cc
// shows the memory of closed event streams given back.
#include "common/heap.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

TEST_CASE("Freed heap goes back through glibc's malloc_trim in a process without jemalloc") {
  REQUIRE(::dlsym(RTLD_DEFAULT, "mallctl") == nullptr);  // not linked with jemalloc
  CHECK(npac::common::returnFreedHeap() == npac::common::HeapReturn::kGlibcTrim);
}
