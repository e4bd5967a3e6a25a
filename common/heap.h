// returnFreedHeap(): hands the heap memory the process has freed back to the system, with
// whichever allocator the process runs on — jemalloc's purge of every arena when jemalloc
// is the allocator (npacd links it: CMakeLists.txt), glibc's malloc_trim otherwise. Both
// keep freed memory for reuse by default; a caller that has just freed a burst (hundreds
// of MB of unread event streams, npac/npacd/api/http_server.h) calls this so that the
// burst does not stay with the process.
//
// Threading: any thread. Costs a walk of the allocator's free memory: call it after a
// burst, not per request.
#pragma once

namespace npac::common {

// What did the work, for logs and tests.
enum class HeapReturn { kJemallocPurge, kGlibcTrim, kNone };

HeapReturn returnFreedHeap();

}  // namespace npac::common
