#include "npac/npacd/core/progress_fence.h"

#include <spdlog/spdlog.h>

#include "db/lease_store.h"
#include "db/storage_health.h"

namespace npac::npacd {

db::Status ProgressFence::check(const std::string& spid) {
  if (!lease_) return db::Status::ok();
  const std::optional<std::int64_t> epoch = lease_->epoch_of ? lease_->epoch_of(spid) : std::nullopt;
  if (!epoch) {
    return db::Status::make(db::Status::Code::kFenced,
                            "node '" + lease_->owner + "' holds no lease on provider " + spid);
  }
  return db::LeaseStore(db_).fence(spid, lease_->owner, *epoch);
}

std::optional<db::Status> ProgressFence::checkAll(const std::vector<ProgressWrite>& writes,
                                                  std::map<std::string, db::Status>& checked) {
  for (const ProgressWrite& w : writes) {
    if (checked.count(w.spid) != 0) continue;
    db::Status status = check(w.spid);
    if (db::isStorageFailure(status)) return status;
    checked.emplace(w.spid, status);
  }
  return std::nullopt;
}

void ProgressFence::reportFenced(const std::string& spid, const db::Status& why, std::size_t writes) {
  if (on_refused_) on_refused_(spid);
  fenced_now_.insert(spid);
  fenced_writes_ += writes;
  spdlog::error("outbound queue: {} delivery-progress write(s) for provider {} refused: {}", writes, spid,
                why.toString());
  if (lease_ && lease_->on_fenced) lease_->on_fenced(spid, why);
}

void ProgressFence::reportDropped(const std::map<std::string, db::Status>& checked,
                                  const std::map<std::string, std::size_t>& dropped) {
  for (const auto& [spid, count] : dropped) {
    const db::Status& why = checked.at(spid);
    if (why.code() == db::Status::Code::kFenced) {
      reportFenced(spid, why, count);
    } else {
      spdlog::error("outbound queue: {} delivery-progress write(s) for provider {} dropped: the lease check "
                    "failed: {}", count, spid, why.toString());
    }
  }
}

void ProgressFence::committed(const std::vector<ProgressWrite>& writes,
                              const std::map<std::string, std::size_t>& dropped) {
  if (fenced_now_.empty()) return;
  for (const ProgressWrite& w : writes) {
    if (dropped.count(w.spid) == 0) fenced_now_.erase(w.spid);
  }
}

}  // namespace npac::npacd
