// RetentionPurge: the job that keeps the database from growing without bound — removes
// acknowledged outbound messages older than `queue_retention` and association-log rows
// older than `association_log_retention`, never a message that is not acknowledged
// (docs/DATABASE.md "Retention"). Off the hot path and bounded: it runs at most once per
// kPurgeInterval, deletes at most kPurgeBatch rows per table per run, and, while a table
// still had a full batch to delete, runs again after a pause of kPurgePauseFactor times
// the last run's duration (continueAfter()): a backlog is purged as fast as one core
// thread's 1/(1 + kPurgePauseFactor) allows, each run holding the thread for one batch only.
// Paced by the tick alone (one batch per 500 ms), the purge removed at most 4,000 messages
// a second: less than npacd accepts, so a retention backlog never shrank under load.
//
// Threading: the core thread (the core's connection). Time: the injected common::TimeSource.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

#include "associations/outstanding.h"
#include "common/time_source.h"
#include "db/database.h"
#include "tunables/registry.h"

namespace npac::npacd {

inline constexpr std::chrono::minutes kPurgeInterval{1};
inline constexpr std::size_t kPurgeBatch = 500;
inline constexpr int kPurgePauseFactor = 3;

class RetentionPurge {
 public:
  RetentionPurge(db::Database& db, const tunables::TunableRegistry& registry, const common::TimeSource& clock)
      : db_(db), registry_(registry), clock_(clock) {}

  struct Outcome {
    bool ran = false;
    std::size_t messages = 0;  // acknowledged messages removed
    std::size_t log_rows = 0;  // association-log rows removed
  };
  // Runs if due: the first call, kPurgeInterval since the last run, or — a full batch
  // left — the pause after the last run over.
  Outcome runIfDue();
  // When the last run left more to delete: how long after now the next run is due (zero
  // or more). None when it did not: the next run is kPurgeInterval after the last.
  std::optional<associations::Duration> continueAfter() const;

 private:
  db::Database& db_;
  const tunables::TunableRegistry& registry_;
  const common::TimeSource& clock_;
  std::optional<associations::TimePoint> last_run_;
  associations::TimePoint next_due_{};  // with more_: the pause after the last run ends
  bool more_ = false;
  // Removed since the last log line (one line per catch-up, or per kPurgeInterval in one).
  std::size_t removed_messages_ = 0;
  std::size_t removed_log_rows_ = 0;
  std::optional<associations::TimePoint> reported_at_;
};

}  // namespace npac::npacd
