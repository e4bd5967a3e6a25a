// AuditStore: the operator audit log (table audit_log) — who changed what, when, from
// which old value to which new value. Append-only: entries are never updated; there is
// no delete in the API (retention, if ever, is an operator's SQL job, documented in
// docs/DATABASE.md).
//
// append() does not open its own transaction: wrap it with the change it records in one
// Transaction so the change and its audit entry commit or vanish together.
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/clock.h"
#include "db/status.h"

namespace npac::db {

class Database;

struct AuditEntry {
  std::int64_t id = 0;                   // assigned by append(), increasing
  TimeMs at = 0;                         // when the change was made
  std::string actor;                     // who: operator name, "npacctl", "admin-api:<user>"
  std::string action;                    // what kind: "tunable.set", "provider.add", ...
  std::string subject;                   // what exactly: "srr@0001", "provider 0001", ...
  std::optional<std::string> old_value;  // nullopt when there was none (creation)
  std::optional<std::string> new_value;  // nullopt when removed

  friend bool operator==(const AuditEntry&, const AuditEntry&) = default;
};

class AuditStore {
 public:
  explicit AuditStore(Database& db) : db_(db) {}

  // Appends the entry (its id is ignored) and returns the id assigned.
  Result<std::int64_t> append(const AuditEntry& entry);
  // Entries with from <= at < to, oldest first, at most `limit`.
  Result<std::vector<AuditEntry>> between(TimeMs from, TimeMs to, std::size_t limit = 1000);
  // The newest `limit` entries, newest first.
  Result<std::vector<AuditEntry>> recent(std::size_t limit);

 private:
  Database& db_;
};

}  // namespace npac::db
