#include "common/heap.h"

#include <dlfcn.h>
#include <malloc.h>

#include <cstddef>

namespace npac::common {
namespace {

// jemalloc's mallctl, looked up at run time: the library does not depend on the
// allocator the program was linked with.
using Mallctl = int (*)(const char*, void*, std::size_t*, void*, std::size_t);

Mallctl jemallocCtl() {
  static const Mallctl ctl = reinterpret_cast<Mallctl>(::dlsym(RTLD_DEFAULT, "mallctl"));
  return ctl;
}

}  // namespace

HeapReturn returnFreedHeap() {
  if (Mallctl ctl = jemallocCtl()) {
    // "arena.<MALLCTL_ARENAS_ALL>.purge" (4096): every arena's unused dirty pages.
    if (ctl("arena.4096.purge", nullptr, nullptr, nullptr, 0) == 0) return HeapReturn::kJemallocPurge;
  }
#if defined(__GLIBC__)
  ::malloc_trim(0);
  return HeapReturn::kGlibcTrim;
#else
  return HeapReturn::kNone;
#endif
}

}  // namespace npac::common
