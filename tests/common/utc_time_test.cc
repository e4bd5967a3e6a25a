#include "common/utc_time.h"

#include <catch2/catch.hpp>

namespace npac::common {
namespace {

TEST_CASE("formatUtcMillis prints the epoch as RFC 3339 UTC with milliseconds", "[utc_time]") {
  CHECK(formatUtcMillis(0) == "1970-01-01T00:00:00.000Z");
}

TEST_CASE("formatUtcMillis keeps the milliseconds of a time", "[utc_time]") {
  // 2026-11-29T15:00:00Z is 1,795,964,400 s after the epoch.
  CHECK(formatUtcMillis(1795964400LL * 1000 + 42) == "2026-11-29T15:00:00.042Z");
}

}  // namespace
}  // namespace npac::common
