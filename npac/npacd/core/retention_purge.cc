#include "npac/npacd/core/retention_purge.h"

#include <spdlog/spdlog.h>

#include "db/association_log_store.h"
#include "db/outbound_queue.h"
#include "db/storage_health.h"
#include "tunables/catalogue.h"

namespace npac::npacd {

RetentionPurge::Outcome RetentionPurge::runIfDue() {
  Outcome outcome;
  const associations::TimePoint now = clock_.now();
  if (last_run_ && (more_ ? now < next_due_ : now - *last_run_ < kPurgeInterval)) return outcome;
  last_run_ = now;
  outcome.ran = true;
  const db::TimeMs wall = clock_.wallMs();
  const db::TimeMs queue_cutoff = wall - registry_.get(tunables::kQueueRetention).count();
  const db::TimeMs log_cutoff = wall - registry_.get(tunables::kAssociationLogRetention).count();
  auto messages = db::OutboundQueue(db_).purgeAcknowledgedBefore(queue_cutoff, kPurgeBatch);
  auto log_rows = db::AssociationLogStore(db_).purgeBefore(log_cutoff, kPurgeBatch);
  if (messages.isOk()) outcome.messages = *messages;
  if (log_rows.isOk()) outcome.log_rows = *log_rows;
  // A storage failure is logged once by db::StorageHealth; the next run tries again.
  if (!messages.isOk() && !db::isStorageFailure(messages.status())) {
    spdlog::error("retention purge of the outbound queue: {}", messages.status().toString());
  }
  if (!log_rows.isOk() && !db::isStorageFailure(log_rows.status())) {
    spdlog::error("retention purge of the association log: {}", log_rows.status().toString());
  }
  more_ = outcome.messages == kPurgeBatch || outcome.log_rows == kPurgeBatch;
  const associations::TimePoint done = clock_.now();
  next_due_ = done + kPurgePauseFactor * (done - now);
  // One line per catch-up, not per run (a backlog of millions is hundreds of runs a
  // minute): when the purge is through, or once per kPurgeInterval while it is not.
  removed_messages_ += outcome.messages;
  removed_log_rows_ += outcome.log_rows;
  if (!reported_at_) reported_at_ = now;
  if ((removed_messages_ > 0 || removed_log_rows_ > 0) && (!more_ || done - *reported_at_ >= kPurgeInterval)) {
    spdlog::info("retention purge: {} acknowledged message(s) older than queue_retention and {} "
                 "association-log row(s) older than association_log_retention removed{}",
                 removed_messages_, removed_log_rows_, more_ ? " so far; more follow" : "");
    removed_messages_ = 0;
    removed_log_rows_ = 0;
    reported_at_ = done;
  }
  if (!more_) reported_at_.reset();
  return outcome;
}

std::optional<associations::Duration> RetentionPurge::continueAfter() const {
  if (!more_) return std::nullopt;
  const associations::TimePoint now = clock_.now();
  return next_due_ > now ? next_due_ - now : associations::Duration::zero();
}

}  // namespace npac::npacd
