// Schema versions and the migration ladder (Chromium sql/ style).
//
// The `meta` table holds two integers: `version`, the schema this file is at, and
// `last_compatible_version`, the oldest npacd schema that can still use the file. On
// open (Database::open with apply_schema):
//   - an empty file is created directly at kCurrentSchemaVersion;
//   - an older file is upgraded step by step (`if (version == 1) { ... version = 2; }`)
//     inside one transaction — a failed step leaves the file exactly as it was;
//   - a file whose last_compatible_version is above kCurrentSchemaVersion was written by a
//     newer npacd that this one cannot safely use: refused with kTooNew;
//   - a newer file that declares us compatible is used as is (never downgraded).
//
// History (each step's DDL lives in migrations.cc; docs/DATABASE.md has the schema):
//   1  initial tables: meta, service_providers, provider_nsaps, provider_keys,
//      tunable_overrides, association_log, audit_log, outbound_queue.
//   2  provider_keys.last_sequence (bind replay protection), outbound_queue.retransmission
//      and failed_at, and a partial index on acknowledged messages for the retention purge.
//   3  outbound_queue.idempotency_key (unique per provider while the row is kept) and the
//      npac_keys table (the NPAC's own signing keys for its bind answer).
//
// Threading: runs on the Database it is given, as that Database's contract says.
#pragma once

#include "db/status.h"

namespace npac::db {

class Database;

inline constexpr int kCurrentSchemaVersion = 3;
// Versions 2 and 3 only added nullable/defaulted columns, indexes and a table: version-1
// code still works on the file.
inline constexpr int kCompatibleSchemaVersion = 1;

struct SchemaVersion {
  int version = 0;
  int last_compatible_version = 0;
};

// Creates, upgrades or refuses as described above. Called by Database::open.
Status migrateToCurrent(Database& db);

// The versions recorded in the meta table (kNotFound when there is no meta table).
Result<SchemaVersion> readSchemaVersion(Database& db);

}  // namespace npac::db
