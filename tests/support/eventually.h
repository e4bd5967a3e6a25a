// eventually: the tests' one bounded poll. Calls `done` until it returns true or `limit`
// passes, sleeping `every` between calls, and calls it once more at the deadline; returns
// whether it held. For waiting on what another thread or process (npacd, a simulator, a
// database server) does, which the test can only observe. A deliberate real-time pause (a
// measurement window, waiting out a lease) is not a poll: such a test sleeps in the open.
// Threading: `done` runs on the calling thread only, which the call blocks.
#pragma once

#include <chrono>
#include <thread>

namespace npac::testing {

template <typename Predicate>
bool eventually(Predicate&& done, std::chrono::milliseconds limit,
                std::chrono::milliseconds every = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return static_cast<bool>(done());
}

}  // namespace npac::testing
