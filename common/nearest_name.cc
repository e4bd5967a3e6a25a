#include "common/nearest_name.h"

#include <algorithm>

#include "common/text.h"

namespace npac::common {
namespace {

bool startsWith(std::string_view name, std::string_view prefix) {
  if (prefix.size() > name.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (asciiLower(name[i]) != asciiLower(prefix[i])) return false;
  }
  return true;
}

}  // namespace

std::size_t editDistance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: the swap looks two rows back.
  const std::size_t n = b.size();
  std::vector<std::size_t> before(n + 1), previous(n + 1), current(n + 1);
  for (std::size_t j = 0; j <= n; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= n; ++j) {
      const std::size_t cost = asciiLower(a[i - 1]) == asciiLower(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && asciiLower(a[i - 1]) == asciiLower(b[j - 2]) &&
          asciiLower(a[i - 2]) == asciiLower(b[j - 1])) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[n];
}

std::optional<std::string> nearestName(std::string_view word, const std::vector<std::string>& names) {
  if (word.empty()) return std::nullopt;
  const std::size_t limit = std::max<std::size_t>(1, word.size() / 4);
  const std::string* best = nullptr;
  std::size_t best_distance = limit + 1;
  for (const std::string& name : names) {
    const std::size_t d = editDistance(word, name);
    if (d == 0) return std::nullopt;  // the word is a name: nothing to suggest
    if (d < best_distance) {
      best = &name;
      best_distance = d;
    }
  }
  if (best != nullptr) return *best;
  if (word.size() < 2) return std::nullopt;
  const std::string* only = nullptr;
  for (const std::string& name : names) {
    if (!startsWith(name, word)) continue;
    if (only != nullptr) return std::nullopt;  // "t" of tunable and token: ambiguous
    only = &name;
  }
  return only != nullptr ? std::optional<std::string>(*only) : std::nullopt;
}

std::string didYouMean(std::string_view word, const std::vector<std::string>& names) {
  std::optional<std::string> name = nearestName(word, names);
  return name ? " (did you mean '" + *name + "'?)" : std::string();
}

}  // namespace npac::common
