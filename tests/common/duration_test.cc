// The one duration grammar: what operators type, what programs print, and the refusals.
#include <catch2/catch.hpp>

#include <limits>

#include "common/duration.h"

using namespace npac::common;
using npac::Result;
using npac::StatusCode;
using namespace std::chrono_literals;

TEST_CASE("Each duration unit is read") {
  CHECK(parseDuration("250ms").value() == 250ms);
  CHECK(parseDuration("30s").value() == 30s);
  CHECK(parseDuration("15m").value() == 15min);
  CHECK(parseDuration("2h").value() == 2h);
  CHECK(parseDuration("365d").value() == std::chrono::hours(365 * 24));
}

TEST_CASE("Compound durations add their parts") {
  CHECK(parseDuration("1h30m").value() == 90min);
  CHECK(parseDuration("1m500ms").value() == 60500ms);
}

TEST_CASE("Duration units are case-insensitive and blanks around are ignored") {
  CHECK(parseDuration(" 15M ").value() == 15min);
  CHECK(parseDuration("250MS").value() == 250ms);
}

TEST_CASE("A bare zero is a duration and any other bare number is not") {
  Result<Millis> zero = parseDuration("0");
  REQUIRE(zero.isOk());
  CHECK(zero.value() == 0ms);
  CHECK(parseDuration("30").status().code() == StatusCode::kBadOption);
}

TEST_CASE("Malformed durations are refused") {
  for (const char* text : {"", "s", "-5s", "5x", "5 s", "1.5s", "15min", "+5s"}) {
    INFO(text);
    CHECK(parseDuration(text).status().code() == StatusCode::kBadOption);
  }
}

TEST_CASE("A duration beyond 64-bit milliseconds is too long") {
  CHECK(parseDuration("9223372036854775807ms").isOk());
  CHECK(parseDuration("9223372036854775808ms").status().code() == StatusCode::kOutOfRange);
  CHECK(parseDuration("200000000000d").status().code() == StatusCode::kOutOfRange);
  CHECK(parseDuration("9223372036854775807ms1ms").status().code() == StatusCode::kOutOfRange);
}

TEST_CASE("Durations are printed in the largest unit that divides them") {
  CHECK(formatDuration(0ms) == "0s");
  CHECK(formatDuration(90s) == "90s");
  CHECK(formatDuration(90min) == "90m");
  CHECK(formatDuration(48h) == "2d");
  CHECK(formatDuration(1500ms) == "1500ms");
}

TEST_CASE("Every printed duration reads back as the same value") {
  for (Millis d : {Millis(0), Millis(1), Millis(999), Millis(1000), Millis(61'000), Millis(3'600'000),
                   Millis(86'400'000), Millis(std::numeric_limits<std::int64_t>::max())}) {
    INFO(d.count());
    CHECK(parseDuration(formatDuration(d)).value() == d);
  }
}
