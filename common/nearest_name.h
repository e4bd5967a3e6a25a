// The name a person most likely meant when they typed one that does not exist: npacctl's
// commands (`npacctl sp lsit` → "list"), npacd's tunables (`bind_timout` →
// "bind_timeout"). One rule for every program, so a suggestion reads the same wherever a
// name was mistyped.
//
// The distance is the optimal string alignment distance (Damerau–Levenshtein restricted
// to non-overlapping edits: insert, delete, substitute, swap two neighbours — "lsit" is
// one swap from "list"), compared without regard to ASCII case. A name is suggested when
// it is the closest and at most max(1, length of the typed word / 4) edits away, or,
// failing that, when it is the only name that begins with the typed word (two characters
// or more: "tok" → "token"). Ties go to the name listed first.
//
// Threading: pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npac::common {

// Edits (insert, delete, substitute, swap of neighbours) from `a` to `b`, ASCII case ignored.
std::size_t editDistance(std::string_view a, std::string_view b);

// The name of `names` that `word` most likely meant, per the rule above; nullopt when
// none is close enough (or `word` is itself one of them).
std::optional<std::string> nearestName(std::string_view word, const std::vector<std::string>& names);

// " (did you mean 'list'?)" for a word with a nearest name, else "".
std::string didYouMean(std::string_view word, const std::vector<std::string>& names);

}  // namespace npac::common
