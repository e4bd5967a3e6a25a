#include "tunables/value.h"

#include "tunables/text.h"

#include <array>
#include <cctype>
#include <charconv>
#include <string>

namespace npac::tunables {
namespace {

struct DurationUnit {
  std::string_view suffix;
  std::int64_t millis;
};

// Longest suffix first so that "ms" is not read as "m" followed by junk; the formatter
// walks the same table from the largest unit down, skipping "ms" until last.
constexpr std::int64_t kSecond = 1000;
constexpr std::int64_t kMinute = 60 * kSecond;
constexpr std::int64_t kHour = 60 * kMinute;
constexpr std::int64_t kDay = 24 * kHour;
constexpr std::array<DurationUnit, 5> kParseUnits{{
    {"ms", 1}, {"d", kDay}, {"h", kHour}, {"m", kMinute}, {"s", kSecond}}};
constexpr std::array<DurationUnit, 5> kFormatUnits{{
    {"d", kDay}, {"h", kHour}, {"m", kMinute}, {"s", kSecond}, {"ms", 1}}};

std::string quoted(std::string_view text) {
  std::string out = "\"";
  out.append(text);
  out += '"';
  return out;
}

}  // namespace

std::string_view toString(ValueType type) {
  switch (type) {
    case ValueType::kBool: return "bool";
    case ValueType::kInteger: return "integer";
    case ValueType::kDuration: return "duration";
    case ValueType::kEnum: return "enumeration";
    case ValueType::kString: return "string";
  }
  return "unknown";
}

ValueType typeOf(const Value& value) { return static_cast<ValueType>(value.index()); }

Status parseBool(std::string_view text, bool* out) {
  const std::string_view t = trim(text);
  if (equalsIgnoreCase(t, "on") || equalsIgnoreCase(t, "true")) {
    *out = true;
    return Status::ok();
  }
  if (equalsIgnoreCase(t, "off") || equalsIgnoreCase(t, "false")) {
    *out = false;
    return Status::ok();
  }
  return Status::wrongType("expected on, off, true or false, got " + quoted(text));
}

Status parseInteger(std::string_view text, std::int64_t* out) {
  std::string_view t = trim(text);
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  if (t.empty()) return Status::wrongType("expected an integer, got " + quoted(text));
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return Status::outOfRange(quoted(text) + " does not fit in a 64-bit integer");
  }
  if (ec != std::errc() || end != t.data() + t.size()) {
    return Status::wrongType("expected an integer, got " + quoted(text));
  }
  *out = value;
  return Status::ok();
}

Status parseDuration(std::string_view text, Duration* out) {
  std::string_view t = trim(text);
  const std::string usage =
      "expected a duration such as 250ms, 900s, 15m, 2h, 365d or 1h30m, got " + quoted(text);
  if (t.empty()) return Status::wrongType(usage);
  if (t == "0") {  // zero needs no unit: "heartbeat_interval 0" reads naturally as off
    *out = Duration(0);
    return Status::ok();
  }
  std::int64_t total = 0;
  while (!t.empty()) {
    std::int64_t count = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), count);
    if (ec == std::errc::result_out_of_range) {
      return Status::outOfRange(quoted(text) + " is too long a duration");
    }
    if (ec != std::errc() || count < 0 || end == t.data()) return Status::wrongType(usage);
    t.remove_prefix(static_cast<std::size_t>(end - t.data()));
    const DurationUnit* unit = nullptr;
    for (const DurationUnit& candidate : kParseUnits) {
      if (t.size() >= candidate.suffix.size() &&
          equalsIgnoreCase(t.substr(0, candidate.suffix.size()), candidate.suffix)) {
        unit = &candidate;
        break;
      }
    }
    if (unit == nullptr) return Status::wrongType(usage);
    t.remove_prefix(unit->suffix.size());
    std::int64_t millis = 0;
    if (__builtin_mul_overflow(count, unit->millis, &millis) ||
        __builtin_add_overflow(total, millis, &total)) {
      return Status::outOfRange(quoted(text) + " is too long a duration");
    }
  }
  *out = Duration(total);
  return Status::ok();
}

std::string formatBool(bool value) { return value ? "on" : "off"; }

std::string formatDuration(Duration value) {
  const std::int64_t millis = value.count();
  if (millis == 0) return "0s";
  for (const DurationUnit& unit : kFormatUnits) {
    if (millis % unit.millis == 0) {
      return std::to_string(millis / unit.millis) + std::string(unit.suffix);
    }
  }
  return std::to_string(millis) + "ms";  // unreachable: 1 ms divides everything
}

}  // namespace npac::tunables
