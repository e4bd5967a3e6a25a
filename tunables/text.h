// Small text helpers shared by the tunables sources (not part of the public API):
// cat(), trim(), equalsIgnoreCase().
//
// cat() joins pieces by appending into one string. It exists because g++ 12 at -O3 emits a
// false -Wrestrict warning for `"literal" + std::string(...)` (GCC bug 105329), and the
// build is warnings-clean.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>

namespace npac::tunables {

template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

// Leading and trailing white space removed (values typed by operators).
inline std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// ASCII case-insensitive equality (enum names, on/off/true/false).
inline bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace npac::tunables
