// The npacd schema on PostgreSQL: the DDL of db/migrations.h's kCurrentSchemaVersion in
// PostgreSQL's types. Internal to db/migrations.cc.
//
// The tables, columns, constraints and indexes are those of the SQLite schema, one for
// one, so the stores' SQL runs unchanged on either engine: INTEGER columns become BIGINT
// (times in ms, ids, masks), BLOB becomes BYTEA, and the ids SQLite draws from rowid or
// AUTOINCREMENT come from identity columns (never reused, like AUTOINCREMENT). Booleans
// stay integers 0/1 with the same CHECKs. tests/db/migrations_test.cc compares the two
// schemas' columns.
//
// Threading: constants only.
#pragma once

namespace npac::db {

// The whole schema at kCurrentSchemaVersion, for a new PostgreSQL database.
// Without schema 9's delivery progress tables and schema 11's settled counts, which follow
// it (postgresDeliveryProgressSchema, postgresSettledCountsSchema), nor schema 12's and
// 13's tables, whose one text serves both engines (db/migrations.cc).
const char* postgresCurrentSchema();
// Schema 9's delivery progress tables alone (the version-9 step; db/progress_log.h).
const char* postgresDeliveryProgressSchema();
// Schema 11's settled counts alone (the version-11 step; db/progress_log.h).
const char* postgresSettledCountsSchema();

}  // namespace npac::db
