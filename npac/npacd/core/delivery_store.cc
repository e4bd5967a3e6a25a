#include "npac/npacd/core/delivery_store.h"

#include <spdlog/spdlog.h>

#include "db/database.h"
#include "db/statement.h"
#include "db/storage_health.h"
#include "db/transaction.h"

namespace npac::npacd {

DeliveryStore::DeliveryStore(db::Database& progress_db, std::function<void()> schedule_flush)
    : db_(progress_db), queue_(progress_db), schedule_flush_(std::move(schedule_flush)) {}

void DeliveryStore::becameUnhealthy(const db::Status& status, const char* what) {
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
  flush();
  auto rows = queue_.nextQueued(spid, functions, limit);
  if (!rows.isOk()) readFailed(rows.status(), "reading the queue");
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
  auto statement = db_.prepare(
      "SELECT function_mask, COUNT(*) FROM outbound_queue WHERE spid = ? AND state = 'queued' "
      "GROUP BY function_mask");
  if (!statement.isOk()) return statement.status();
  statement->bindText(0, spid);
  std::map<std::uint32_t, std::size_t> counts;
  while (true) {
    auto row = statement->step();
    if (!row.isOk()) return row.status();
    if (!*row) break;
    counts[static_cast<std::uint32_t>(statement->columnInt64(0))] =
        static_cast<std::size_t>(statement->columnInt64(1));
  }
  return counts;
}

db::Status DeliveryStore::apply(const Write& w) {
  switch (w.kind) {
    case Write::Kind::kSent: return queue_.markSent(w.ids, w.association, w.at);
    case Write::Kind::kAcknowledged: return queue_.markAcknowledged(w.ids, w.at);
    case Write::Kind::kFailed: return queue_.markFailed(w.ids.front(), w.reason, w.at);
    case Write::Kind::kRequeueAssociation: return queue_.requeueAssociation(w.association).status();
    case Write::Kind::kMoveSent: return queue_.moveSent(w.ids.front(), w.association);
    case Write::Kind::kRequeue: return queue_.requeue(w.ids).status();
  }
  return db::Status::internal("unknown progress write");
}

void DeliveryStore::write(Write w) {
  if (!backlog_.empty()) {
    // Order matters (sent before acknowledged): behind the backlog, never around it.
    backlog_.push_back(std::move(w));
    ++deferred_;
    return;
  }
  db::Status status = apply(w);
  if (status.isOk()) return;
  if (db::isStorageFailure(status)) {
    becameUnhealthy(status, "recording delivery progress");
    backlog_.push_back(std::move(w));
    ++deferred_;
    return;
  }
  spdlog::error("outbound queue: a delivery-progress write was refused: {}", status.toString());
}

void DeliveryStore::collected() {
  if (!pending() && schedule_flush_) schedule_flush_();
}

void DeliveryStore::markSent(std::vector<db::MessageId> ids, db::AssociationId association,
                             db::TimeMs at) {
  if (ids.empty()) return;
  collected();
  pending_sent_.push_back(Write{Write::Kind::kSent, std::move(ids), association, at, {}});
}

void DeliveryStore::acknowledge(db::MessageId id, db::TimeMs at) {
  collected();
  pending_acks_.push_back(id);
  pending_acks_at_ = at;
}

void DeliveryStore::flush() {
  if (!pending()) return;
  std::vector<Write> writes;
  writes.swap(pending_sent_);
  if (!pending_acks_.empty()) {
    std::vector<db::MessageId> ids;
    ids.swap(pending_acks_);
    writes.push_back(Write{Write::Kind::kAcknowledged, std::move(ids), 0, pending_acks_at_, {}});
  }
  const auto deferAll = [&](const db::Status& status) {
    becameUnhealthy(status, "recording delivery progress");
    for (Write& w : writes) backlog_.push_back(std::move(w));
    deferred_ += writes.size();
  };
  if (!backlog_.empty()) {
    // Order matters (sent before acknowledged): behind the backlog, never around it.
    for (Write& w : writes) backlog_.push_back(std::move(w));
    deferred_ += writes.size();
    return;
  }
  db::Transaction turn(db_);
  if (db::Status status = turn.begin(); !status.isOk()) {
    if (db::isStorageFailure(status)) return deferAll(status);
    spdlog::error("outbound queue: cannot begin the delivery-progress transaction: {}",
                  status.toString());
    return;
  }
  for (const Write& w : writes) {
    // Each write is its own savepoint (db::OutboundQueue): a refused one is undone alone.
    db::Status status = apply(w);
    if (status.isOk()) continue;
    if (db::isStorageFailure(status)) {
      turn.rollback();
      return deferAll(status);
    }
    spdlog::error("outbound queue: a delivery-progress write was refused: {}", status.toString());
  }
  if (db::Status status = turn.commit(); !status.isOk()) {
    if (db::isStorageFailure(status)) return deferAll(status);
    spdlog::error("outbound queue: the delivery-progress transaction did not commit: {}",
                  status.toString());
  }
}

void DeliveryStore::markFailed(db::MessageId id, std::string reason, db::TimeMs at) {
  flush();
  write(Write{Write::Kind::kFailed, {id}, 0, at, std::move(reason)});
}

void DeliveryStore::requeueAssociation(db::AssociationId association) {
  flush();  // what was answered there is acknowledged, not re-queued
  write(Write{Write::Kind::kRequeueAssociation, {}, association, 0, {}});
}

void DeliveryStore::moveSent(db::MessageId id, db::AssociationId association) {
  flush();  // the row must read `sent` before it moves
  write(Write{Write::Kind::kMoveSent, {id}, association, 0, {}});
}

void DeliveryStore::requeue(std::vector<db::MessageId> ids) {
  if (ids.empty()) return;
  flush();
  write(Write{Write::Kind::kRequeue, std::move(ids), 0, 0, {}});
}

bool DeliveryStore::retry() {
  flush();
  while (!backlog_.empty()) {
    db::Status status = apply(backlog_.front());
    if (!status.isOk()) {
      if (db::isStorageFailure(status)) return false;
      spdlog::error("outbound queue: a deferred delivery-progress write was refused: {}",
                    status.toString());
    }
    backlog_.pop_front();
  }
  if (read_failed_) {
    // Probe with a cheap read before delivery resumes.
    auto probe = queue_.count(db::MessageState::kSent);
    if (!probe.isOk()) return false;
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
