#include "db/audit_store.h"

#include "db/database.h"

namespace npac::db {
namespace {

constexpr const char* kSelectAudit =
    "SELECT id, at, actor, action, subject, old_value, new_value FROM audit_log ";

Result<std::vector<AuditEntry>> readAuditEntries(Statement& query) {
  std::vector<AuditEntry> out;
  for (;;) {
    Result<bool> row = query.step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(AuditEntry{query.columnInt64(0), query.columnInt64(1), query.columnText(2),
                             query.columnText(3), query.columnText(4),
                             query.columnOptionalText(5), query.columnOptionalText(6)});
  }
}

}  // namespace

Result<std::int64_t> AuditStore::append(const AuditEntry& entry) {
  if (entry.actor.empty() || entry.action.empty()) {
    return Status::invalidArgument("an audit entry needs an actor and an action");
  }
  Result<Statement> insert = db_.prepare(
      "INSERT INTO audit_log(at, actor, action, subject, old_value, new_value) "
      "VALUES(?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.status();
  insert->bindInt64(0, entry.at)
      .bindText(1, entry.actor)
      .bindText(2, entry.action)
      .bindText(3, entry.subject)
      .bindOptionalText(4, entry.old_value)
      .bindOptionalText(5, entry.new_value);
  if (Status status = insert->run(); !status) return status;
  return db_.lastInsertRowId();
}

Result<std::vector<AuditEntry>> AuditStore::between(TimeMs from, TimeMs to, std::size_t limit) {
  Result<Statement> query =
      db_.prepare(std::string(kSelectAudit) + "WHERE at >= ? AND at < ? ORDER BY at, id LIMIT ?");
  if (!query) return query.status();
  query->bindInt64(0, from).bindInt64(1, to).bindInt64(2, static_cast<std::int64_t>(limit));
  return readAuditEntries(*query);
}

Result<std::vector<AuditEntry>> AuditStore::recent(std::size_t limit) {
  Result<Statement> query = db_.prepare(std::string(kSelectAudit) + "ORDER BY id DESC LIMIT ?");
  if (!query) return query.status();
  query->bindInt64(0, static_cast<std::int64_t>(limit));
  return readAuditEntries(*query);
}

}  // namespace npac::db
