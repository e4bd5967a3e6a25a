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
  if (last_run_ && !more_ && now - *last_run_ < kPurgeInterval) return outcome;
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
  if (outcome.messages > 0 || outcome.log_rows > 0) {
    spdlog::info("retention purge: {} acknowledged message(s) older than queue_retention and {} "
                 "association-log row(s) older than association_log_retention removed{}",
                 outcome.messages, outcome.log_rows, more_ ? "; more follow" : "");
  }
  return outcome;
}

}  // namespace npac::npacd
