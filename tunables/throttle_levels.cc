#include "tunables/throttle_levels.h"

#include <array>
#include <cstdint>
#include <string>

#include "tunables/text.h"

namespace npac::tunables {
namespace {

struct Level {
  Key<std::int64_t> onset;
  Key<std::int64_t> abatement;
};

constexpr std::array<Level, 3> kLevels{{{kThrottleOnset1, kThrottleAbatement1},
                                        {kThrottleOnset2, kThrottleAbatement2},
                                        {kThrottleOnset3, kThrottleAbatement3}}};

std::string where(std::string_view spid) {
  return spid.empty() ? std::string(" (global)") : cat(" (provider ", spid, ")");
}

}  // namespace

bool isThrottleLevel(TunableId id) {
  for (const Level& level : kLevels) {
    if (level.onset.id == id || level.abatement.id == id) return true;
  }
  return false;
}

Status checkThrottleLevels(const TunableSnapshot& snapshot, std::string_view spid) {
  std::array<std::int64_t, 3> onset{};
  std::array<std::int64_t, 3> abatement{};
  for (std::size_t n = 0; n < kLevels.size(); ++n) {
    onset[n] = snapshot.get(kLevels[n].onset, spid);
    abatement[n] = snapshot.get(kLevels[n].abatement, spid);
  }
  return checkLevelPercentages(onset, abatement, "throttle_", where(spid));
}

Status checkLevelPercentages(const std::array<std::int64_t, 3>& onsets, const std::array<std::int64_t, 3>& abatements,
                             std::string_view prefix, std::string_view suffix) {
  std::int64_t previous_onset = 0;
  std::int64_t previous_abatement = 0;
  bool previous_in_use = true;
  for (std::size_t n = 0; n < onsets.size(); ++n) {
    const std::int64_t onset = onsets[n];
    const std::int64_t abatement = abatements[n];
    const std::string level = std::to_string(n + 1);
    const bool in_use = n == 0 || (onset != 0 && abatement != 0);
    if (!in_use) {
      previous_in_use = false;
      continue;
    }
    if (!previous_in_use) {
      return Status::inconsistent(cat("throttle level ", level, " is set but level ",
                                      std::to_string(n), " is not", suffix));
    }
    if (abatement >= onset) {
      return Status::inconsistent(cat(prefix, "abatement_", level, " (",
                                      std::to_string(abatement), "%) must be below ", prefix, "onset_",
                                      level, " (", std::to_string(onset), "%)", suffix));
    }
    if (n > 0 && onset <= previous_onset) {
      return Status::inconsistent(cat(prefix, "onset_", level, " (", std::to_string(onset),
                                      "%) must exceed ", prefix, "onset_", std::to_string(n), " (",
                                      std::to_string(previous_onset), "%)", suffix));
    }
    if (n > 0 && abatement <= previous_abatement) {
      return Status::inconsistent(
          cat(prefix, "abatement_", level, " (", std::to_string(abatement),
              "%) must exceed ", prefix, "abatement_", std::to_string(n), " (",
              std::to_string(previous_abatement), "%)", suffix));
    }
    previous_onset = onset;
    previous_abatement = abatement;
  }
  return Status::ok();
}

}  // namespace npac::tunables
