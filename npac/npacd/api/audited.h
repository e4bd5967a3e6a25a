// audited(): a configuration change and its audit entry in one transaction — both commit
// or neither (db/audit_store.h: "append() does not open its own transaction").
//
// Threading: the API thread (the Database it is given is the API's connection).
#pragma once

#include <cstdint>

#include "db/audit_store.h"
#include "db/database.h"
#include "db/status.h"
#include "db/transaction.h"

namespace npac::npacd {

// Runs `change` (returning db::Status) and appends `entry` in one transaction.
template <typename Change>
db::Status audited(db::Database& db, const db::AuditEntry& entry, Change change) {
  db::Transaction tx(db);
  db::Status status = tx.begin();
  if (!status.isOk()) return status;
  status = change();
  if (!status.isOk()) return status;  // the transaction rolls back
  db::AuditStore audit(db);
  db::Result<std::int64_t> id = audit.append(entry);
  if (!id.isOk()) return id.status();
  return tx.commit();
}

}  // namespace npac::npacd
