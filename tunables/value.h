// Typed tunable values and their text forms.
//
// A tunable holds one of five kinds of value. Operators type them as text (npacctl, the
// admin API) and the database stores them as text, so each kind has a parser that
// accepts what a person would type and a formatter that produces one canonical spelling:
//
//   bool         on | off | true | false (any case)      canonical: on, off
//   integer      decimal, optional sign                  canonical: decimal
//   duration     <n><unit>[<n><unit>...], units d h m s ms; a bare 0 is allowed
//                ("15m", "900s", "365d", "250ms", "1h30m")
//                                                        canonical: the largest unit that
//                                                        divides exactly: 900s -> 15m,
//                                                        1h30m -> 90m, 0 -> 0s
//   enumeration  one of the declared names (any case)    canonical: the declared name
//   string       printable ASCII                         canonical: as typed
//
// Parsing is total: bad text gives a specific ErrorCode (never an exception). Range and
// enumeration checks need the catalogue entry and live in catalogue.h.
//
// Threading: values are plain data; the functions here are pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "tunables/status.h"

namespace npac::tunables {

// Durations are kept in milliseconds: the finest unit an operator can type.
using Duration = std::chrono::milliseconds;

// An enumeration value: the index of the name in the tunable's allowed list.
struct EnumValue {
  std::uint32_t index = 0;
  friend bool operator==(const EnumValue&, const EnumValue&) = default;
};

enum class ValueType : std::uint8_t { kBool, kInteger, kDuration, kEnum, kString };

std::string_view toString(ValueType type);

// The variant's alternative order follows ValueType.
using Value = std::variant<bool, std::int64_t, Duration, EnumValue, std::string>;

ValueType typeOf(const Value& value);

// Parsers for the text forms above. On failure `out` is untouched and the Status says
// why (kWrongType for unparseable text, kOutOfRange for numbers that overflow int64).
Status parseBool(std::string_view text, bool* out);
Status parseInteger(std::string_view text, std::int64_t* out);
Status parseDuration(std::string_view text, Duration* out);

std::string formatBool(bool value);
std::string formatDuration(Duration value);

}  // namespace npac::tunables
