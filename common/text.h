// Small text helpers for what a person wrote or a peer sent as text (tunable names,
// durations, config file lines, HTTP header values): ASCII only and locale-independent,
// unlike std::tolower and std::isspace.
//
// Threading: pure functions.
#pragma once

#include <string_view>

namespace npac::common {

constexpr char asciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `text` without its leading and trailing spaces and tabs: HTTP's optional whitespace
// (RFC 9110 5.6.3 "OWS") and the whitespace of a TOML line (TOML 1.0 "Spec").
constexpr std::string_view trimBlanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace npac::common
