// Durations as operators type them and programs print them: "250ms", "30s", "15m", "2h",
// "365d", compounds such as "1h30m", and a bare "0". One grammar for the tunables, the
// admin API (?wait=30s), npacctl and the simulator, so a value one prints another reads.
//
// Grammar: one or more <count><unit> with count a non-negative decimal integer and unit
// one of d h m s ms (case-insensitive, "ms" before "m"); or "0". Surrounding blanks are
// ignored. Values are milliseconds, the finest unit an operator can type.
//
// Threading: pure functions; safe from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace npac::common {

using Millis = std::chrono::milliseconds;

// The value, or a Status (common/status.h): kBadOption when the text is not the grammar
// above, kOutOfRange when it holds more milliseconds than a signed 64-bit count. The
// message quotes the text; a caller with its own words compares code().
Result<Millis> parseDuration(std::string_view text);

// The shortest exact text in the largest unit that divides the value: 90000ms → "90s",
// 5400000ms → "90m", 0 → "0s". parseDuration(formatDuration(d)) == d for d >= 0.
std::string formatDuration(Millis value);

// For messages: "250ms, 900s, 15m, 2h, 365d or 1h30m".
inline constexpr std::string_view kDurationExamples = "250ms, 900s, 15m, 2h, 365d or 1h30m";

}  // namespace npac::common
