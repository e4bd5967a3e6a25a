#include "npac/npacd/core/delivery_store.h"

#include <spdlog/spdlog.h>

#include "db/database.h"
#include "db/lease_store.h"
#include "db/statement.h"
#include "db/storage_health.h"
#include "db/transaction.h"

namespace npac::npacd {

namespace {

// Rounds to wait before trying to load a ReadyQueue again when the provider had more
// queued than kReadyLoadAtMost (the count costs an index scan of that many entries).
constexpr std::uint32_t kLoadBackoffRounds = 16;

}  // namespace

DeliveryStore::DeliveryStore(db::Database& progress_db, std::function<void()> schedule_flush)
    : db_(progress_db),
      queue_(progress_db),
      schedule_flush_(std::move(schedule_flush)) {}

ReadyQueue* DeliveryStore::completeReady(const std::string& spid) {
  auto it = ready_.find(spid);
  return it != ready_.end() && it->second.queue.complete() ? &it->second.queue : nullptr;
}

ReadyQueue* DeliveryStore::ready(const std::string& spid) {
  if (ReadyQueue* kept = completeReady(spid)) return kept;
  Ready& entry = ready_.try_emplace(spid, ready_limits_.per_provider).first->second;
  if (entry.skip_loads > 0) {
    --entry.skip_loads;
    return nullptr;
  }
  // The mark first, then the snapshot: a row of this writer committed in between is in
  // the snapshot, one committed after it has a higher id than the mark.
  auto snapshot = committed_through_ ? queue_.queuedSnapshot(spid, kReadyLoadAtMost, committed_through_())
                                     : queue_.queuedSnapshot(spid, kReadyLoadAtMost);
  if (!snapshot.isOk()) return nullptr;  // the database read that follows reports it
  std::size_t bytes = 0;
  if (snapshot->has_value()) {
    for (const db::QueuedMessage& row : (*snapshot)->messages) bytes += row.pdu.size();
  }
  if (!snapshot->has_value() || ready_total_ + (*snapshot)->messages.size() > ready_limits_.total ||
      ready_bytes_ + bytes > ready_limits_.total_bytes) {
    entry.skip_loads = kLoadBackoffRounds;
    return nullptr;
  }
  entry.queue.load(std::move((*snapshot)->messages), (*snapshot)->committed_through);
  accountReady(entry.queue, 0, 0);
  return &entry.queue;
}

void DeliveryStore::accountReady(const ReadyQueue& queue, std::size_t size, std::size_t bytes) {
  ready_total_ = ready_total_ - size + queue.size();
  ready_bytes_ = ready_bytes_ - bytes + queue.bytes();
}

void DeliveryStore::dropReady(const std::string& spid) {
  auto it = ready_.find(spid);
  if (it == ready_.end()) return;
  const std::size_t size = it->second.queue.size();
  const std::size_t bytes = it->second.queue.bytes();
  it->second.queue.invalidate();
  accountReady(it->second.queue, size, bytes);
}

void DeliveryStore::dropAllReady() {
  for (auto& [spid, entry] : ready_) entry.queue.invalidate();
  ready_total_ = 0;
  ready_bytes_ = 0;
}

void DeliveryStore::committed(const std::string& spid, std::vector<db::QueuedMessage> rows) {
  auto it = ready_.find(spid);
  if (it == ready_.end() || !it->second.queue.complete()) return;  // the database has them
  ReadyQueue& queue = it->second.queue;
  for (db::QueuedMessage& row : rows) {
    if (!queue.covers(row.id) && (ready_total_ >= ready_limits_.total ||
                                  ready_bytes_ + row.pdu.size() > ready_limits_.total_bytes)) {
      spdlog::debug("outbound queue: {} has more queued than memory keeps ({} messages, {} bytes held); "
                    "its delivery reads the database until its backlog drains",
                    spid, ready_total_, ready_bytes_);
      dropReady(spid);
      return;
    }
    const std::size_t size = queue.size();
    const std::size_t bytes = queue.bytes();
    const bool kept = queue.add(std::move(row));  // false: beyond its capacity, dropped whole
    accountReady(queue, size, bytes);
    if (!kept) return;
  }
}

void DeliveryStore::noteSubmitted(const std::string& spid, const std::vector<db::MessageId>& ids) {
  auto it = ready_.find(spid);
  if (it == ready_.end() || !it->second.queue.complete()) return;
  for (db::MessageId id : ids) {
    if (!it->second.queue.covers(id)) return dropReady(spid);
  }
}

void DeliveryStore::forgetReady(const std::string& spid) {
  dropReady(spid);
  known_.forget(spid);
}

void DeliveryStore::removeReady(const std::string& spid, db::MessageId id) {
  auto it = ready_.find(spid);
  if (it == ready_.end()) return;
  const std::size_t size = it->second.queue.size();
  const std::size_t bytes = it->second.queue.bytes();
  it->second.queue.remove(id);
  accountReady(it->second.queue, size, bytes);
}

void DeliveryStore::becameUnhealthy(const db::Status& status, const char* what) {
  dropAllReady();  // what failed to write may differ from what is kept
  known_.forgetAll();
  if (logged_unhealthy_) return;
  logged_unhealthy_ = true;
  spdlog::error("outbound queue: {} failed ({}); no new PDU leaves until the database takes "
                "writes again — in-flight answers are kept and applied then",
                what, db::toString(status.code()));
}

void DeliveryStore::readFailed(const db::Status& status, const char* what) {
  if (db::isStorageFailure(status)) {
    read_failed_ = true;
    becameUnhealthy(status, what);
  } else {
    spdlog::error("outbound queue: {}: {}", what, status.toString());
  }
}

db::Result<std::vector<db::QueuedMessage>> DeliveryStore::nextQueued(const std::string& spid,
                                                                    std::uint32_t functions,
                                                                    std::size_t limit) {
  // A complete ReadyQueue is exact without a flush (progress writes update it as they
  // are collected): the rounds of several providers share one transaction
  // (AssociationManager::deliverDue). What is read or loaded from the database needs
  // what was collected committed first.
  ReadyQueue* kept = completeReady(spid);
  if (kept == nullptr) {
    flush();
    kept = ready(spid);
  }
  if (kept != nullptr) {
    ++ready_rounds_;
    std::vector<db::QueuedMessage> rows = kept->next(functions, limit);
    known_.rememberQueued(spid, rows);
    return rows;
  }
  ++database_rounds_;
  auto rows = queue_.nextQueued(spid, functions, limit);
  if (!rows.isOk()) {
    readFailed(rows.status(), "reading the queue");
  } else {
    known_.rememberQueued(spid, *rows);
  }
  return rows;
}

db::Result<db::QueuedMessage> DeliveryStore::get(db::MessageId id) {
  flush();
  auto row = queue_.get(id);
  if (!row.isOk() && row.status().code() != db::Status::Code::kNotFound) {
    readFailed(row.status(), "reading a message");
  }
  return row;
}

db::Result<std::vector<db::QueuedMessage>> DeliveryStore::unacknowledged(const std::string& spid,
                                                                        std::size_t limit) {
  flush();
  auto rows = queue_.unacknowledged(spid, limit);
  if (!rows.isOk()) readFailed(rows.status(), "reading the queue for recovery");
  return rows;
}

db::Result<std::vector<db::QueuedMessage>> DeliveryStore::createdBetween(const std::string& spid,
                                                                        db::TimeMs from, db::TimeMs to,
                                                                        std::size_t limit) {
  flush();
  auto rows = queue_.createdBetween(spid, from, to, limit);
  if (!rows.isOk()) readFailed(rows.status(), "reading the queue for recovery");
  return rows;
}

db::Result<std::map<std::uint32_t, std::size_t>> DeliveryStore::queuedByMask(const std::string& spid) {
  flush();
  return queue_.queuedByMask(spid);
}

db::Status DeliveryStore::apply(const Write& w) {
  db::Status status = db::Status::internal("unknown progress write");
  switch (w.kind) {
    case Write::Kind::kSent: status = queue_.markSent(w.ids, w.association, w.at, known_.of(w.spid)); break;
    case Write::Kind::kAcknowledged: status = queue_.markAcknowledged(w.ids, w.at, known_.of(w.spid)); break;
    case Write::Kind::kFailed: status = queue_.markFailed(w.ids.front(), w.reason, w.at); break;
    case Write::Kind::kRequeueAssociation: status = queue_.requeueAssociation(w.spid, w.association).status(); break;
    case Write::Kind::kMoveSent: status = queue_.moveSent(w.ids.front(), w.association); break;
    case Write::Kind::kRequeue: status = queue_.requeue(w.ids).status(); break;
  }
  if (status.isOk()) {
    known_.learn(w);
  } else {
    known_.forget(w.spid);  // a refusal: what is remembered of the provider may be wrong
  }
  return status;
}

db::Status DeliveryStore::checkFence(const std::string& spid) {
  if (!fence_) return db::Status::ok();
  const std::optional<std::int64_t> epoch = fence_->epoch_of ? fence_->epoch_of(spid) : std::nullopt;
  if (!epoch) {
    return db::Status::make(db::Status::Code::kFenced,
                            "node '" + fence_->owner + "' holds no lease on provider " + spid);
  }
  return db::LeaseStore(db_).fence(spid, fence_->owner, *epoch);
}

void DeliveryStore::reportFenced(const std::string& spid, const db::Status& why, std::size_t writes) {
  dropReady(spid);
  known_.forget(spid);
  fenced_now_.insert(spid);
  fenced_writes_ += writes;
  spdlog::error("outbound queue: {} delivery-progress write(s) for provider {} refused: {}", writes, spid,
                why.toString());
  if (fence_ && fence_->on_fenced) fence_->on_fenced(spid, why);
}

db::Status DeliveryStore::applyFenced(const Write& w) {
  if (!fence_) return apply(w);
  db::Transaction txn(db_);
  if (db::Status status = txn.begin(); !status.isOk()) return status;
  if (db::Status status = checkFence(w.spid); !status.isOk()) return status;
  if (db::Status status = apply(w); !status.isOk()) return status;
  db::Status committed = txn.commit();
  if (!committed.isOk()) known_.forget(w.spid);  // learnt from a write that did not commit
  return committed;
}

void DeliveryStore::write(Write w) {
  if (!backlog_.empty()) {
    // Order matters (sent before acknowledged): behind the backlog, never around it.
    backlog_.push_back(std::move(w));
    ++deferred_;
    return;
  }
  db::Status status = applyFenced(w);
  if (status.isOk()) {
    fenced_now_.erase(w.spid);
    return;
  }
  if (status.code() == db::Status::Code::kFenced) return reportFenced(w.spid, status, 1);
  if (db::isStorageFailure(status)) {
    becameUnhealthy(status, "recording delivery progress");
    backlog_.push_back(std::move(w));
    ++deferred_;
    return;
  }
  dropReady(w.spid);
  spdlog::error("outbound queue: a delivery-progress write was refused: {}", status.toString());
}

void DeliveryStore::collected() {
  if (!pending() && schedule_flush_) schedule_flush_();
}

void DeliveryStore::markSent(const std::string& spid, std::vector<db::MessageId> ids,
                             db::AssociationId association, db::TimeMs at) {
  if (ids.empty()) return;
  collected();
  for (db::MessageId id : ids) removeReady(spid, id);
  pending_sent_.push_back(Write{Write::Kind::kSent, spid, std::move(ids), association, at, {}});
}

void DeliveryStore::acknowledge(const std::string& spid, db::MessageId id, db::TimeMs at) {
  removeReady(spid, id);  // a late answer may acknowledge a message put back to queued
  collected();
  pending_acks_.emplace_back(spid, id);
  pending_acks_at_ = at;
}

std::vector<DeliveryStore::Write> DeliveryStore::takePending() {
  std::vector<Write> writes;
  writes.swap(pending_sent_);
  if (!pending_acks_.empty()) {
    // One acknowledging write per provider (the fence's unit), providers in first-seen order.
    std::vector<std::pair<std::string, db::MessageId>> acks;
    acks.swap(pending_acks_);
    std::map<std::string, std::size_t> slot;
    for (auto& [spid, id] : acks) {
      auto [it, added] = slot.emplace(spid, writes.size());
      if (added) writes.push_back(Write{Write::Kind::kAcknowledged, spid, {}, 0, pending_acks_at_, {}});
      writes[it->second].ids.push_back(id);
    }
  }
  return writes;
}

void DeliveryStore::defer(std::vector<Write>& writes) {
  for (Write& w : writes) backlog_.push_back(std::move(w));
  deferred_ += writes.size();
}

std::optional<db::Status> DeliveryStore::checkFences(const std::vector<Write>& writes,
                                                     std::map<std::string, db::Status>& fenced) {
  for (const Write& w : writes) {
    if (fenced.count(w.spid) != 0) continue;
    db::Status status = checkFence(w.spid);
    if (db::isStorageFailure(status)) return status;
    fenced.emplace(w.spid, status);
  }
  return std::nullopt;
}

void DeliveryStore::reportDropped(const std::map<std::string, db::Status>& fenced,
                                  const std::map<std::string, std::size_t>& fenced_count) {
  for (const auto& [spid, count] : fenced_count) {
    const db::Status& why = fenced.at(spid);
    if (why.code() == db::Status::Code::kFenced) {
      reportFenced(spid, why, count);
    } else {
      spdlog::error("outbound queue: {} delivery-progress write(s) for provider {} dropped: the lease check "
                    "failed: {}", count, spid, why.toString());
    }
  }
}

void DeliveryStore::flush() {
  if (!pending()) return;
  std::vector<Write> writes = takePending();
  const auto deferAll = [&](const db::Status& status) {
    becameUnhealthy(status, "recording delivery progress");
    defer(writes);
  };
  if (!backlog_.empty()) {
    // Order matters (sent before acknowledged): behind the backlog, never around it.
    defer(writes);
    return;
  }
  db::Transaction turn(db_);
  if (db::Status status = turn.begin(); !status.isOk()) {
    if (db::isStorageFailure(status)) return deferAll(status);
    spdlog::error("outbound queue: cannot begin the delivery-progress transaction: {}",
                  status.toString());
    return;
  }
  // The fence, once per provider of the turn, before any of its writes.
  std::map<std::string, db::Status> fenced;
  std::map<std::string, std::size_t> fenced_count;
  if (fence_) {
    if (std::optional<db::Status> failure = checkFences(writes, fenced)) {
      turn.rollback();
      return deferAll(*failure);
    }
  }
  std::vector<const Write*> acknowledged;  // applied acknowledging writes: their providers may settle
  for (const Write& w : writes) {
    if (auto it = fenced.find(w.spid); it != fenced.end() && !it->second.isOk()) {
      ++fenced_count[w.spid];
      continue;
    }
    // Each write is its own savepoint (db::OutboundQueue): a refused one is undone alone.
    db::Status status = apply(w);
    if (status.isOk()) {
      if (w.kind == Write::Kind::kAcknowledged) acknowledged.push_back(&w);
      continue;
    }
    if (db::isStorageFailure(status)) {
      turn.rollback();
      return deferAll(status);
    }
    dropReady(w.spid);
    spdlog::error("outbound queue: a delivery-progress write was refused: {}", status.toString());
  }
  settleAfter(acknowledged);  // in the turn's transaction: still one commit per turn
  if (db::Status status = turn.commit(); !status.isOk()) {
    known_.forgetAll();  // learnt from writes that did not commit
    if (db::isStorageFailure(status)) return deferAll(status);
    spdlog::error("outbound queue: the delivery-progress transaction did not commit: {}",
                  status.toString());
  } else if (!fenced_now_.empty()) {
    for (const Write& w : writes) {
      if (fenced_count.count(w.spid) == 0) fenced_now_.erase(w.spid);
    }
  }
  reportDropped(fenced, fenced_count);
}

void DeliveryStore::settleAfter(const std::vector<const Write*>& acknowledged) {
  for (const Write* write : acknowledged) {
    const Write& w = *write;
    Settling& entry = settling_[w.spid];
    entry.acks += w.ids.size();
    if (entry.acks < kSettleEveryAcks && w.at - entry.last < kSettleEveryMs) continue;
    db::Result<db::MessageId> mark = queue_.settle(w.spid, w.at);
    if (!mark.isOk()) {
      spdlog::warn("outbound queue: moving provider {}'s settled mark failed ({}); tried again with its next "
                   "acknowledgements", w.spid, mark.status().toString());
      continue;
    }
    entry = Settling{0, w.at};
    ++settles_;
  }
}

void DeliveryStore::markFailed(const std::string& spid, db::MessageId id, std::string reason, db::TimeMs at) {
  flush();
  removeReady(spid, id);
  write(Write{Write::Kind::kFailed, spid, {id}, 0, at, std::move(reason)});
}

void DeliveryStore::requeueAssociation(const std::string& spid, db::AssociationId association) {
  flush();  // what was answered there is acknowledged, not re-queued
  dropReady(spid);  // its messages come back to queued: the next round reads them
  write(Write{Write::Kind::kRequeueAssociation, spid, {}, association, 0, {}});
}

void DeliveryStore::moveSent(const std::string& spid, db::MessageId id, db::AssociationId association) {
  flush();  // the row must read `sent` before it moves
  write(Write{Write::Kind::kMoveSent, spid, {id}, association, 0, {}});
}

void DeliveryStore::requeue(const std::string& spid, std::vector<db::MessageId> ids) {
  if (ids.empty()) return;
  flush();
  dropReady(spid);  // they come back to queued: the next round reads them
  write(Write{Write::Kind::kRequeue, spid, std::move(ids), 0, 0, {}});
}

bool DeliveryStore::retry() {
  flush();
  while (!backlog_.empty()) {
    db::Status status = applyFenced(backlog_.front());
    if (!status.isOk()) {
      if (db::isStorageFailure(status)) return false;
      if (status.code() == db::Status::Code::kFenced) {
        reportFenced(backlog_.front().spid, status, 1);
        backlog_.pop_front();
        continue;
      }
      dropReady(backlog_.front().spid);
      spdlog::error("outbound queue: a deferred delivery-progress write was refused: {}",
                    status.toString());
    }
    backlog_.pop_front();
  }
  if (read_failed_) {
    // Probe with a cheap read before delivery resumes.
    if (!queue_.probe().isOk()) return false;
    read_failed_ = false;
  }
  if (logged_unhealthy_) {
    spdlog::warn("outbound queue: the database takes writes again; {} deferred progress write(s) "
                 "applied, delivery resumes",
                 deferred_);
    logged_unhealthy_ = false;
    deferred_ = 0;
  }
  return true;
}

}  // namespace npac::npacd
