// RetentionPurge: the job that keeps the database from growing without bound — removes
// acknowledged outbound messages older than `queue_retention` and association-log rows
// older than `association_log_retention`, never a message that is not acknowledged
// (docs/DATABASE.md "Retention"). Off the hot path and bounded: it runs at most once per
// kPurgeInterval, deletes at most kPurgeBatch rows per table per run, and runs again at
// the next tick while a table still had a full batch to delete.
//
// Threading: the core thread (the core's connection). Time: the injected CoreClock.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

#include "db/database.h"
#include "npac/npacd/core/clock.h"
#include "tunables/registry.h"

namespace npac::npacd {

inline constexpr std::chrono::minutes kPurgeInterval{1};
inline constexpr std::size_t kPurgeBatch = 2000;

class RetentionPurge {
 public:
  RetentionPurge(db::Database& db, const tunables::TunableRegistry& registry, const CoreClock& clock)
      : db_(db), registry_(registry), clock_(clock) {}

  struct Outcome {
    bool ran = false;
    std::size_t messages = 0;  // acknowledged messages removed
    std::size_t log_rows = 0;  // association-log rows removed
  };
  // Runs if due (first call, kPurgeInterval since the last run, or a full batch left).
  Outcome runIfDue();

 private:
  db::Database& db_;
  const tunables::TunableRegistry& registry_;
  const CoreClock& clock_;
  std::optional<associations::TimePoint> last_run_;
  bool more_ = false;
};

}  // namespace npac::npacd
