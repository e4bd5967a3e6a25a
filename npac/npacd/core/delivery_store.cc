#include "npac/npacd/core/delivery_store.h"

#include <spdlog/spdlog.h>

#include "db/database.h"
#include "db/storage_health.h"
#include "db/transaction.h"

namespace npac::npacd {

DeliveryStore::DeliveryStore(db::Database& progress_db, std::function<void()> schedule_flush)
    : db_(progress_db),
      queue_(progress_db),
      ready_(queue_),
      settle_(queue_),
      fence_(progress_db,
             [this](const std::string& spid) {
               ready_.drop(spid);
               known_.forget(spid);
             }),
      turn_(std::move(schedule_flush)) {}

void DeliveryStore::committed(const std::string& spid, std::vector<db::QueuedMessage> rows) {
  ready_.committed(spid, std::move(rows));
}

void DeliveryStore::noteSubmitted(const std::string& spid, const std::vector<db::MessageId>& ids) {
  ready_.noteSubmitted(spid, ids);
}

void DeliveryStore::forgetReady(const std::string& spid) {
  ready_.drop(spid);
  known_.forget(spid);
}

void DeliveryStore::becameUnhealthy(const db::Status& status, const char* what) {
  ready_.dropAll();  // what failed to write may differ from what is kept
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
  // (DeliveryScheduler::deliverDue). What is read or loaded from the database needs
  // what was collected committed first.
  if (std::optional<std::vector<db::QueuedMessage>> kept = ready_.next(spid, functions, limit, [this] { flush(); })) {
    known_.rememberQueued(spid, *kept);
    return std::move(*kept);
  }
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

db::Result<std::vector<db::QueuedMessage>> DeliveryStore::recoveryCandidates(const std::string& spid,
                                                                            std::optional<CreatedRange> created,
                                                                            std::size_t limit) {
  flush();
  auto rows = created ? queue_.createdBetween(spid, created->from, created->to, limit)
                      : queue_.unacknowledged(spid, limit);
  if (!rows.isOk()) readFailed(rows.status(), "reading the queue for recovery");
  return rows;
}

DeliveryStore::Figures DeliveryStore::figures() const {
  Figures out;
  out.backlog = backlog_.size();
  out.fenced_writes = fence_.fencedWrites();
  out.ready_rounds = ready_.rounds();
  out.database_rounds = ready_.databaseRounds();
  out.known_states = known_.total();
  out.ready_messages = ready_.messages();
  out.ready_bytes = ready_.bytes();
  out.settles = settle_.settles();
  return out;
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

db::Status DeliveryStore::applyFenced(const Write& w) {
  if (!fence_.active()) return apply(w);
  db::Transaction txn(db_);
  if (db::Status status = txn.begin(); !status.isOk()) return status;
  if (db::Status status = fence_.check(w.spid); !status.isOk()) return status;
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
    fence_.committed(w.spid);
    return;
  }
  if (status.code() == db::Status::Code::kFenced) return fence_.reportFenced(w.spid, status, 1);
  if (db::isStorageFailure(status)) {
    becameUnhealthy(status, "recording delivery progress");
    backlog_.push_back(std::move(w));
    ++deferred_;
    return;
  }
  ready_.drop(w.spid);
  spdlog::error("outbound queue: a delivery-progress write was refused: {}", status.toString());
}

void DeliveryStore::markSent(const std::string& spid, std::vector<db::MessageId> ids,
                             db::AssociationId association, db::TimeMs at) {
  if (ids.empty()) return;
  for (db::MessageId id : ids) ready_.remove(spid, id);
  turn_.sent(Write{Write::Kind::kSent, spid, std::move(ids), association, at, {}});
}

void DeliveryStore::acknowledge(const std::string& spid, db::MessageId id, db::TimeMs at) {
  ready_.remove(spid, id);  // a late answer may acknowledge a message put back to queued
  turn_.acknowledged(spid, id, at);
}

void DeliveryStore::defer(std::vector<Write>& writes) {
  for (Write& w : writes) backlog_.push_back(std::move(w));
  deferred_ += writes.size();
}

void DeliveryStore::flush() {
  if (turn_.empty()) return;
  std::vector<Write> writes = turn_.take();
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
  if (fence_.active()) {
    if (std::optional<db::Status> failure = fence_.checkAll(writes, fenced)) {
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
    ready_.drop(w.spid);
    spdlog::error("outbound queue: a delivery-progress write was refused: {}", status.toString());
  }
  settle_.settleAfter(acknowledged);  // in the turn's transaction: still one commit per turn
  if (db::Status status = turn.commit(); !status.isOk()) {
    known_.forgetAll();  // learnt from writes that did not commit
    if (db::isStorageFailure(status)) return deferAll(status);
    spdlog::error("outbound queue: the delivery-progress transaction did not commit: {}",
                  status.toString());
  } else {
    fence_.committed(writes, fenced_count);
  }
  fence_.reportDropped(fenced, fenced_count);
}

void DeliveryStore::markFailed(const std::string& spid, db::MessageId id, std::string reason, db::TimeMs at) {
  flush();
  ready_.remove(spid, id);
  write(Write{Write::Kind::kFailed, spid, {id}, 0, at, std::move(reason)});
}

void DeliveryStore::requeueAssociation(const std::string& spid, db::AssociationId association) {
  flush();  // what was answered there is acknowledged, not re-queued
  ready_.drop(spid);  // its messages come back to queued: the next round reads them
  write(Write{Write::Kind::kRequeueAssociation, spid, {}, association, 0, {}});
}

void DeliveryStore::moveSent(const std::string& spid, db::MessageId id, db::AssociationId association) {
  flush();  // the row must read `sent` before it moves
  write(Write{Write::Kind::kMoveSent, spid, {id}, association, 0, {}});
}

void DeliveryStore::requeue(const std::string& spid, std::vector<db::MessageId> ids) {
  if (ids.empty()) return;
  flush();
  ready_.drop(spid);  // they come back to queued: the next round reads them
  write(Write{Write::Kind::kRequeue, spid, std::move(ids), 0, 0, {}});
}

bool DeliveryStore::retry() {
  flush();
  while (!backlog_.empty()) {
    db::Status status = applyFenced(backlog_.front());
    if (!status.isOk()) {
      if (db::isStorageFailure(status)) return false;
      if (status.code() == db::Status::Code::kFenced) {
        fence_.reportFenced(backlog_.front().spid, status, 1);
        backlog_.pop_front();
        continue;
      }
      ready_.drop(backlog_.front().spid);
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
