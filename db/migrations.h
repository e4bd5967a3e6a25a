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
//   4  outbound_queue.kind ('push' | 'response'), opcode (X.711 §7.4 local operation
//      code, -1 unknown) and confirmed (0/1), written at submission. The step fills them
//      for the rows already queued: with MigrationOptions::classify_queued_pdu when the
//      caller gives one (npacd decodes each row's ROSE APDU), else by the only fact the
//      database has — priority 10 is what npacd gave its answers to providers' requests,
//      so such rows are responses, every other row a push with opcode -1; confirmed 0.
//   5  api_tokens: the admin API's bearer tokens (name, role, SHA-256 of the secret,
//      created_at/by, revoked_at).
//   6  outbound_queue rebuilt with its state CHECK written as comparisons (the same four
//      values): SQLite checked `IN (...)` of four constants through a temporary index
//      built on every insert and state change.
//   7  provider_leases: which npacd node owns each provider's logical association (owner,
//      epoch, expires_at; db/lease_store.h), for two or more nodes sharing PostgreSQL.
//      An older npacd never reads it and, alone on its database, needs no lease.
//   8  message_bodies: a message's PDU is written once, in a body that its queue rows name
//      by outbound_queue.body_id (the pdu column is gone); a broadcast is one body for all
//      its addressees (message_bodies.addressees counts the rows; the purge deletes a body
//      with its last row). Every existing row gets a body of its own, numbered as the row.
//   9  delivery_progress and delivery_settled: delivery progress as appended records and
//      each provider's settled mark (db/progress_log.h, the write-once log).
//   10 outbound_queue_by_created is gone: created_at never decreases in id order (the
//      step raises the rows a clock step back left below an earlier one; appends stamp
//      OutboundQueue::appendStamp), so a time range is found as an id range, and a row is
//      one insert into one index of its provider's (the ready index), not two.
//   11 delivery_settled_counts: each provider's rows at or below its settled mark counted
//      per function mask, kept by settle() and the retention purge (db/progress_log.h), so
//      the queue summary reads what is open, not every retained row.
//   12 delivery_marks and delivery_late: when each provider's mark passed what it passed
//      (one pair per minute), and the messages acknowledged after the mark had passed them
//      waiting — so the retention purge deletes a provider's whole id range acknowledged
//      before its cutoff, not the rows its acknowledgement records name one by one
//      (db/progress_log.h "Retention ranges").
//   13 throttle_groups, throttle_group_members and throttle_reports: the provisioned egress
//      throttle groups and the counts the nodes sharing the database report for them
//      (db/throttle_group_store.h).
//
// Threading: runs on the Database it is given, as that Database's contract says.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "db/message_facts.h"
#include "db/status.h"

namespace npac::db {

class Database;

inline constexpr int kCurrentSchemaVersion = 13;
// Versions 2 and 3 only added nullable/defaulted columns, indexes and a table. Version 4's
// columns are defaulted too, but npacd delivers by them: an older npacd would write every
// row as an unconfirmed push of unknown operation, answers to providers included. So a
// version-4 file is refused by npacd of schema 1..3 (downgrade = restore a backup).
// Version 5 only adds a table that npacd of schema 4 never reads: such an npacd can still
// use the file (its API unauthenticated, as it always was), so the value stays 4.
// Version 6 allows exactly the values version 5 allowed: it stays 4 as well.
// Version 7 only adds a table an older npacd never reads: still 4.
// Version 8 moves every PDU out of outbound_queue: an npacd of schema 4..7 reads and writes
// outbound_queue.pdu, so a version-8 file is refused by it (kTooNew); the value is 8.
// Version 9 records delivery progress in delivery_progress instead of updating the rows:
// an npacd of schema 8 would read every row a record acknowledged as still queued and send
// it again, so a version-9 file is refused by it; the value is 9.
// Version 10 promises that created_at never decreases in id order: an npacd of schema 9
// stamps rows by its clock alone, and a time range read by an id range would then miss
// rows, so a version-10 file is refused by it; the value is 10.
// Version 11's counts are kept by settle() and the purge: an npacd of schema 10 would move
// marks and purge rows without them, and the summary would then count wrong, so a
// version-11 file is refused by it; the value is 11.
// Version 12's retention ranges are kept by settle(): an npacd of schema 11 would take
// messages acknowledged late off delivery_open without listing them late, and the purge of
// schema 12 would then delete them by range before their retention ran out, so a
// version-12 file is refused by it; the value is 12.
// Version 13 only adds tables an npacd of schema 12 never reads (it throttles by its
// per-provider tunables alone, as before): it can still use the file; the value stays 12.
inline constexpr int kCompatibleSchemaVersion = 12;

// The priority npacd has given its answers to providers' requests since schema 1.
inline constexpr int kLegacyResponsePriority = 10;

struct SchemaVersion {
  int version = 0;
  int last_compatible_version = 0;
};

// Creates, upgrades or refuses as described above. Called by Database::open.
Status migrateToCurrent(Database& db, const MigrationOptions& options = {});

// Brings an existing npacd file (one with a meta table) up to `target_version` exactly,
// through the same ladder steps. For tests and tools that need a genuine old-version file
// (a version-3 file as npacd of schema 3 left it); npacd itself uses migrateToCurrent.
Status upgradeExistingTo(Database& db, int target_version, const MigrationOptions& options = {});

// The versions recorded in the meta table (kNotFound when there is no meta table).
Result<SchemaVersion> readSchemaVersion(Database& db);

}  // namespace npac::db
