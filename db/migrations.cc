#include "db/migrations.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/database.h"
#include "db/progress_log.h"
#include "db/schema.h"
#include "db/transaction.h"

namespace npac::db {
namespace {

// Version 1 → 2. A key's last accepted bind sequence number (NULL: none yet) so a
// replayed bind is refused; the retransmission flag for re-queued messages and when a
// message failed; and an index so the retention purge does not scan the whole queue.
constexpr const char* kMigrateV1ToV2 = R"sql(
ALTER TABLE provider_keys ADD COLUMN last_sequence INTEGER;
ALTER TABLE outbound_queue ADD COLUMN retransmission INTEGER NOT NULL DEFAULT 0
  CHECK(retransmission IN (0, 1));
ALTER TABLE outbound_queue ADD COLUMN failed_at INTEGER;
CREATE INDEX outbound_queue_acknowledged ON outbound_queue(acknowledged_at)
  WHERE state = 'acknowledged';
)sql";

// Version 2 → 3. An application's idempotency key per queued message, unique per provider
// while the row is kept, so a submission whose answer was lost can be repeated safely; and
// the NPAC's own key lists, which sign the NPAC's access control in an accepting AARE
// (the NPAC side of the bind's mutual authentication, docs/PROTOCOL.md).
constexpr const char* kMigrateV2ToV3 = R"sql(
ALTER TABLE outbound_queue ADD COLUMN idempotency_key TEXT
  CHECK(idempotency_key IS NULL OR length(idempotency_key) BETWEEN 1 AND 128);
CREATE UNIQUE INDEX outbound_queue_idempotency ON outbound_queue(spid, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE TABLE npac_keys(
  list_id INTEGER NOT NULL,
  key_id INTEGER NOT NULL,
  algorithm TEXT NOT NULL CHECK(algorithm IN ('rsa-sha256', 'ed25519')),
  public_key_pem TEXT NOT NULL,
  private_key_pem TEXT NOT NULL,
  not_before_at INTEGER NOT NULL,
  not_after_at INTEGER NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('active', 'expired', 'revoked')),
  created_at INTEGER NOT NULL,
  last_sequence INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(list_id, key_id));
)sql";

// Version 3 → 4. What each queued row is — push or response, its CMIP operation, whether
// the provider answers it — stored with it, so delivery never decodes the PDU to find out.
// The defaults are what the priority rule says of a row of priority other than 10;
// backfillMessageFacts() then corrects the rows already in the queue.
constexpr const char* kMigrateV3ToV4 = R"sql(
ALTER TABLE outbound_queue ADD COLUMN kind TEXT NOT NULL DEFAULT 'push'
  CHECK(kind IN ('push', 'response'));
ALTER TABLE outbound_queue ADD COLUMN opcode INTEGER NOT NULL DEFAULT -1;
ALTER TABLE outbound_queue ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0
  CHECK(confirmed IN (0, 1));
)sql";

// Version 4 → 5. The admin API's bearer tokens (db/token_store.h): a name, a role and the
// SHA-256 of the secret, never the secret itself; revoked rows stay so a name is never
// reused and the audit log's actors keep meaning one holder.
constexpr const char* kMigrateV4ToV5 = R"sql(
CREATE TABLE api_tokens(
  name TEXT PRIMARY KEY NOT NULL CHECK(length(name) BETWEEN 1 AND 64),
  role TEXT NOT NULL CHECK(role IN ('operator', 'application', 'reader')),
  secret_sha256 BLOB NOT NULL UNIQUE CHECK(length(secret_sha256) = 32),
  created_at INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  revoked_at INTEGER);
)sql";

// Version 5 → 6. The outbound queue's state CHECK as a chain of comparisons instead of
// `IN (4 values)`: SQLite evaluates an IN list of more than two constants by building a
// temporary index (OP_OpenEphemeral) every time the constraint is checked, i.e. on every
// insert and on every state change of every message; the comparisons cost nothing. The
// same values are allowed. SQLite cannot change a CHECK in place, so the table is rebuilt
// (the rows, ids and AUTOINCREMENT high-water mark kept: an id is never reused).
constexpr const char* kMigrateV5ToV6 = R"sql(
CREATE TABLE outbound_queue_v6(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  spid TEXT NOT NULL REFERENCES service_providers(spid),
  function_mask INTEGER NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  pdu BLOB NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued'
    CHECK(state = 'queued' OR state = 'sent' OR state = 'acknowledged' OR state = 'failed'),
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  sent_at INTEGER,
  acknowledged_at INTEGER,
  association_id INTEGER,
  failure_reason TEXT,
  retransmission INTEGER NOT NULL DEFAULT 0 CHECK(retransmission IN (0, 1)),
  failed_at INTEGER,
  idempotency_key TEXT CHECK(idempotency_key IS NULL OR length(idempotency_key) BETWEEN 1 AND 128),
  kind TEXT NOT NULL DEFAULT 'push' CHECK(kind IN ('push', 'response')),
  opcode INTEGER NOT NULL DEFAULT -1,
  confirmed INTEGER NOT NULL DEFAULT 0 CHECK(confirmed IN (0, 1)));
INSERT INTO outbound_queue_v6(id, spid, function_mask, priority, pdu, state, attempts,
  created_at, sent_at, acknowledged_at, association_id, failure_reason, retransmission, failed_at,
  idempotency_key, kind, opcode, confirmed)
  SELECT id, spid, function_mask, priority, pdu, state, attempts, created_at, sent_at,
    acknowledged_at, association_id, failure_reason, retransmission, failed_at, idempotency_key,
    kind, opcode, confirmed FROM outbound_queue;
DELETE FROM sqlite_sequence WHERE name = 'outbound_queue_v6';
INSERT INTO sqlite_sequence(name, seq)
  SELECT 'outbound_queue_v6', seq FROM sqlite_sequence WHERE name = 'outbound_queue';
DROP TABLE outbound_queue;
ALTER TABLE outbound_queue_v6 RENAME TO outbound_queue;
CREATE INDEX outbound_queue_ready ON outbound_queue(spid, priority DESC, id)
  WHERE state = 'queued';
CREATE INDEX outbound_queue_by_created ON outbound_queue(spid, created_at);
CREATE INDEX outbound_queue_in_flight ON outbound_queue(association_id) WHERE state = 'sent';
CREATE INDEX outbound_queue_acknowledged ON outbound_queue(acknowledged_at)
  WHERE state = 'acknowledged';
CREATE UNIQUE INDEX outbound_queue_idempotency ON outbound_queue(spid, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
)sql";

// Version 6 → 7. Which node owns each provider's logical association (db/lease_store.h).
// On PostgreSQL also the sequence association ids are drawn from, so that two nodes never
// give the same id to two associations; it starts above every id already recorded.
constexpr const char* kMigrateV6ToV7 = R"sql(
CREATE TABLE provider_leases(
  spid TEXT PRIMARY KEY NOT NULL REFERENCES service_providers(spid) ON DELETE CASCADE,
  owner TEXT NOT NULL CHECK(length(owner) BETWEEN 1 AND 128),
  epoch INTEGER NOT NULL CHECK(epoch >= 1),
  expires_at INTEGER NOT NULL);
)sql";
constexpr const char* kMigrateV6ToV7Postgres = R"sql(
CREATE TABLE provider_leases(
  spid TEXT PRIMARY KEY NOT NULL REFERENCES service_providers(spid) ON DELETE CASCADE,
  owner TEXT NOT NULL CHECK(length(owner) BETWEEN 1 AND 128),
  epoch BIGINT NOT NULL CHECK(epoch >= 1),
  expires_at BIGINT NOT NULL);
CREATE SEQUENCE association_ids;
SELECT setval('association_ids', GREATEST(1, (SELECT COALESCE(MAX(m), 0) FROM (
  SELECT MAX(association_id) AS m FROM outbound_queue
  UNION ALL SELECT MAX(association_id) FROM association_log) AS highest)), true);
)sql";

// Version 7 → 8. A message's bytes are written once (issue "A message is written once"):
// the PDU moves from each queue row to message_bodies, which the row names by body_id and
// which is never updated; a broadcast is one body for all its addressees' rows
// (addressees counts them, and the retention purge deletes a body with its last row).
// The row that is rewritten as the message is sent and acknowledged shrinks from the
// PDU's few hundred bytes to its state, so each state change rewrites a fraction of the
// pages. Every existing row gets a body of its own, numbered as the row. SQLite cannot
// drop the NOT NULL pdu column and add another in place: the table is rebuilt as in
// version 6 (rows, ids and the AUTOINCREMENT high-water mark kept).
constexpr const char* kMigrateV7ToV8 = R"sql(
CREATE TABLE message_bodies(
  id INTEGER PRIMARY KEY,
  pdu BLOB NOT NULL,
  addressees INTEGER NOT NULL CHECK(addressees >= 1));
INSERT INTO message_bodies(id, pdu, addressees) SELECT id, pdu, 1 FROM outbound_queue;
CREATE TABLE outbound_queue_v8(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  spid TEXT NOT NULL REFERENCES service_providers(spid),
  function_mask INTEGER NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'queued'
    CHECK(state = 'queued' OR state = 'sent' OR state = 'acknowledged' OR state = 'failed'),
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  sent_at INTEGER,
  acknowledged_at INTEGER,
  association_id INTEGER,
  failure_reason TEXT,
  retransmission INTEGER NOT NULL DEFAULT 0 CHECK(retransmission IN (0, 1)),
  failed_at INTEGER,
  idempotency_key TEXT CHECK(idempotency_key IS NULL OR length(idempotency_key) BETWEEN 1 AND 128),
  kind TEXT NOT NULL DEFAULT 'push' CHECK(kind IN ('push', 'response')),
  opcode INTEGER NOT NULL DEFAULT -1,
  confirmed INTEGER NOT NULL DEFAULT 0 CHECK(confirmed IN (0, 1)),
  body_id INTEGER NOT NULL);
INSERT INTO outbound_queue_v8(id, spid, function_mask, priority, state, attempts, created_at,
  sent_at, acknowledged_at, association_id, failure_reason, retransmission, failed_at,
  idempotency_key, kind, opcode, confirmed, body_id)
  SELECT id, spid, function_mask, priority, state, attempts, created_at, sent_at,
    acknowledged_at, association_id, failure_reason, retransmission, failed_at, idempotency_key,
    kind, opcode, confirmed, id FROM outbound_queue;
DELETE FROM sqlite_sequence WHERE name = 'outbound_queue_v8';
INSERT INTO sqlite_sequence(name, seq)
  SELECT 'outbound_queue_v8', seq FROM sqlite_sequence WHERE name = 'outbound_queue';
DROP TABLE outbound_queue;
ALTER TABLE outbound_queue_v8 RENAME TO outbound_queue;
CREATE INDEX outbound_queue_ready ON outbound_queue(spid, priority DESC, id)
  WHERE state = 'queued';
CREATE INDEX outbound_queue_by_created ON outbound_queue(spid, created_at);
CREATE INDEX outbound_queue_in_flight ON outbound_queue(association_id) WHERE state = 'sent';
CREATE INDEX outbound_queue_acknowledged ON outbound_queue(acknowledged_at)
  WHERE state = 'acknowledged';
CREATE UNIQUE INDEX outbound_queue_idempotency ON outbound_queue(spid, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
)sql";
// The same on PostgreSQL, which drops and adds columns in place. body_id ends the table on
// both engines, so the two schemas keep their columns in one order.
constexpr const char* kMigrateV7ToV8Postgres = R"sql(
CREATE TABLE message_bodies(
  id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  pdu BYTEA NOT NULL,
  addressees BIGINT NOT NULL CHECK(addressees >= 1));
INSERT INTO message_bodies(id, pdu, addressees) SELECT id, pdu, 1 FROM outbound_queue;
SELECT setval(pg_get_serial_sequence('message_bodies', 'id'),
  GREATEST(1, (SELECT COALESCE(MAX(id), 0) FROM message_bodies)), true);
ALTER TABLE outbound_queue ADD COLUMN body_id BIGINT;
UPDATE outbound_queue SET body_id = id;
ALTER TABLE outbound_queue ALTER COLUMN body_id SET NOT NULL;
ALTER TABLE outbound_queue DROP COLUMN pdu;
)sql";

// Version 9: delivery progress as appended records (db/progress_log.h) and each provider's
// settled mark. Tables only; an npacd of schema 8 never reads them.
// Version 10: one index over a provider's rows, not two. Since version 9 no row leaves
// 'queued' by its columns, so the ready index holds every row, beside the index by
// creation time: two scattered inserts per addressee of a broadcast. created_at is made
// never to decrease in id order (a clock stepped back stamped rows earlier than their
// predecessors: they take the latest earlier stamp), so a time range is an id range
// (OutboundQueue::createdBetween) and outbound_queue_by_created goes. The same statements
// on both engines (UPDATE ... FROM and window functions: SQLite 3.33, PostgreSQL 9.5).
constexpr const char* kMigrateV9ToV10 = R"sql(
UPDATE outbound_queue SET created_at = m.running
  FROM (SELECT id, max(created_at) OVER (ORDER BY id) AS running FROM outbound_queue) AS m
  WHERE outbound_queue.id = m.id AND outbound_queue.created_at < m.running;
DROP INDEX IF EXISTS outbound_queue_by_created;
)sql";

// Version 11: each provider's rows at or below its settled mark counted per function mask
// (delivery_settled_counts), so that the queue summary and /metrics read one row per mask
// instead of every retained row. The step counts them once, as settle() then keeps them:
// every row at or below the mark except those an earlier schema left acknowledged by their
// columns (counted from their own index). The same statement on both engines.
constexpr const char* kFillSettledCounts = R"sql(
INSERT INTO delivery_settled_counts(spid, function_mask, messages)
  SELECT q.spid, q.function_mask, count(*) FROM outbound_queue AS q
    JOIN delivery_settled AS s ON s.spid = q.spid
    WHERE q.id <= s.settled_through AND q.state <> 'acknowledged'
    GROUP BY q.spid, q.function_mask;
)sql";

// Version 12: notes of when each provider's messages at or below its mark were
// acknowledged (db/progress_log.h "Retention ranges"), made from its acknowledgement
// records: for each minute with records, at the newest of them, every message below the
// lowest id named by a later record (and at or below the mark) was acknowledged by then.
// Messages acknowledged after the mark had passed them waiting are named by such a later
// record, so none is purged before its retention runs out; rows an earlier schema left
// acknowledged by their columns are not purged by ranges. Both engines.
Status fillMarkNotes(Database& db) {
  Result<Statement> marks = db.prepare("SELECT spid, settled_through FROM delivery_settled ORDER BY spid");
  if (!marks) return marks.status();
  std::vector<std::pair<std::string, MessageId>> providers;
  for (;;) {
    Result<bool> row = marks->step();
    if (!row) return row.status();
    if (!*row) break;
    providers.emplace_back(marks->columnText(0), marks->columnInt64(1));
  }
  Result<Statement> records =
      db.prepare("SELECT at, first_id FROM delivery_progress WHERE spid = ? AND event = 2 AND first_id <= ?");
  if (!records) return records.status();
  for (const auto& [spid, mark] : providers) {
    records->reset();
    records->bindText(0, spid).bindInt64(1, mark);
    std::vector<std::pair<TimeMs, MessageId>> acknowledgements;
    for (;;) {
      Result<bool> row = records->step();
      if (!row) return row.status();
      if (!*row) break;
      acknowledgements.emplace_back(records->columnInt64(0), records->columnInt64(1));
    }
    const std::vector<ProgressLog::MarkNote> notes =
        ProgressLog::notesFor(std::move(acknowledgements), mark, std::numeric_limits<TimeMs>::min());
    if (Status status = ProgressLog(db).saveNotes(spid, notes); !status) return status;
  }
  return Status::ok();
}

Status backfillMessageFacts(Database& db, const MigrationOptions& options) {
  if (!options.classify_queued_pdu) {
    Result<Statement> update = db.prepare("UPDATE outbound_queue SET kind = 'response' WHERE priority = ?");
    if (!update) return update.status();
    update->bindInt64(0, kLegacyResponsePriority);
    return update->run();
  }
  Result<Statement> rows = db.prepare("SELECT id, priority, pdu FROM outbound_queue ORDER BY id");
  if (!rows) return rows.status();
  Result<Statement> update =
      db.prepare("UPDATE outbound_queue SET kind = ?, opcode = ?, confirmed = ? WHERE id = ?");
  if (!update) return update.status();
  for (;;) {
    Result<bool> row = rows->step();
    if (!row) return row.status();
    if (!*row) return Status::ok();
    const Bytes pdu = rows->columnBlob(2);
    std::optional<MessageFacts> facts = options.classify_queued_pdu(pdu);
    if (!facts) {
      facts = MessageFacts{};
      if (rows->columnInt(1) == kLegacyResponsePriority) facts->kind = MessageKind::kResponse;
    }
    update->reset();
    update->bindText(0, toString(facts->kind))
        .bindInt64(1, facts->opcode)
        .bindBool(2, facts->confirmed)
        .bindInt64(3, rows->columnInt64(0));
    if (Status status = update->run(); !status) return status;
  }
}

Result<bool> hasTable(Database& db, std::string_view name) {
  Result<Statement> query = db.prepare(
      db.backend() == Backend::kPostgres
          ? "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = ?"
          : "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  if (!query) return query.status();
  query->bindText(0, name);
  return query->step();
}

Result<bool> hasAnyTable(Database& db) {
  Result<Statement> query = db.prepare(
      db.backend() == Backend::kPostgres
          ? "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
          : "SELECT 1 FROM sqlite_master WHERE type = 'table'");
  if (!query) return query.status();
  return query->step();
}

Status writeMeta(Database& db, int version, int compatible) {
  Result<Statement> upsert =
      db.prepare("INSERT INTO meta(key, value) VALUES(?, ?) "
                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (!upsert) return upsert.status();
  upsert->bindText(0, "version").bindInt64(1, version);
  if (Status status = upsert->run(); !status) return status;
  upsert->reset();
  upsert->bindText(0, "last_compatible_version").bindInt64(1, compatible);
  return upsert->run();
}

// The oldest schema that can use a file at `version` (meta.last_compatible_version).
int compatibleVersionOf(int version) {
  if (version >= 12) return kCompatibleSchemaVersion;
  if (version == 11) return 11;
  if (version == 10) return 10;
  if (version == 9) return 9;
  if (version == 8) return 8;
  return version >= 4 ? 4 : 1;
}

// The ladder from `version` up to `target`: one step per version, in order, in the
// caller's transaction, then the meta row.
Status climb(Database& db, int version, int target, const MigrationOptions& options) {
  // PostgreSQL databases start at schema 6 (the first npacd that could use one): there is
  // no older PostgreSQL database to climb from.
  if (db.backend() == Backend::kPostgres && version < 6) {
    return Status::make(Status::Code::kCorrupt,
                        "the PostgreSQL database records schema version " + std::to_string(version) +
                            ", older than any npacd on PostgreSQL wrote",
                        db.path(), "restore the latest backup");
  }
  if (version == 1 && target > 1) {
    if (Status status = db.executeScript(kMigrateV1ToV2); !status) return status;
    version = 2;
  }
  if (version == 2 && target > 2) {
    if (Status status = db.executeScript(kMigrateV2ToV3); !status) return status;
    version = 3;
  }
  if (version == 3 && target > 3) {
    if (Status status = db.executeScript(kMigrateV3ToV4); !status) return status;
    if (Status status = backfillMessageFacts(db, options); !status) return status;
    version = 4;
  }
  if (version == 4 && target > 4) {
    if (Status status = db.executeScript(kMigrateV4ToV5); !status) return status;
    version = 5;
  }
  if (version == 5 && target > 5) {
    if (Status status = db.executeScript(kMigrateV5ToV6); !status) return status;
    version = 6;
  }
  if (version == 6 && target > 6) {
    if (Status status = db.executeScript(db.backend() == Backend::kPostgres ? kMigrateV6ToV7Postgres
                                                                          : kMigrateV6ToV7);
        !status) {
      return status;
    }
    version = 7;
  }
  if (version == 7 && target > 7) {
    if (Status status = db.executeScript(db.backend() == Backend::kPostgres ? kMigrateV7ToV8Postgres
                                                                          : kMigrateV7ToV8);
        !status) {
      return status;
    }
    version = 8;
  }
  if (version == 8 && target > 8) {
    // Schema 9's tables, as new files have them (db/schema.h).
    if (Status status = db.executeScript(schema::deliveryProgress(db.backend())); !status) return status;
    version = 9;
  }
  if (version == 9 && target > 9) {
    if (Status status = db.executeScript(kMigrateV9ToV10); !status) return status;
    version = 10;
  }
  if (version == 10 && target > 10) {
    if (Status status = db.executeScript(schema::settledCounts(db.backend())); !status) return status;
    if (Status status = db.executeScript(kFillSettledCounts); !status) return status;
    version = 11;
  }
  if (version == 11 && target > 11) {
    if (Status status = db.executeScript(schema::retentionRanges(db.backend())); !status) return status;
    if (Status status = fillMarkNotes(db); !status) return status;
    version = 12;
  }
  if (version == 12 && target > 12) {
    if (Status status = db.executeScript(schema::throttleGroups(db.backend())); !status) return status;
    version = 13;
  }
  if (version != target) {
    return Status::internal("migration ladder stopped at version " + std::to_string(version));
  }
  return writeMeta(db, target, compatibleVersionOf(target));
}

}  // namespace

Result<SchemaVersion> readSchemaVersion(Database& db) {
  Result<bool> has_meta = hasTable(db, "meta");
  if (!has_meta) return has_meta.status();
  if (!*has_meta) return Status::notFound("no meta table").withFile(db.path());
  Result<Statement> query = db.prepare("SELECT value FROM meta WHERE key = ?");
  if (!query) return query.status();
  SchemaVersion out;
  for (auto [key, field] : {std::pair{"version", &out.version},
                            std::pair{"last_compatible_version", &out.last_compatible_version}}) {
    query->reset();
    query->bindText(0, key);
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) {
      return Status::make(Status::Code::kCorrupt, std::string("meta table has no ") + key, db.path(),
                          "the file's meta table is damaged: restore the latest backup");
    }
    *field = query->columnInt(0);
  }
  return out;
}

Status migrateToCurrent(Database& db, const MigrationOptions& options) {
  Transaction txn(db);
  if (Status status = txn.begin(); !status) return status;
  // Two npacd nodes starting together on one PostgreSQL database: one creates or upgrades
  // the schema, the other waits here and then finds it current. (SQLite's BEGIN IMMEDIATE
  // already serialises them.) The key is any constant of our own.
  if (db.backend() == Backend::kPostgres) {
    if (Status status = db.execute("SELECT pg_advisory_xact_lock(7236052)"); !status) return status;
  }

  Result<SchemaVersion> found = readSchemaVersion(db);
  if (!found && !found.status().isNotFound()) return found.status();
  if (!found) {
    Result<bool> any = hasAnyTable(db);
    if (!any) return any.status();
    if (*any) {
      return Status::make(Status::Code::kCorrupt,
                          "the file has tables but no npacd meta table: it belongs to another "
                          "application",
                          db.path(), "point --db at an npacd database or at a new file name");
    }
    // The whole schema at kCurrentSchemaVersion, one definition for both engines (db/schema.h).
    for (const std::string& ddl :
         {schema::baseTables(db.backend()), schema::deliveryProgress(db.backend()), schema::settledCounts(db.backend()),
          schema::retentionRanges(db.backend()), schema::throttleGroups(db.backend())}) {
      if (Status status = db.executeScript(ddl); !status) return status;
    }
    if (Status status = writeMeta(db, kCurrentSchemaVersion, kCompatibleSchemaVersion); !status) {
      return status;
    }
    return txn.commit();
  }

  SchemaVersion schema = *found;
  if (schema.last_compatible_version > kCurrentSchemaVersion) {
    return Status::make(
        Status::Code::kTooNew,
        "the database was written by a newer npacd (schema version " +
            std::to_string(schema.version) + ", usable from version " +
            std::to_string(schema.last_compatible_version) + "; this npacd knows up to " +
            std::to_string(kCurrentSchemaVersion) + ")",
        db.path(), "run the newer npacd, or restore a backup taken before the upgrade");
  }
  if (schema.version >= kCurrentSchemaVersion) return txn.commit();  // current, or newer-compatible
  if (schema.version < 1) {
    return Status::make(Status::Code::kCorrupt,
                        "meta table records an impossible schema version " +
                            std::to_string(schema.version),
                        db.path(), "restore the latest backup");
  }

  if (Status status = climb(db, schema.version, kCurrentSchemaVersion, options); !status) return status;
  return txn.commit();
}

Status upgradeExistingTo(Database& db, int target_version, const MigrationOptions& options) {
  if (target_version < 1 || target_version > kCurrentSchemaVersion) {
    return Status::invalidArgument("no schema version " + std::to_string(target_version));
  }
  Transaction txn(db);
  if (Status status = txn.begin(); !status) return status;
  Result<SchemaVersion> found = readSchemaVersion(db);
  if (!found) return found.status();
  if (found->version > target_version) {
    return Status::invalidArgument("the file is at schema version " + std::to_string(found->version) +
                                   ", above " + std::to_string(target_version));
  }
  if (Status status = climb(db, found->version, target_version, options); !status) return status;
  return txn.commit();
}

}  // namespace npac::db
