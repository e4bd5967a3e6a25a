#include "db/association_log_store.h"

#include "db/database.h"

namespace npac::db {
namespace {

constexpr const char* kSelectEvents =
    "SELECT id, at, event, spid, nsap, association_id, function_mask, recovery_mode, bound_at, "
    "reason, diagnostic FROM association_log ";

Result<std::vector<AssociationEvent>> readEvents(Statement& query) {
  std::vector<AssociationEvent> out;
  for (;;) {
    Result<bool> row = query.step();
    if (!row) return row.status();
    if (!*row) return out;
    AssociationEvent event;
    event.id = query.columnInt64(0);
    event.at = query.columnInt64(1);
    event.kind = parseAssociationEventKind(query.columnText(2)).value_or(AssociationEventKind::kAbort);
    event.spid = query.columnText(3);
    event.nsap = query.columnBlob(4);
    event.association_id = query.columnOptionalInt64(5);
    event.function_mask = static_cast<std::uint32_t>(query.columnInt64(6));
    event.recovery_mode = query.columnBool(7);
    event.bound_at = query.columnOptionalInt64(8);
    event.reason = query.columnText(9);
    event.diagnostic = query.columnText(10);
    out.push_back(std::move(event));
  }
}

}  // namespace

const char* toString(AssociationEventKind kind) {
  switch (kind) {
    case AssociationEventKind::kBind: return "bind";
    case AssociationEventKind::kReject: return "reject";
    case AssociationEventKind::kRelease: return "release";
    case AssociationEventKind::kAbort: return "abort";
  }
  return "unknown";
}

std::optional<AssociationEventKind> parseAssociationEventKind(std::string_view text) {
  for (AssociationEventKind kind : {AssociationEventKind::kBind, AssociationEventKind::kReject,
                                    AssociationEventKind::kRelease, AssociationEventKind::kAbort}) {
    if (text == toString(kind)) return kind;
  }
  return std::nullopt;
}

Result<std::int64_t> AssociationLogStore::append(const AssociationEvent& event) {
  Result<Statement> insert = db_.prepare(
      "INSERT INTO association_log(at, event, spid, nsap, association_id, function_mask, "
      "recovery_mode, bound_at, reason, diagnostic) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.status();
  insert->bindInt64(0, event.at)
      .bindText(1, toString(event.kind))
      .bindText(2, event.spid);
  if (event.nsap.empty()) {
    insert->bindNull(3);
  } else {
    insert->bindBlob(3, event.nsap);
  }
  insert->bindOptionalInt64(4, event.association_id)
      .bindInt64(5, event.function_mask)
      .bindBool(6, event.recovery_mode)
      .bindOptionalInt64(7, event.bound_at)
      .bindText(8, event.reason)
      .bindText(9, event.diagnostic);
  if (Status status = insert->run(); !status) return status;
  return db_.lastInsertRowId();
}

Result<std::vector<AssociationEvent>> AssociationLogStore::forProvider(std::string_view spid,
                                                                       TimeMs from, TimeMs to,
                                                                       std::size_t limit) {
  Result<Statement> query = db_.prepare(
      std::string(kSelectEvents) + "WHERE spid = ? AND at >= ? AND at < ? ORDER BY at, id LIMIT ?");
  if (!query) return query.status();
  query->bindText(0, spid).bindInt64(1, from).bindInt64(2, to).bindInt64(
      3, static_cast<std::int64_t>(limit));
  return readEvents(*query);
}

Result<std::vector<AssociationEvent>> AssociationLogStore::recent(std::size_t limit) {
  Result<Statement> query = db_.prepare(std::string(kSelectEvents) + "ORDER BY id DESC LIMIT ?");
  if (!query) return query.status();
  query->bindInt64(0, static_cast<std::int64_t>(limit));
  return readEvents(*query);
}

Result<std::vector<AssociationEvent>> AssociationLogStore::recentForProvider(std::string_view spid,
                                                                             std::size_t limit) {
  Result<Statement> query = db_.prepare(std::string(kSelectEvents) + "WHERE spid = ? ORDER BY id DESC LIMIT ?");
  if (!query) return query.status();
  query->bindText(0, spid).bindInt64(1, static_cast<std::int64_t>(limit));
  return readEvents(*query);
}

Result<std::size_t> AssociationLogStore::purgeBefore(TimeMs cutoff) {
  Result<Statement> erase = db_.prepare("DELETE FROM association_log WHERE at < ?");
  if (!erase) return erase.status();
  erase->bindInt64(0, cutoff);
  if (Status status = erase->run(); !status) return status;
  return static_cast<std::size_t>(db_.changes());
}

Result<std::size_t> AssociationLogStore::purgeBefore(TimeMs cutoff, std::size_t max_rows) {
  Result<Statement> erase = db_.prepare(
      "DELETE FROM association_log WHERE id IN (SELECT id FROM association_log "
      "WHERE at < ? ORDER BY id LIMIT ?)");
  if (!erase) return erase.status();
  erase->bindInt64(0, cutoff);
  erase->bindInt64(1, static_cast<std::int64_t>(max_rows));
  if (Status status = erase->run(); !status) return status;
  return static_cast<std::size_t>(db_.changes());
}

}  // namespace npac::db
