#include "tunables/value.h"

#include <catch2/catch.hpp>

namespace npac::tunables {
namespace {

using namespace std::chrono_literals;

Duration duration(std::string_view text) {
  Duration out{-1};
  const Status status = parseDuration(text, &out);
  INFO(text << ": " << status.toString());
  REQUIRE(status.isOk());
  return out;
}

ErrorCode durationError(std::string_view text) {
  Duration out{-1};
  const Status status = parseDuration(text, &out);
  CHECK(out == Duration(-1));  // untouched on failure
  return status.code();
}

TEST_CASE("Durations parse in every unit an operator types", "[value]") {
  CHECK(duration("15m") == 15min);
  CHECK(duration("900s") == 900s);
  CHECK(duration("365d") == std::chrono::days(365));
  CHECK(duration("250ms") == 250ms);
  CHECK(duration("2h") == 2h);
  CHECK(duration("1h30m") == 90min);
  CHECK(duration(" 10S ") == 10s);
  CHECK(duration("0") == 0s);
  CHECK(duration("0s") == 0s);
  CHECK(duration("9223372036854775806ms1ms") == Duration(9223372036854775807LL));
}

TEST_CASE("Unparseable durations are wrong-type errors", "[value]") {
  CHECK(durationError("") == ErrorCode::kWrongType);
  CHECK(durationError("15") == ErrorCode::kWrongType);
  CHECK(durationError("m15") == ErrorCode::kWrongType);
  CHECK(durationError("15 minutes") == ErrorCode::kWrongType);
  CHECK(durationError("-5s") == ErrorCode::kWrongType);
  CHECK(durationError("1.5h") == ErrorCode::kWrongType);
  CHECK(durationError("15x") == ErrorCode::kWrongType);
}

TEST_CASE("A duration too long for 64-bit milliseconds is out of range", "[value]") {
  CHECK(durationError("9223372036854775807d") == ErrorCode::kOutOfRange);
  CHECK(durationError("99999999999999999999s") == ErrorCode::kOutOfRange);
  CHECK(durationError("9223372036854775807ms1ms") == ErrorCode::kOutOfRange);
}

TEST_CASE("Durations format in the largest unit that divides exactly", "[value]") {
  CHECK(formatDuration(900s) == "15m");
  CHECK(formatDuration(90min) == "90m");
  CHECK(formatDuration(std::chrono::days(365)) == "365d");
  CHECK(formatDuration(250ms) == "250ms");
  CHECK(formatDuration(1500ms) == "1500ms");
  CHECK(formatDuration(0s) == "0s");
  CHECK(formatDuration(2h) == "2h");
}

TEST_CASE("Every canonical duration parses back to the same value", "[value]") {
  for (Duration d : {Duration(0), Duration(1), Duration(999), Duration(1000), Duration(61000),
                     Duration(3600000), Duration(86400000LL * 3650)}) {
    CHECK(duration(formatDuration(d)) == d);
  }
}

TEST_CASE("Bools accept on off true false in any case and format as on or off", "[value]") {
  bool value = false;
  CHECK(parseBool("on", &value).isOk());
  CHECK(value);
  CHECK(parseBool("OFF", &value).isOk());
  CHECK_FALSE(value);
  CHECK(parseBool("True", &value).isOk());
  CHECK(value);
  CHECK(parseBool("false", &value).isOk());
  CHECK_FALSE(value);
  CHECK(parseBool("yes", &value).code() == ErrorCode::kWrongType);
  CHECK(parseBool("1", &value).code() == ErrorCode::kWrongType);
  CHECK(parseBool("", &value).code() == ErrorCode::kWrongType);
  CHECK(formatBool(true) == "on");
  CHECK(formatBool(false) == "off");
}

TEST_CASE("Integers parse whole decimal text only", "[value]") {
  std::int64_t value = 0;
  CHECK(parseInteger("100", &value).isOk());
  CHECK(value == 100);
  CHECK(parseInteger("+7", &value).isOk());
  CHECK(value == 7);
  CHECK(parseInteger("-3", &value).isOk());
  CHECK(value == -3);
  CHECK(parseInteger("10x", &value).code() == ErrorCode::kWrongType);
  CHECK(parseInteger("0x10", &value).code() == ErrorCode::kWrongType);
  CHECK(parseInteger("", &value).code() == ErrorCode::kWrongType);
  CHECK(parseInteger("99999999999999999999", &value).code() == ErrorCode::kOutOfRange);
  CHECK(value == -3);
}

}  // namespace
}  // namespace npac::tunables
