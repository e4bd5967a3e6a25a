#include "npac/npacd/core/delivery_store.h"

#include "db/database.h"

namespace npac::npacd {

DeliveryStore::DeliveryStore(db::Database& progress_db, std::function<void()> schedule_flush)
    : queue_(progress_db),
      ready_(queue_),
      settle_(queue_),
      fence_(progress_db,
             [this](const std::string& spid) {
               ready_.drop(spid);
               known_.forget(spid);
             }),
      turn_(std::move(schedule_flush)),
      writer_({progress_db, queue_, known_, ready_, settle_, fence_}) {}

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
    writer_.readFailed(rows.status(), "reading the queue");
  } else {
    known_.rememberQueued(spid, *rows);
  }
  return rows;
}

db::Result<db::QueuedMessage> DeliveryStore::get(db::MessageId id) {
  flush();
  auto row = queue_.get(id);
  if (!row.isOk() && row.status().code() != db::Status::Code::kNotFound) {
    writer_.readFailed(row.status(), "reading a message");
  }
  return row;
}

db::Result<std::vector<db::QueuedMessage>> DeliveryStore::recoveryCandidates(const std::string& spid,
                                                                            std::optional<CreatedRange> created,
                                                                            std::size_t limit) {
  flush();
  auto rows = created ? queue_.createdBetween(spid, created->from, created->to, limit)
                      : queue_.unacknowledged(spid, limit);
  if (!rows.isOk()) writer_.readFailed(rows.status(), "reading the queue for recovery");
  return rows;
}

DeliveryStore::Figures DeliveryStore::figures() const {
  Figures out;
  out.backlog = writer_.backlog();
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

void DeliveryStore::markSent(const std::string& spid, std::vector<db::MessageId> ids,
                             db::AssociationId association, db::TimeMs at) {
  if (ids.empty()) return;
  for (db::MessageId id : ids) ready_.remove(spid, id);
  turn_.sent(ProgressWrite{ProgressWrite::Kind::kSent, spid, std::move(ids), association, at, {}});
}

void DeliveryStore::acknowledge(const std::string& spid, db::MessageId id, db::TimeMs at) {
  ready_.remove(spid, id);  // a late answer may acknowledge a message put back to queued
  turn_.acknowledged(spid, id, at);
}

void DeliveryStore::flush() {
  if (!turn_.empty()) writer_.commitTurn(turn_.take());
}

void DeliveryStore::markFailed(const std::string& spid, db::MessageId id, std::string reason, db::TimeMs at) {
  flush();
  ready_.remove(spid, id);
  writer_.write(ProgressWrite{ProgressWrite::Kind::kFailed, spid, {id}, 0, at, std::move(reason)});
}

void DeliveryStore::requeueAssociation(const std::string& spid, db::AssociationId association) {
  flush();  // what was answered there is acknowledged, not re-queued
  ready_.drop(spid);  // its messages come back to queued: the next round reads them
  writer_.write(ProgressWrite{ProgressWrite::Kind::kRequeueAssociation, spid, {}, association, 0, {}});
}

void DeliveryStore::moveSent(const std::string& spid, db::MessageId id, db::AssociationId association) {
  flush();  // the row must read `sent` before it moves
  writer_.write(ProgressWrite{ProgressWrite::Kind::kMoveSent, spid, {id}, association, 0, {}});
}

void DeliveryStore::requeue(const std::string& spid, std::vector<db::MessageId> ids) {
  if (ids.empty()) return;
  flush();
  ready_.drop(spid);  // they come back to queued: the next round reads them
  writer_.write(ProgressWrite{ProgressWrite::Kind::kRequeue, spid, std::move(ids), 0, 0, {}});
}

bool DeliveryStore::retry() {
  flush();
  return writer_.retry();
}

}  // namespace npac::npacd
