#include "db/migrations.h"

#include <catch2/catch.hpp>

#include <map>

#include "db/key_store.h"
#include "db/outbound_queue.h"
#include "db/progress_log.h"
#include "db/queue_summary.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

// Schema version 1 exactly as npacd 0.1 (version 1) created it. Kept here, not shared
// with db/migrations.cc, so the test keeps building genuinely old files.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL);
CREATE TABLE service_providers(
  spid TEXT PRIMARY KEY NOT NULL CHECK(length(spid) = 4),
  name TEXT NOT NULL,
  system_type TEXT NOT NULL CHECK(system_type IN ('soa', 'lsms', 'soa-and-lsms', 'npac')),
  enabled INTEGER NOT NULL DEFAULT 1 CHECK(enabled IN (0, 1)));
CREATE TABLE provider_nsaps(
  spid TEXT NOT NULL REFERENCES service_providers(spid) ON DELETE CASCADE,
  nsap BLOB NOT NULL CHECK(length(nsap) BETWEEN 1 AND 20),
  weight INTEGER CHECK(weight IS NULL OR weight BETWEEN 1 AND 99),
  relative_cost INTEGER CHECK(relative_cost IS NULL OR relative_cost >= 0),
  PRIMARY KEY(spid, nsap));
CREATE TABLE provider_keys(
  spid TEXT NOT NULL REFERENCES service_providers(spid) ON DELETE CASCADE,
  list_id INTEGER NOT NULL,
  key_id INTEGER NOT NULL,
  algorithm TEXT NOT NULL CHECK(algorithm IN ('rsa-sha256', 'ed25519')),
  public_key_pem TEXT NOT NULL,
  not_before_at INTEGER NOT NULL,
  not_after_at INTEGER NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('active', 'expired', 'revoked')),
  PRIMARY KEY(spid, list_id, key_id));
CREATE TABLE tunable_overrides(
  name TEXT NOT NULL,
  spid TEXT NOT NULL DEFAULT '',
  value TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  updated_by TEXT NOT NULL,
  PRIMARY KEY(name, spid));
CREATE TABLE association_log(
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  event TEXT NOT NULL CHECK(event IN ('bind', 'reject', 'release', 'abort')),
  spid TEXT NOT NULL,
  nsap BLOB,
  association_id INTEGER,
  function_mask INTEGER NOT NULL DEFAULT 0,
  recovery_mode INTEGER NOT NULL DEFAULT 0 CHECK(recovery_mode IN (0, 1)),
  bound_at INTEGER,
  reason TEXT NOT NULL DEFAULT '',
  diagnostic TEXT NOT NULL DEFAULT '');
CREATE INDEX association_log_by_provider ON association_log(spid, at);
CREATE TABLE audit_log(
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  subject TEXT NOT NULL,
  old_value TEXT,
  new_value TEXT);
CREATE INDEX audit_log_by_time ON audit_log(at);
CREATE TABLE outbound_queue(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  spid TEXT NOT NULL REFERENCES service_providers(spid),
  function_mask INTEGER NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  pdu BLOB NOT NULL,
  state TEXT NOT NULL DEFAULT 'queued'
    CHECK(state IN ('queued', 'sent', 'acknowledged', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  sent_at INTEGER,
  acknowledged_at INTEGER,
  association_id INTEGER,
  failure_reason TEXT);
CREATE INDEX outbound_queue_ready ON outbound_queue(spid, priority DESC, id)
  WHERE state = 'queued';
CREATE INDEX outbound_queue_by_created ON outbound_queue(spid, created_at);
CREATE INDEX outbound_queue_in_flight ON outbound_queue(association_id) WHERE state = 'sent';
INSERT INTO meta(key, value) VALUES('version', 1), ('last_compatible_version', 1);
INSERT INTO service_providers VALUES('0001', 'Acme', 'soa', 1);
INSERT INTO provider_keys VALUES('0001', 1, 1, 'ed25519', '-----BEGIN PUBLIC KEY-----', 0, 1000,
                                 'active');
INSERT INTO outbound_queue(spid, function_mask, pdu, state, created_at, sent_at, association_id)
  VALUES('0001', 1, x'3003020105', 'sent', 10, 20, 7);
)sql";

std::unique_ptr<Database> openRaw(const std::string& path) {
  OpenOptions options;
  options.apply_schema = false;
  auto db = Database::open(path, options);
  REQUIRE(db.isOk());
  return std::move(db).value();
}

void buildV1File(const std::string& path, const std::string& extra_sql = {}) {
  auto db = openRaw(path);
  REQUIRE(db->executeScript(kSchemaV1).isOk());
  if (!extra_sql.empty()) REQUIRE(db->executeScript(extra_sql).isOk());
}

void setVersions(const std::string& path, int version, int compatible) {
  auto db = openRaw(path);
  REQUIRE(db->executeScript("UPDATE meta SET value = " + std::to_string(version) +
                            " WHERE key = 'version'; UPDATE meta SET value = " +
                            std::to_string(compatible) +
                            " WHERE key = 'last_compatible_version'")
              .isOk());
}

// Every table's columns (name, type, not null, default, pk) and every index's SQL.
std::map<std::string, std::string> schemaShape(Database& db) {
  std::map<std::string, std::string> shape;
  auto objects = db.prepare(
      "SELECT type, name, coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'");
  REQUIRE(objects.isOk());
  std::vector<std::pair<std::string, std::string>> tables;
  while (objects->step().value()) {
    if (objects->columnText(0) == "index") {
      shape["index " + objects->columnText(1)] = objects->columnText(2);
    } else if (objects->columnText(0) == "table") {
      tables.emplace_back(objects->columnText(1), "");
    }
  }
  for (auto& [table, unused] : tables) {
    auto columns = db.prepare("SELECT name, type, \"notnull\", coalesce(dflt_value, 'NULL'), pk "
                              "FROM pragma_table_info(?)");
    REQUIRE(columns.isOk());
    columns->bindText(0, table);
    std::string description;
    while (columns->step().value()) {
      description += columns->columnText(0) + " " + columns->columnText(1) + " " +
                     columns->columnText(2) + " " + columns->columnText(3) + " " +
                     columns->columnText(4) + "; ";
    }
    shape["table " + table] = description;
  }
  return shape;
}

}  // namespace

TEST_CASE("A new file is created at the current schema version", "[sqlite]") {
  TempDir dir;
  auto db = openFresh(dir);
  auto version = readSchemaVersion(*db);
  REQUIRE(version.isOk());
  CHECK(version->version == kCurrentSchemaVersion);
  CHECK(version->last_compatible_version == kCompatibleSchemaVersion);
}

TEST_CASE("Reopening a current file leaves it at the current version", "[sqlite]") {
  TempDir dir;
  { openFresh(dir); }
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
}

TEST_CASE("A version 1 file is upgraded through every step to the current version keeping its data", "[sqlite]") {
  TempDir dir;
  buildV1File(dir.file("npacd.db"));
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  auto key = KeyStore(*db).get("0001", 1, 1);
  REQUIRE(key.isOk());
  CHECK_FALSE(key->last_sequence.has_value());  // new column, no sequence seen yet
  OutboundQueue queue(*db);
  auto message = queue.get(1);
  REQUIRE(message.isOk());
  CHECK(message->pdu == Bytes{0x30, 0x03, 0x02, 0x01, 0x05});
  CHECK_FALSE(message->retransmission);
  // The new column works: losing association 7 re-queues the message as a retransmission.
  CHECK(queue.requeueAssociation(7).value() == 1);
  CHECK(queue.get(1)->retransmission);
  // Version 3's column and table exist and are empty for the old rows.
  auto idempotency = db->prepare("SELECT count(*) FROM outbound_queue WHERE idempotency_key IS NULL");
  REQUIRE(idempotency->step().value());
  CHECK(idempotency->columnInt(0) == 1);
  auto npac_keys = db->prepare("SELECT count(*) FROM npac_keys");
  REQUIRE(npac_keys->step().value());
  CHECK(npac_keys->columnInt(0) == 0);
}

TEST_CASE("An upgraded version 1 file has exactly the schema of a new file", "[sqlite]") {
  TempDir dir;
  buildV1File(dir.file("old.db"));
  auto upgraded = Database::open(dir.file("old.db"));
  REQUIRE(upgraded.isOk());
  auto fresh = openFresh(dir);
  auto upgraded_shape = schemaShape(**upgraded);
  auto fresh_shape = schemaShape(*fresh);
  REQUIRE(upgraded_shape.size() == fresh_shape.size());
  for (const auto& [name, shape] : fresh_shape) {
    INFO(name);
    CHECK(upgraded_shape[name] == shape);
  }
}

TEST_CASE("A migration that fails leaves the file at its old version untouched", "[sqlite]") {
  TempDir dir;
  // An index with the name version 2 wants to create makes the step fail half-way.
  buildV1File(dir.file("npacd.db"),
              "CREATE INDEX outbound_queue_acknowledged ON outbound_queue(id)");
  auto db = Database::open(dir.file("npacd.db"));
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().file() == dir.file("npacd.db"));
  auto raw = openRaw(dir.file("npacd.db"));
  CHECK(readSchemaVersion(*raw)->version == 1);
  auto column = raw->prepare(
      "SELECT count(*) FROM pragma_table_info('provider_keys') WHERE name = 'last_sequence'");
  REQUIRE(column->step().value());
  CHECK(column->columnInt(0) == 0);  // the first ALTER of the step was rolled back too
}

TEST_CASE("A database from a newer npacd that we cannot use is refused with a clear message", "[sqlite]") {
  TempDir dir;
  { openFresh(dir); }
  setVersions(dir.file("npacd.db"), kCurrentSchemaVersion + 1, kCurrentSchemaVersion + 1);
  auto db = Database::open(dir.file("npacd.db"));
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kTooNew);
  CHECK(db.status().file() == dir.file("npacd.db"));
  CHECK(db.status().message().find("newer npacd") != std::string::npos);
  CHECK(db.status().hint().find("backup") != std::string::npos);
}

TEST_CASE("A newer database that declares itself compatible is used without downgrading", "[sqlite]") {
  TempDir dir;
  { openFresh(dir); }
  setVersions(dir.file("npacd.db"), kCurrentSchemaVersion + 1, kCurrentSchemaVersion);
  auto db = Database::open(dir.file("npacd.db"));
  REQUIRE(db.isOk());
  CHECK(readSchemaVersion(**db)->version == kCurrentSchemaVersion + 1);
}

TEST_CASE("An SQLite file of another application is refused", "[sqlite]") {
  TempDir dir;
  {
    auto raw = openRaw(dir.file("other.db"));
    REQUIRE(raw->execute("CREATE TABLE photos(id INTEGER PRIMARY KEY)").isOk());
  }
  auto db = Database::open(dir.file("other.db"));
  REQUIRE_FALSE(db.isOk());
  CHECK(db.status().code() == Status::Code::kCorrupt);
  CHECK(db.status().message().find("another application") != std::string::npos);
}

// ---- version 4: typed queue rows -----------------------------------------------------

namespace {

// Rows as npacd of schema 2 or 3 queued them: a push Invoke, an answer (priority 10),
// and bytes nothing can classify at priorities 0 and 10.
constexpr const char* kOldRows = R"sql(
INSERT INTO outbound_queue(spid, function_mask, priority, pdu, created_at)
  VALUES('0001', 1, 0, x'a106020100020107', 100),
         ('0001', 1, 10, x'a203020105', 101),
         ('0001', 1, 0, x'ffff', 102),
         ('0001', 1, 10, x'eeee', 103);
)sql";

// A stand-in for npacd's classifier: Invoke [1] of operation 7 → confirmed push,
// ReturnResult [2] → response, anything else → cannot tell.
std::optional<MessageFacts> classifyForTest(std::span<const std::uint8_t> pdu) {
  if (!pdu.empty() && pdu[0] == 0xa1) return MessageFacts{MessageKind::kPush, 7, true};
  if (!pdu.empty() && pdu[0] == 0xa2) return MessageFacts{MessageKind::kResponse, kUnknownOpcode, false};
  return std::nullopt;
}

// A genuine file at `version` (1..3): the version-1 schema climbed by the ladder's own
// steps, then `rows` written as that version's npacd would.
void buildFileAt(const std::string& path, int version, const std::string& rows) {
  buildV1File(path);
  auto db = openRaw(path);
  REQUIRE(upgradeExistingTo(*db, version).isOk());
  REQUIRE(readSchemaVersion(*db)->version == version);
  REQUIRE(db->executeScript(rows).isOk());
}

MessageFacts factsOf(OutboundQueue& queue, MessageId id) {
  auto message = queue.get(id);
  REQUIRE(message.isOk());
  return MessageFacts{message->kind, message->opcode, message->confirmed};
}

}  // namespace

TEST_CASE("A version 3 file's queued rows are typed by the classifier when upgraded to version 4", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, kOldRows);
  OpenOptions options;
  options.migration.classify_queued_pdu = classifyForTest;
  auto db = openFresh(dir, options);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  OutboundQueue queue(*db);
  // The first row of the v1 fixture (x'3003020105') cannot be classified, priority 0.
  CHECK(factsOf(queue, 1) == MessageFacts{MessageKind::kPush, kUnknownOpcode, false});
  CHECK(factsOf(queue, 2) == MessageFacts{MessageKind::kPush, 7, true});
  CHECK(factsOf(queue, 3) == MessageFacts{MessageKind::kResponse, kUnknownOpcode, false});
  CHECK(factsOf(queue, 4) == MessageFacts{MessageKind::kPush, kUnknownOpcode, false});
  // Unclassifiable at priority 10: the priority rule makes it a response.
  CHECK(factsOf(queue, 5) == MessageFacts{MessageKind::kResponse, kUnknownOpcode, false});
  CHECK(queue.get(2)->pdu == Bytes{0xa1, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x07});
}

TEST_CASE("A version 2 file upgraded without a classifier types its rows by priority alone", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 2, kOldRows);
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  OutboundQueue queue(*db);
  for (MessageId push : {1, 2, 4}) {
    INFO("message " << push);
    CHECK(factsOf(queue, push) == MessageFacts{MessageKind::kPush, kUnknownOpcode, false});
  }
  for (MessageId response : {3, 5}) {
    INFO("message " << response);
    CHECK(factsOf(queue, response) == MessageFacts{MessageKind::kResponse, kUnknownOpcode, false});
  }
  // Version 3's idempotency column came on the way.
  auto keys = db->prepare("SELECT count(*) FROM outbound_queue WHERE idempotency_key IS NULL");
  REQUIRE(keys->step().value());
  CHECK(keys->columnInt(0) == 5);
}

TEST_CASE("An upgraded version 3 file has exactly the schema of a new file", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("old.db"), 3, "");
  auto upgraded = Database::open(dir.file("old.db"));
  REQUIRE(upgraded.isOk());
  auto fresh = openFresh(dir);
  auto upgraded_shape = schemaShape(**upgraded);
  auto fresh_shape = schemaShape(*fresh);
  REQUIRE(upgraded_shape.size() == fresh_shape.size());
  for (const auto& [name, shape] : fresh_shape) {
    INFO(name);
    CHECK(upgraded_shape[name] == shape);
  }
}

TEST_CASE("A version 4 file is marked unusable by npacd of schema 3 and older", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, "");
  {
    auto raw = openRaw(dir.file("npacd.db"));
    CHECK(readSchemaVersion(*raw)->last_compatible_version == 1);
    REQUIRE(upgradeExistingTo(*raw, 4).isOk());
    CHECK(readSchemaVersion(*raw)->last_compatible_version == 4);
  }
}

TEST_CASE("A queue row with a kind outside push and response is refused by the schema", "[sqlite]") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  CHECK(db->execute("INSERT INTO outbound_queue(spid, function_mask, body_id, created_at, kind) "
                    "VALUES('0001', 1, 1, 1, 'answer')")
            .code() == Status::Code::kConstraint);
  CHECK(db->execute("INSERT INTO outbound_queue(spid, function_mask, body_id, created_at, confirmed) "
                    "VALUES('0001', 1, 1, 1, 2)")
            .code() == Status::Code::kConstraint);
}

TEST_CASE("Upgrading an existing file to a version below its own is refused", "[sqlite]") {
  TempDir dir;
  auto db = openFresh(dir);
  CHECK(upgradeExistingTo(*db, 2).code() == Status::Code::kInvalidArgument);
  CHECK(upgradeExistingTo(*db, kCurrentSchemaVersion + 1).code() == Status::Code::kInvalidArgument);
}

// ---- version 5: the admin API's tokens ---------------------------------------------

TEST_CASE("A version 4 file gains the token table when upgraded to version 5 keeping its data", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, kOldRows);
  {
    auto raw = openRaw(dir.file("npacd.db"));
    REQUIRE(upgradeExistingTo(*raw, 4).isOk());
    REQUIRE(readSchemaVersion(*raw)->version == 4);
    auto tables = raw->prepare("SELECT count(*) FROM sqlite_master WHERE name = 'api_tokens'");
    REQUIRE(tables->step().value());
    REQUIRE(tables->columnInt(0) == 0);
  }
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  CHECK(db->execute("INSERT INTO api_tokens(name, role, secret_sha256, created_at, created_by) "
                    "VALUES('ops', 'operator', zeroblob(32), 1, 'npacd')")
            .isOk());
  auto rows = db->prepare("SELECT count(*) FROM outbound_queue");
  REQUIRE(rows->step().value());
  CHECK(rows->columnInt(0) == 5);
}

namespace {

// A version-3 file climbed to `version` by the ladder, then opened by npacd (the rest of
// the ladder): it has exactly the shape of a new file.
void checkUpgradedFromMatchesNew(int version) {
  TempDir dir;
  buildFileAt(dir.file("old.db"), 3, "");
  {
    auto raw = openRaw(dir.file("old.db"));
    REQUIRE(upgradeExistingTo(*raw, version).isOk());
  }
  auto upgraded = Database::open(dir.file("old.db"));
  REQUIRE(upgraded.isOk());
  auto fresh = openFresh(dir);
  auto upgraded_shape = schemaShape(**upgraded);
  auto fresh_shape = schemaShape(*fresh);
  REQUIRE(upgraded_shape.size() == fresh_shape.size());
  for (const auto& [name, shape] : fresh_shape) {
    INFO(name);
    CHECK(upgraded_shape[name] == shape);
  }
}

}  // namespace

TEST_CASE("An upgraded version 4 file has exactly the schema of a new file", "[sqlite]") {
  checkUpgradedFromMatchesNew(4);
}

TEST_CASE("A version 7 file stays usable by npacd of schema 4 and a version 8 file does not", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, "");
  {
    auto raw = openRaw(dir.file("npacd.db"));
    REQUIRE(upgradeExistingTo(*raw, 7).isOk());
    CHECK(readSchemaVersion(*raw)->last_compatible_version == 4);
  }
  auto raw = openRaw(dir.file("npacd.db"));
  REQUIRE(upgradeExistingTo(*raw, 8).isOk());
  CHECK(readSchemaVersion(*raw)->version == 8);
  CHECK(readSchemaVersion(*raw)->last_compatible_version == 8);  // outbound_queue.pdu is gone
}

TEST_CASE("A version 8 file gains the delivery progress tables and is refused by npacd of schema 8 from then on",
          "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, kOldRows);
  {
    auto raw = openRaw(dir.file("npacd.db"));
    REQUIRE(upgradeExistingTo(*raw, 8).isOk());
  }
  auto db = openRaw(dir.file("npacd.db"));
  REQUIRE(upgradeExistingTo(*db, 9).isOk());
  CHECK(readSchemaVersion(*db)->version == 9);
  // Schema 8 reads the rows' states: it would send again what the records acknowledged.
  CHECK(readSchemaVersion(*db)->last_compatible_version == 9);
  auto tables = db->prepare(
      "SELECT count(*) FROM sqlite_master WHERE name IN ('delivery_progress', 'delivery_settled')");
  REQUIRE(tables.isOk());
  REQUIRE(*tables->step());
  CHECK(tables->columnInt64(0) == 2);
}

namespace {

// A file at `version` (8 or later) whose five rows are as an npacd of schema 8 left them:
// 1 in flight on association 7 (the v1 fixture), 2 acknowledged, 3 failed, 4 and 5 queued
// (5 at priority 10); then `more` (SQL) run on it.
void buildFileWithRowsInEveryState(const std::string& path, int version, const std::string& more) {
  buildFileAt(path, 3, kOldRows);
  auto raw = openRaw(path);
  REQUIRE(upgradeExistingTo(*raw, version).isOk());
  REQUIRE(raw->executeScript(
                 "UPDATE outbound_queue SET state = 'acknowledged', sent_at = 30, acknowledged_at = 40, "
                 "attempts = 1 WHERE id = 2;"
                 "UPDATE outbound_queue SET state = 'failed', failed_at = 50, failure_reason = 'rejected' "
                 "WHERE id = 3;" +
                 more)
              .isOk());
}

}  // namespace

TEST_CASE("A version 8 file's rows in every state are delivered, settled and read right after the upgrade to the "
          "current version", "[sqlite]") {
  TempDir dir;
  buildFileWithRowsInEveryState(dir.file("npacd.db"), 8, "");
  auto db = openFresh(dir);
  REQUIRE(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  OutboundQueue queue(*db);
  auto next = queue.nextQueued("0001", 1, 10);
  REQUIRE(next.isOk());
  REQUIRE(next->size() == 2);
  CHECK((*next)[0].id == 5);
  CHECK((*next)[1].id == 4);
  const std::vector<MessageId> ids{5, 4};
  REQUIRE(queue.markSent(ids, 9, 1000).isOk());
  REQUIRE(queue.markAcknowledged(ids, 1001).isOk());
  // The row in flight by its columns since time 10 is stuck: passed and listed open.
  CHECK(queue.settle("0001", 10 + OutboundQueue::kStuckAfterMs).value() == 5);
  auto missed = queue.unacknowledged("0001", 10);
  REQUIRE(missed.isOk());
  REQUIRE(missed->size() == 2);
  CHECK((*missed)[0].id == 1);
  CHECK((*missed)[0].state == MessageState::kSent);
  CHECK((*missed)[1].id == 3);
  CHECK((*missed)[1].failure_reason == std::optional<std::string>("rejected"));
  auto summary = summarizeQueue(*db, "0001");
  REQUIRE(summary.isOk());
  CHECK(summary->total(MessageState::kAcknowledged) == 3);
  CHECK(summary->total(MessageState::kSent) == 1);
  CHECK(summary->total(MessageState::kFailed) == 1);
  // npacd starting again: what the old version had in flight is sent again, flagged.
  CHECK(queue.requeueAllInFlight().value() == 1);
  auto again = queue.nextQueued("0001", 1, 10);
  REQUIRE(again.isOk());
  REQUIRE(again->size() == 1);
  CHECK(again->front().id == 1);
  CHECK(again->front().retransmission);
}

TEST_CASE("A version 9 file's creation times are raised to never decrease in id order, and npacd of schema 9 "
          "refuses it after the upgrade", "[sqlite]") {
  TempDir dir;
  // Rows 1..5 were created at 10, 100, 101, 102, 103; the clock stepped back before 3 and 4.
  buildFileWithRowsInEveryState(dir.file("npacd.db"), 9,
                                "UPDATE outbound_queue SET created_at = 50 WHERE id = 3;"
                                "UPDATE outbound_queue SET created_at = 60 WHERE id = 4;");
  auto db = openFresh(dir);
  REQUIRE(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  // Schema 9 stamps rows by its clock alone: a time range read as an id range would miss some.
  CHECK(readSchemaVersion(*db)->last_compatible_version >= 10);
  OutboundQueue queue(*db);
  std::vector<TimeMs> created;
  for (MessageId id = 1; id <= 5; ++id) created.push_back(queue.get(id)->created_at);
  CHECK(created == std::vector<TimeMs>{10, 100, 100, 100, 103});
  auto by_created = db->prepare("SELECT count(*) FROM sqlite_master WHERE name = 'outbound_queue_by_created'");
  REQUIRE(by_created->step().value());
  CHECK(by_created->columnInt64(0) == 0);
  // A time range finds the rows in every state an earlier schema left them in.
  auto range = queue.createdBetween("0001", 100, 101, 10);
  REQUIRE(range.isOk());
  REQUIRE(range->size() == 3);
  CHECK((*range)[0].id == 2);
  CHECK((*range)[0].state == MessageState::kAcknowledged);
  CHECK((*range)[1].id == 3);
  CHECK((*range)[1].state == MessageState::kFailed);
  CHECK((*range)[2].id == 4);
  CHECK((*range)[2].state == MessageState::kQueued);
  auto all = queue.createdBetween("0001", 0, 1000, 10);
  REQUIRE(all.isOk());
  CHECK(all->size() == 5);
  CHECK(all->front().state == MessageState::kSent);
  // The summary still counts each of them in its state.
  auto summary = summarizeQueue(*db, "0001");
  REQUIRE(summary.isOk());
  CHECK(summary->total(MessageState::kSent) == 1);
  CHECK(summary->total(MessageState::kAcknowledged) == 1);
  CHECK(summary->total(MessageState::kFailed) == 1);
  CHECK(summary->total(MessageState::kQueued) == 2);
  CHECK(summary->oldestQueuedAt() == std::optional<TimeMs>(100));
}

TEST_CASE("An upgraded version 9 file has exactly the schema of a new file", "[sqlite]") {
  checkUpgradedFromMatchesNew(9);
}

TEST_CASE("A version 10 file gains settled counts of the rows at or below each mark, and npacd of schema 10 "
          "refuses it after the upgrade", "[sqlite]") {
  TempDir dir;
  // Rows 1 (in flight by its columns), 2 (acknowledged by its columns), 3 (failed), 4, 5
  // (queued); provider 0001's mark at 3, as the version-9 step's records could have left it.
  buildFileWithRowsInEveryState(dir.file("npacd.db"), 10,
                                "INSERT INTO delivery_settled(spid, settled_through, at) VALUES('0001', 3, 500);");
  auto db = openFresh(dir);
  REQUIRE(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  // Schema 10 would move marks and purge rows without keeping the counts.
  CHECK(readSchemaVersion(*db)->last_compatible_version > 10);
  // Rows 1 and 3: at or below the mark and not acknowledged by their columns (row 2 is
  // counted from outbound_queue_acknowledged, wherever the mark is).
  CHECK(ProgressLog(*db).settledCounts("0001").value() == std::map<std::uint32_t, std::int64_t>{{1, 2}});
  auto summary = summarizeQueue(*db, "0001");
  REQUIRE(summary.isOk());
  CHECK(summary->total(MessageState::kAcknowledged) == 3);
  CHECK(summary->total(MessageState::kQueued) == 2);
  CHECK(summary->total(MessageState::kSent) == 0);
}

TEST_CASE("An upgraded version 10 file has exactly the schema of a new file", "[sqlite]") {
  checkUpgradedFromMatchesNew(10);
}

TEST_CASE("A version 11 file gains retention notes from its acknowledgement records, and its rows are purged by "
          "range no sooner than their acknowledgement allows", "[sqlite]") {
  TempDir dir;
  constexpr TimeMs kMinute = ProgressLog::kNoteMs;
  // Rows 1 (in flight by its columns), 2 (acknowledged by its columns), 3 (failed, listed
  // open), 4, 5; records acknowledge 1 and 4 in minute 0 and 5 in minute 3; mark at 5.
  buildFileWithRowsInEveryState(dir.file("npacd.db"), 11,
                                "INSERT INTO delivery_settled(spid, settled_through, at) VALUES('0001', 5, 200000);"
                                "INSERT INTO delivery_open(spid, id, waiting) VALUES('0001', 3, 0);");
  {
    auto raw = openRaw(dir.file("npacd.db"));
    const std::vector<ProgressRecord> records{
        {"0001", ProgressEvent::kHanded, 9, 900, {4}, ""},
        {"0001", ProgressEvent::kAcknowledged, 0, 1000, {1, 4}, ""},
        {"0001", ProgressEvent::kHanded, 9, 900, {5}, ""},
        {"0001", ProgressEvent::kAcknowledged, 0, 3 * kMinute, {5}, ""},
    };
    REQUIRE(ProgressLog(*raw).append(records).isOk());
  }
  auto db = openFresh(dir);
  REQUIRE(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  // Schema 11 would take late acknowledgements off the open list without listing them.
  CHECK(readSchemaVersion(*db)->last_compatible_version == 12);
  OutboundQueue queue(*db);
  // Row 2 by its columns (acknowledged at 40), rows 1 and 4 by the minute-0 note; 5 waits.
  CHECK(queue.purgeAcknowledgedBefore(2 * kMinute).value() == 3);
  CHECK(queue.get(3).isOk());
  CHECK(queue.get(5).isOk());
  CHECK(queue.purgeAcknowledgedBefore(4 * kMinute).value() == 1);
  CHECK(queue.get(3).isOk());  // failed: never purged
}

TEST_CASE("An upgraded version 11 file has exactly the schema of a new file", "[sqlite]") {
  checkUpgradedFromMatchesNew(11);
}

TEST_CASE("A version 12 file gains the throttle group tables keeping its rows, and stays usable by npacd of schema 12",
          "[sqlite]") {
  TempDir dir;
  buildFileWithRowsInEveryState(dir.file("npacd.db"), 12, "");
  auto db = openFresh(dir);
  REQUIRE(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  // Schema 12 never reads the new tables: it may still use the file.
  CHECK(readSchemaVersion(*db)->last_compatible_version == 12);
  auto rows = db->prepare("SELECT count(*) FROM outbound_queue");
  REQUIRE(rows->step().value());
  CHECK(rows->columnInt(0) == 5);
  checkThrottleTablesCascade(*db);  // the members and reports go with their group
}

TEST_CASE("An upgraded version 12 file has exactly the schema of a new file", "[sqlite]") {
  checkUpgradedFromMatchesNew(12);
}

TEST_CASE("A version 6 file gains the provider lease table when upgraded to version 7 keeping its data", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, kOldRows);
  {
    auto raw = openRaw(dir.file("npacd.db"));
    REQUIRE(upgradeExistingTo(*raw, 6).isOk());
    auto tables = raw->prepare("SELECT count(*) FROM sqlite_master WHERE name = 'provider_leases'");
    REQUIRE(tables->step().value());
    REQUIRE(tables->columnInt(0) == 0);
  }
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  auto rows = db->prepare("SELECT count(*) FROM outbound_queue");
  REQUIRE(rows->step().value());
  CHECK(rows->columnInt(0) == 5);
  CHECK(db->execute("INSERT INTO provider_leases(spid, owner, epoch, expires_at) "
                    "SELECT spid, 'a', 1, 0 FROM service_providers LIMIT 1")
            .isOk());
}

TEST_CASE("An upgraded version 6 file has exactly the schema of a new file", "[sqlite]") {
  checkUpgradedFromMatchesNew(6);
}

TEST_CASE("An upgraded version 7 file has exactly the schema of a new file", "[sqlite]") {
  checkUpgradedFromMatchesNew(7);
}

// ---- version 6: the queue's state CHECK without a temporary index --------------------

namespace {

// One state change of one message, as OutboundQueue::markSent writes it.
constexpr const char* kMarkOneSent =
    "UPDATE outbound_queue SET state = 'sent', attempts = attempts + 1, sent_at = 1, "
    "association_id = 2 WHERE id = 3 AND state = 'queued'";
// A row of the current schema (its body in message_bodies, schema 8).
constexpr const char* kInsertOne =
    "INSERT INTO outbound_queue(spid, function_mask, body_id, created_at) VALUES('0001', 1, 1, 1)";

// Whether SQLite's program for `sql` builds a temporary index (OP_OpenEphemeral): what it
// does for `x IN (more than two constants)`, on every execution.
bool buildsTemporaryIndex(Database& db, const std::string& sql) {
  auto plan = db.prepare("EXPLAIN " + sql);
  REQUIRE(plan.isOk());
  bool ephemeral = false;
  while (plan->step().value()) {
    if (plan->columnText(1) == "OpenEphemeral") ephemeral = true;
  }
  return ephemeral;
}

std::int64_t scalar(Database& db, const std::string& sql) {
  auto query = db.prepare(sql);
  REQUIRE(query.isOk());
  REQUIRE(query->step().value());
  return query->columnInt64(0);
}

}  // namespace

TEST_CASE("Queuing a message and changing its state build no temporary index in a new file", "[sqlite]") {
  TempDir dir;
  auto db = openFresh(dir);
  CHECK_FALSE(buildsTemporaryIndex(*db, kInsertOne));
  CHECK_FALSE(buildsTemporaryIndex(*db, kMarkOneSent));
}

TEST_CASE("A version 5 file checked the queue state through a temporary index and version 6 does not", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, kOldRows);
  {
    auto raw = openRaw(dir.file("npacd.db"));
    REQUIRE(upgradeExistingTo(*raw, 5).isOk());
    CHECK(buildsTemporaryIndex(*raw, kMarkOneSent));
  }
  auto db = openFresh(dir);
  CHECK(readSchemaVersion(*db)->version == kCurrentSchemaVersion);
  CHECK_FALSE(buildsTemporaryIndex(*db, kMarkOneSent));
  CHECK_FALSE(buildsTemporaryIndex(*db, kInsertOne));
}

TEST_CASE("Upgrading to version 6 keeps every queued row and never reuses a purged id", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, kOldRows);
  {
    auto raw = openRaw(dir.file("npacd.db"));
    REQUIRE(upgradeExistingTo(*raw, 5).isOk());
    // The version-1 row and kOldRows are ids 1..5. The newest is acknowledged and
    // purged: its id must stay used.
    REQUIRE(scalar(*raw, "SELECT max(id) FROM outbound_queue") == 5);
    REQUIRE(raw->execute("UPDATE outbound_queue SET state = 'acknowledged', acknowledged_at = 5 "
                         "WHERE id = 5").isOk());
    REQUIRE(raw->execute("DELETE FROM outbound_queue WHERE id = 5").isOk());
  }
  auto db = openFresh(dir);
  CHECK(scalar(*db, "SELECT count(*) FROM outbound_queue") == 4);
  CHECK(scalar(*db, "SELECT count(*) FROM outbound_queue WHERE id IN (2, 3, 4) AND created_at "
                    "BETWEEN 100 AND 102") == 3);
  CHECK(scalar(*db, "SELECT count(*) FROM outbound_queue WHERE id = 1 AND state = 'sent' "
                    "AND association_id = 7") == 1);
  CHECK(scalar(*db, "SELECT count(*) FROM outbound_queue WHERE kind = 'response'") == 1);
  REQUIRE(db->execute(kInsertOne).isOk());
  CHECK(db->lastInsertRowId() == 6);
  CHECK(scalar(*db, "SELECT count(*) FROM sqlite_master WHERE name = 'outbound_queue_v6'") == 0);
}

TEST_CASE("The version 6 queue still refuses a state outside its four values", "[sqlite]") {
  TempDir dir;
  auto db = openFresh(dir);
  REQUIRE(db->execute("INSERT INTO service_providers(spid, name, system_type) "
                      "VALUES('0001', 'a', 'soa')").isOk());
  REQUIRE(db->execute(kInsertOne).isOk());
  CHECK(db->execute("UPDATE outbound_queue SET state = 'lost'").code() == Status::Code::kConstraint);
  CHECK(db->execute("UPDATE outbound_queue SET state = 'failed'").isOk());
}

// ---- version 8: a message's bytes written once -------------------------------------

TEST_CASE("A version 7 file's queue rows keep their PDUs, states and ids when upgraded to version 8", "[sqlite]") {
  TempDir dir;
  buildFileAt(dir.file("npacd.db"), 3, kOldRows);
  {
    auto raw = openRaw(dir.file("npacd.db"));
    REQUIRE(upgradeExistingTo(*raw, 7).isOk());
    // ids 1..5; the newest is acknowledged and purged as npacd of schema 7 did: its id stays used.
    REQUIRE(raw->execute("DELETE FROM outbound_queue WHERE id = 5").isOk());
  }
  auto db = openFresh(dir);
  OutboundQueue queue(*db);
  CHECK(queue.get(1)->pdu == Bytes{0x30, 0x03, 0x02, 0x01, 0x05});
  CHECK(queue.get(1)->state == MessageState::kSent);
  CHECK(queue.get(2)->pdu == Bytes{0xa1, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x07});
  CHECK(queue.get(4)->pdu == Bytes{0xff, 0xff});
  CHECK(scalar(*db, "SELECT count(*) FROM message_bodies WHERE addressees = 1") == 4);
  CHECK(scalar(*db, "SELECT count(*) FROM outbound_queue WHERE body_id <> id") == 0);
  auto next = queue.appendBatch(std::vector<NewMessage>{{"0001", 1, 0, Bytes{0x01}}}, 200);
  REQUIRE(next.isOk());
  CHECK(next->front() == 6);
  CHECK(queue.get(6)->pdu == Bytes{0x01});
  CHECK(scalar(*db, "SELECT count(*) FROM sqlite_master WHERE name = 'outbound_queue_v8'") == 0);
}
