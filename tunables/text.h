// Small text helpers shared by the tunables sources (not part of the public API).
//
// cat() joins pieces by appending into one string. It exists because g++ 12 at -O3 emits a
// false -Wrestrict warning for `"literal" + std::string(...)` (GCC bug 105329), and the
// build is warnings-clean.
#pragma once

#include <string>
#include <string_view>

namespace npac::tunables {

template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::string out;
  (out.append(std::string_view(parts)), ...);
  return out;
}

}  // namespace npac::tunables
