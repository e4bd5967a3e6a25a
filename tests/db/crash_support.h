// What the SIGKILL tests (crash_test.cc, settle_crash_test.cc) share: a seeded mix for the
// rounds' randomness, a whole write to the report pipe, and the NPAC_CRASH_* overrides.
// Threading: free functions; writeAll is safe in a forked child (write(2) only).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace npac::db::testing {

inline std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Writes all `size` bytes (retrying after EINTR and short writes); false if the pipe broke.
inline bool writeAll(int fd, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The environment variable `name` as a number, or `fallback` when it is not set.
inline std::uint64_t envOr(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::strtoull(value, nullptr, 10) : fallback;
}

}  // namespace npac::db::testing
