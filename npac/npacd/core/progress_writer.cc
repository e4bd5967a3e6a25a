#include "npac/npacd/core/progress_writer.h"

#include <map>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "db/storage_health.h"
#include "db/transaction.h"

namespace npac::npacd {

void ProgressWriter::becameUnhealthy(const db::Status& status, const char* what) {
  p_.ready.dropAll();  // what failed to write may differ from what is kept
  p_.known.forgetAll();
  if (logged_unhealthy_) return;
  logged_unhealthy_ = true;
  spdlog::error("outbound queue: {} failed ({}); no new PDU leaves until the database takes "
                "writes again — in-flight answers are kept and applied then",
                what, db::toString(status.code()));
}

void ProgressWriter::readFailed(const db::Status& status, const char* what) {
  if (db::isStorageFailure(status)) {
    read_failed_ = true;
    becameUnhealthy(status, what);
  } else {
    spdlog::error("outbound queue: {}: {}", what, status.toString());
  }
}

db::Status ProgressWriter::apply(const ProgressWrite& w) {
  using Kind = ProgressWrite::Kind;
  db::OutboundQueue& queue = p_.queue;
  db::Status status = db::Status::internal("unknown progress write");
  switch (w.kind) {
    case Kind::kSent: status = queue.markSent(w.ids, w.association, w.at, p_.known.of(w.spid)); break;
    case Kind::kAcknowledged: status = queue.markAcknowledged(w.ids, w.at, p_.known.of(w.spid)); break;
    case Kind::kFailed: status = queue.markFailed(w.ids.front(), w.reason, w.at); break;
    case Kind::kRequeueAssociation: status = queue.requeueAssociation(w.spid, w.association).status(); break;
    case Kind::kMoveSent: status = queue.moveSent(w.ids.front(), w.association); break;
    case Kind::kRequeue: status = queue.requeue(w.ids).status(); break;
  }
  if (status.isOk()) {
    p_.known.learn(w);
  } else {
    p_.known.forget(w.spid);  // a refusal: what is remembered of the provider may be wrong
  }
  return status;
}

db::Status ProgressWriter::applyFenced(const ProgressWrite& w) {
  if (!p_.fence.active()) return apply(w);
  db::Transaction txn(p_.db);
  if (db::Status status = txn.begin(); !status.isOk()) return status;
  if (db::Status status = p_.fence.check(w.spid); !status.isOk()) return status;
  if (db::Status status = apply(w); !status.isOk()) return status;
  db::Status committed = txn.commit();
  if (!committed.isOk()) p_.known.forget(w.spid);  // learnt from a write that did not commit
  return committed;
}

void ProgressWriter::write(ProgressWrite w) {
  if (!backlog_.empty()) {
    // Order matters (sent before acknowledged): behind the backlog, never around it.
    backlog_.push_back(std::move(w));
    ++deferred_;
    return;
  }
  db::Status status = applyFenced(w);
  if (status.isOk()) {
    p_.fence.committed(w.spid);
    return;
  }
  if (status.code() == db::Status::Code::kFenced) return p_.fence.reportFenced(w.spid, status, 1);
  if (db::isStorageFailure(status)) {
    becameUnhealthy(status, "recording delivery progress");
    backlog_.push_back(std::move(w));
    ++deferred_;
    return;
  }
  p_.ready.drop(w.spid);
  spdlog::error("outbound queue: a delivery-progress write was refused: {}", status.toString());
}

void ProgressWriter::defer(std::vector<ProgressWrite>& writes) {
  for (ProgressWrite& w : writes) backlog_.push_back(std::move(w));
  deferred_ += writes.size();
}

void ProgressWriter::commitTurn(std::vector<ProgressWrite> writes) {
  const auto deferAll = [&](const db::Status& status) {
    becameUnhealthy(status, "recording delivery progress");
    defer(writes);
  };
  if (!backlog_.empty()) {
    // Order matters (sent before acknowledged): behind the backlog, never around it.
    defer(writes);
    return;
  }
  db::Transaction turn(p_.db);
  if (db::Status status = turn.begin(); !status.isOk()) {
    if (db::isStorageFailure(status)) return deferAll(status);
    spdlog::error("outbound queue: cannot begin the delivery-progress transaction: {}",
                  status.toString());
    return;
  }
  // The fence, once per provider of the turn, before any of its writes.
  std::map<std::string, db::Status> fenced;
  std::map<std::string, std::size_t> fenced_count;
  if (p_.fence.active()) {
    if (std::optional<db::Status> failure = p_.fence.checkAll(writes, fenced)) {
      turn.rollback();
      return deferAll(*failure);
    }
  }
  std::vector<const ProgressWrite*> acknowledged;  // applied acknowledging writes: their providers may settle
  for (const ProgressWrite& w : writes) {
    if (auto it = fenced.find(w.spid); it != fenced.end() && !it->second.isOk()) {
      ++fenced_count[w.spid];
      continue;
    }
    // Each write is its own savepoint (db::OutboundQueue): a refused one is undone alone.
    db::Status status = apply(w);
    if (status.isOk()) {
      if (w.kind == ProgressWrite::Kind::kAcknowledged) acknowledged.push_back(&w);
      continue;
    }
    if (db::isStorageFailure(status)) {
      turn.rollback();
      return deferAll(status);
    }
    p_.ready.drop(w.spid);
    spdlog::error("outbound queue: a delivery-progress write was refused: {}", status.toString());
  }
  p_.settle.settleAfter(acknowledged);  // in the turn's transaction: still one commit per turn
  if (db::Status status = turn.commit(); !status.isOk()) {
    p_.known.forgetAll();  // learnt from writes that did not commit
    if (db::isStorageFailure(status)) return deferAll(status);
    spdlog::error("outbound queue: the delivery-progress transaction did not commit: {}",
                  status.toString());
  } else {
    p_.fence.committed(writes, fenced_count);
  }
  p_.fence.reportDropped(fenced, fenced_count);
}

bool ProgressWriter::retry() {
  while (!backlog_.empty()) {
    db::Status status = applyFenced(backlog_.front());
    if (!status.isOk()) {
      if (db::isStorageFailure(status)) return false;
      if (status.code() == db::Status::Code::kFenced) {
        p_.fence.reportFenced(backlog_.front().spid, status, 1);
        backlog_.pop_front();
        continue;
      }
      p_.ready.drop(backlog_.front().spid);
      spdlog::error("outbound queue: a deferred delivery-progress write was refused: {}",
                    status.toString());
    }
    backlog_.pop_front();
  }
  if (read_failed_) {
    // Probe with a cheap read before delivery resumes.
    if (!p_.queue.probe().isOk()) return false;
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
