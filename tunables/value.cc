#include "tunables/value.h"

#include "common/duration.h"
#include "tunables/text.h"

#include <array>
#include <cctype>
#include <charconv>
#include <string>

namespace npac::tunables {
namespace {

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

// The one duration grammar (common/duration.h), with the tunables' status codes.
Status parseDuration(std::string_view text, Duration* out) {
  const Result<common::Millis> d = common::parseDuration(text);
  if (d.status().code() == StatusCode::kOutOfRange) {
    return Status::outOfRange(quoted(text) + " is too long a duration");
  }
  if (!d.isOk()) {
    return Status::wrongType("expected a duration such as " + std::string(common::kDurationExamples) +
                             ", got " + quoted(text));
  }
  *out = d.value();
  return Status::ok();
}

std::string formatBool(bool value) { return value ? "on" : "off"; }

std::string formatDuration(Duration value) { return common::formatDuration(value); }

}  // namespace npac::tunables
