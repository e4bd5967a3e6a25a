// OutboundQueue's progress writes as delivery progress records (db/progress_log.h, the
// write-once log): no queue row is updated after its INSERT. Each write takes the state of
// the messages it names from what its caller knows (Known) or reads it (their rows folded
// with their records, outbound_queue_progress.cc), refuses exactly what the row updates
// refused — all or none — and appends one record per provider it touches.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "db/database.h"
#include "db/delivery_progress.h"
#include "db/outbound_queue.h"
#include "db/outbound_queue_sql.h"
#include "db/progress_log.h"
#include "db/transaction.h"

namespace npac::db {
namespace {

std::string cannot(MessageId id, MessageState state, const char* wanted) {
  return "message " + std::to_string(id) + " is " + toString(state) + ", cannot mark it " + wanted;
}

}  // namespace

Result<std::unordered_map<MessageId, QueuedMessage>> OutboundQueue::statesOf(std::span<const MessageId> ids) {
  std::vector<MessageId> unique(ids.begin(), ids.end());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  Result<Statement> query = db_.prepare(
      std::string(queue_sql::kSelect) + "WHERE q.id IN " +
      (db_.backend() == Backend::kPostgres ? NPAC_POSTGRES_ID_LIST : NPAC_SQLITE_ID_LIST));
  if (!query) return query.status();
  std::vector<QueuedMessage> rows;
  constexpr std::size_t kChunk = 1024;
  for (std::size_t from = 0; from < unique.size(); from += kChunk) {
    const std::size_t n = std::min(kChunk, unique.size() - from);
    query->bindText(0, queue_sql::idArray(std::span(unique).subspan(from, n)));
    Result<std::vector<QueuedMessage>> found = select(*query);
    if (!found) return found.status();
    query->reset();
    for (QueuedMessage& row : *found) rows.push_back(std::move(row));
  }
  if (Status status = foldProgress(rows); !status) return status;
  std::unordered_map<MessageId, QueuedMessage> out;
  for (QueuedMessage& row : rows) out.emplace(row.id, std::move(row));
  return out;
}

Status OutboundQueue::writeProgress(ProgressEvent event, std::span<const MessageId> ids, AssociationId association,
                                    TimeMs at, std::string_view reason, bool all_or_none,
                                    std::size_t* changed, const Known* known) {
  if (changed != nullptr) *changed = 0;
  if (ids.empty()) return Status::ok();
  // The states read and the records appended in one transaction (a savepoint in the
  // caller's).
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  // Each message's provider and state: what `known` knows, the others read.
  struct Current {
    std::string spid;
    MessageProgress progress;
  };
  std::unordered_map<MessageId, Current> current;
  std::vector<MessageId> unknown;
  for (MessageId id : ids) {
    if (current.count(id) != 0) continue;
    std::optional<MessageState> state = known != nullptr && known->state ? known->state(id) : std::nullopt;
    if (!state) {
      unknown.push_back(id);
      continue;
    }
    MessageProgress progress;
    progress.state = *state;
    current.emplace(id, Current{std::string(known->spid), progress});
  }
  if (!unknown.empty()) {
    Result<std::unordered_map<MessageId, QueuedMessage>> states = statesOf(unknown);
    if (!states) return states.status();
    for (auto& [id, row] : *states) current.emplace(id, Current{row.spid, progressOf(row)});
  }
  std::map<std::string, ProgressRecord> records;  // per provider
  for (MessageId id : ids) {
    auto it = current.find(id);
    if (it == current.end()) {
      if (!all_or_none) continue;
      return Status::notFound("message " + std::to_string(id) + " is not in the outbound queue");
    }
    Current& message = it->second;
    const MessageState before = message.progress.state;
    const ProgressRecord one{message.spid, event, association, at, {id}, std::string(reason)};
    if (!applyEvent(one, message.progress)) {  // a repeated id in `ids` sees the first one's effect
      if (event == ProgressEvent::kAcknowledged || !all_or_none) continue;  // repeats are fine
      const char* wanted = event == ProgressEvent::kHanded ? "sent" : "failed";
      if (event == ProgressEvent::kMoved) {
        return Status::invalidArgument("message " + std::to_string(id) + " is " + toString(before) +
                                       "; only a sent message moves to another association");
      }
      return Status::invalidArgument(cannot(id, before, wanted));
    }
    ProgressRecord& record = records[message.spid];
    if (record.ids.empty()) record = ProgressRecord{message.spid, event, association, at, {}, std::string(reason)};
    record.ids.push_back(id);
  }
  std::vector<ProgressRecord> out;
  std::size_t n = 0;
  for (auto& [spid, record] : records) {
    n += record.ids.size();
    out.push_back(std::move(record));
  }
  if (Status status = ProgressLog(db_).append(out); !status) return status;
  if (Status status = txn.commit(); !status) return status;
  if (changed != nullptr) *changed = n;
  return Status::ok();
}

Status OutboundQueue::markSent(MessageId id, AssociationId association, TimeMs at) {
  return writeProgress(ProgressEvent::kHanded, std::span(&id, 1), association, at, {}, true, nullptr);
}

Status OutboundQueue::markSent(std::span<const MessageId> ids, AssociationId association, TimeMs at) {
  return writeProgress(ProgressEvent::kHanded, ids, association, at, {}, true, nullptr);
}

Status OutboundQueue::markAcknowledged(MessageId id, TimeMs at) {
  return writeProgress(ProgressEvent::kAcknowledged, std::span(&id, 1), 0, at, {}, true, nullptr);
}

Status OutboundQueue::markAcknowledged(std::span<const MessageId> ids, TimeMs at) {
  return writeProgress(ProgressEvent::kAcknowledged, ids, 0, at, {}, true, nullptr);
}

Status OutboundQueue::markSent(std::span<const MessageId> ids, AssociationId association, TimeMs at,
                              const Known& known) {
  return writeProgress(ProgressEvent::kHanded, ids, association, at, {}, true, nullptr, &known);
}

Status OutboundQueue::markAcknowledged(std::span<const MessageId> ids, TimeMs at, const Known& known) {
  return writeProgress(ProgressEvent::kAcknowledged, ids, 0, at, {}, true, nullptr, &known);
}

Status OutboundQueue::markFailed(MessageId id, std::string_view reason, TimeMs at) {
  return writeProgress(ProgressEvent::kFailed, std::span(&id, 1), 0, at, reason, true, nullptr);
}

Status OutboundQueue::moveSent(MessageId id, AssociationId association) {
  return writeProgress(ProgressEvent::kMoved, std::span(&id, 1), association, 0, {}, true, nullptr);
}

Result<std::size_t> OutboundQueue::requeue(std::span<const MessageId> ids) {
  std::size_t changed = 0;
  if (Status status = writeProgress(ProgressEvent::kRequeued, ids, 0, 0, {}, false, &changed); !status) {
    return status;
  }
  return changed;
}

Result<std::vector<MessageId>> OutboundQueue::inFlight(std::string_view spid,
                                                       std::optional<AssociationId> association) {
  Result<ProgressView> view = settledView(spid);
  if (!view) return view.status();
  std::vector<MessageId> ids;
  for (const auto& [id, named] : view->named) {
    if (named.row.state == MessageState::kSent && (!association || named.row.association_id == association)) {
      ids.push_back(id);
    }
  }
  // Rows sent by their own columns (an earlier schema's) above the mark that no record
  // names; at or below it they are acknowledged or open (in the view).
  Result<Statement> query = db_.prepare(
      association ? "SELECT id FROM outbound_queue WHERE spid = ? AND state = 'sent' AND id > ? AND association_id = ?"
                  : "SELECT id FROM outbound_queue WHERE spid = ? AND state = 'sent' AND id > ?");
  if (!query) return query.status();
  query->bindText(0, spid).bindInt64(1, view->mark);
  if (association) query->bindInt64(2, *association);
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) break;
    const MessageId id = query->columnInt64(0);
    if (view->find(id) == nullptr) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<std::vector<std::string>> OutboundQueue::providersWithProgress(std::optional<AssociationId> association) {
  Result<Statement> query = db_.prepare(
      association ? "SELECT spid FROM outbound_queue WHERE state = 'sent' AND association_id = ? "
                    "UNION SELECT spid FROM delivery_progress WHERE association_id = ?"
                  : "SELECT spid FROM service_providers");
  if (!query) return query.status();
  if (association) query->bindInt64(0, *association).bindInt64(1, *association);
  std::vector<std::string> spids;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) break;
    spids.push_back(query->columnText(0));
  }
  return spids;
}

Result<std::size_t> OutboundQueue::requeueAssociation(AssociationId association) {
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  Result<std::vector<std::string>> spids = providersWithProgress(association);
  if (!spids) return spids.status();
  std::size_t total = 0;
  for (const std::string& spid : *spids) {
    Result<std::size_t> moved = requeueAssociation(spid, association);
    if (!moved) return moved.status();
    total += *moved;
  }
  if (Status status = txn.commit(); !status) return status;
  return total;
}

Result<std::size_t> OutboundQueue::requeueAssociation(std::string_view spid, AssociationId association) {
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  Result<std::vector<MessageId>> ids = inFlight(spid, association);
  if (!ids) return ids.status();
  Result<std::size_t> moved = requeue(*ids);
  if (!moved) return moved.status();
  if (Status status = txn.commit(); !status) return status;
  return moved;
}

Result<std::size_t> OutboundQueue::requeueProvider(std::string_view spid) {
  Result<std::vector<MessageId>> ids = inFlight(spid, std::nullopt);
  if (!ids) return ids.status();
  return requeue(*ids);
}

Result<std::size_t> OutboundQueue::requeueAllInFlight() {
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  Result<std::vector<std::string>> spids = providersWithProgress(std::nullopt);
  if (!spids) return spids.status();
  std::size_t total = 0;
  for (const std::string& spid : *spids) {
    Result<std::size_t> moved = requeueProvider(spid);
    if (!moved) return moved.status();
    total += *moved;
  }
  if (Status status = txn.commit(); !status) return status;
  return total;
}

}  // namespace npac::db
