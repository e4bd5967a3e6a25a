#include "common/duration.h"

#include <array>
#include <charconv>

#include "common/text.h"

namespace npac::common {
namespace {

struct DurationUnit {
  std::string_view suffix;
  std::int64_t millis;
};

constexpr std::int64_t kSecond = 1000;
constexpr std::int64_t kMinute = 60 * kSecond;
constexpr std::int64_t kHour = 60 * kMinute;
constexpr std::int64_t kDay = 24 * kHour;
// Longest suffix first so that "ms" is not read as "m" followed by junk; the formatter
// walks its table from the largest unit down.
constexpr std::array<DurationUnit, 5> kParseUnits{{
    {"ms", 1}, {"d", kDay}, {"h", kHour}, {"m", kMinute}, {"s", kSecond}}};
constexpr std::array<DurationUnit, 5> kFormatUnits{{
    {"d", kDay}, {"h", kHour}, {"m", kMinute}, {"s", kSecond}, {"ms", 1}}};

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trimmed(std::string_view t) {
  while (!t.empty() && isBlank(t.front())) t.remove_prefix(1);
  while (!t.empty() && isBlank(t.back())) t.remove_suffix(1);
  return t;
}

bool startsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (asciiLower(text[i]) != prefix[i]) return false;
  }
  return true;
}

// 'text' (appended piece by piece: GCC 12's -Wrestrict misfires on "'" + std::string).
std::string quoted(std::string_view text) {
  std::string out(1, '\'');
  out.append(text).push_back('\'');
  return out;
}
Status malformed(std::string_view text) {
  return Status::badOption(quoted(text).append(" is not a duration (e.g. ").append(kDurationExamples).append(")"));
}
Status tooLong(std::string_view text) { return Status::outOfRange(quoted(text).append(" is too long a duration")); }

}  // namespace

Result<Millis> parseDuration(std::string_view text) {
  std::string_view t = trimmed(text);
  if (t.empty()) return malformed(text);
  if (t == "0") return Millis(0);  // zero needs no unit: "heartbeat_interval 0" reads as off
  std::int64_t total = 0;
  while (!t.empty()) {
    std::int64_t count = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), count);
    if (ec == std::errc::result_out_of_range) return tooLong(text);
    if (ec != std::errc() || count < 0 || end == t.data()) return malformed(text);
    t.remove_prefix(static_cast<std::size_t>(end - t.data()));
    const DurationUnit* unit = nullptr;
    for (const DurationUnit& candidate : kParseUnits) {
      if (startsWithIgnoreCase(t, candidate.suffix)) {
        unit = &candidate;
        break;
      }
    }
    if (unit == nullptr) return malformed(text);
    t.remove_prefix(unit->suffix.size());
    std::int64_t millis = 0;
    if (__builtin_mul_overflow(count, unit->millis, &millis) ||
        __builtin_add_overflow(total, millis, &total)) {
      return tooLong(text);
    }
  }
  return Millis(total);
}

std::string formatDuration(Millis value) {
  const std::int64_t millis = value.count();
  if (millis == 0) return "0s";
  for (const DurationUnit& unit : kFormatUnits) {
    if (millis % unit.millis == 0) return std::to_string(millis / unit.millis) + std::string(unit.suffix);
  }
  return std::to_string(millis) + "ms";  // unreachable: 1 ms divides everything
}

}  // namespace npac::common
