#include "db/schema.h"

#include <array>
#include <utility>

namespace npac::db::schema {
namespace {

constexpr const char* kBaseTables = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY NOT NULL,
  value {int} NOT NULL);

CREATE TABLE service_providers(
  spid TEXT PRIMARY KEY NOT NULL CHECK(length(spid) = 4),
  name TEXT NOT NULL,
  system_type TEXT NOT NULL CHECK(system_type IN ('soa', 'lsms', 'soa-and-lsms', 'npac')),
  enabled {int} NOT NULL DEFAULT 1 CHECK(enabled IN (0, 1)));

CREATE TABLE provider_nsaps(
  spid TEXT NOT NULL REFERENCES service_providers(spid) ON DELETE CASCADE,
  nsap {blob} NOT NULL CHECK(length(nsap) BETWEEN 1 AND 20),
  weight {int} CHECK(weight IS NULL OR weight BETWEEN 1 AND 99),
  relative_cost {int} CHECK(relative_cost IS NULL OR relative_cost >= 0),
  PRIMARY KEY(spid, nsap));

CREATE TABLE provider_keys(
  spid TEXT NOT NULL REFERENCES service_providers(spid) ON DELETE CASCADE,
  list_id {int} NOT NULL,
  key_id {int} NOT NULL,
  algorithm TEXT NOT NULL CHECK(algorithm IN ('rsa-sha256', 'ed25519')),
  public_key_pem TEXT NOT NULL,
  not_before_at {int} NOT NULL,
  not_after_at {int} NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('active', 'expired', 'revoked')),
  last_sequence {int},
  PRIMARY KEY(spid, list_id, key_id));

CREATE TABLE tunable_overrides(
  name TEXT NOT NULL,
  spid TEXT NOT NULL DEFAULT '',
  value TEXT NOT NULL,
  updated_at {int} NOT NULL,
  updated_by TEXT NOT NULL,
  PRIMARY KEY(name, spid));

CREATE TABLE association_log(
  id {id},
  at {int} NOT NULL,
  event TEXT NOT NULL CHECK(event IN ('bind', 'reject', 'release', 'abort')),
  spid TEXT NOT NULL,
  nsap {blob},
  association_id {int},
  function_mask {int} NOT NULL DEFAULT 0,
  recovery_mode {int} NOT NULL DEFAULT 0 CHECK(recovery_mode IN (0, 1)),
  bound_at {int},
  reason TEXT NOT NULL DEFAULT '',
  diagnostic TEXT NOT NULL DEFAULT '');
CREATE INDEX association_log_by_provider ON association_log(spid, at);

CREATE TABLE audit_log(
  id {id},
  at {int} NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  subject TEXT NOT NULL,
  old_value TEXT,
  new_value TEXT);
CREATE INDEX audit_log_by_time ON audit_log(at);

CREATE TABLE message_bodies(
  id {id},
  pdu {blob} NOT NULL,
  addressees {int} NOT NULL CHECK(addressees >= 1));

CREATE TABLE outbound_queue(
  id {id_autoincrement},
  spid TEXT NOT NULL REFERENCES service_providers(spid),
  function_mask {int} NOT NULL,
  priority {int} NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'queued'
    CHECK(state = 'queued' OR state = 'sent' OR state = 'acknowledged' OR state = 'failed'),
  attempts {int} NOT NULL DEFAULT 0,
  created_at {int} NOT NULL,
  sent_at {int},
  acknowledged_at {int},
  association_id {int},
  failure_reason TEXT,
  retransmission {int} NOT NULL DEFAULT 0 CHECK(retransmission IN (0, 1)),
  failed_at {int},
  idempotency_key TEXT CHECK(idempotency_key IS NULL OR length(idempotency_key) BETWEEN 1 AND 128),
  kind TEXT NOT NULL DEFAULT 'push' CHECK(kind IN ('push', 'response')),
  opcode {int} NOT NULL DEFAULT -1,
  confirmed {int} NOT NULL DEFAULT 0 CHECK(confirmed IN (0, 1)),
  body_id {int} NOT NULL);
CREATE INDEX outbound_queue_ready ON outbound_queue(spid, priority DESC, id)
  WHERE state = 'queued';
CREATE INDEX outbound_queue_in_flight ON outbound_queue(association_id) WHERE state = 'sent';
CREATE INDEX outbound_queue_acknowledged ON outbound_queue(acknowledged_at)
  WHERE state = 'acknowledged';
CREATE UNIQUE INDEX outbound_queue_idempotency ON outbound_queue(spid, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

CREATE TABLE npac_keys(
  list_id {int} NOT NULL,
  key_id {int} NOT NULL,
  algorithm TEXT NOT NULL CHECK(algorithm IN ('rsa-sha256', 'ed25519')),
  public_key_pem TEXT NOT NULL,
  private_key_pem TEXT NOT NULL,
  not_before_at {int} NOT NULL,
  not_after_at {int} NOT NULL,
  state TEXT NOT NULL CHECK(state IN ('active', 'expired', 'revoked')),
  created_at {int} NOT NULL,
  last_sequence {int} NOT NULL DEFAULT 0,
  PRIMARY KEY(list_id, key_id));

CREATE TABLE api_tokens(
  name TEXT PRIMARY KEY NOT NULL CHECK(length(name) BETWEEN 1 AND 64),
  role TEXT NOT NULL CHECK(role IN ('operator', 'application', 'reader')),
  secret_sha256 {blob} NOT NULL UNIQUE CHECK(length(secret_sha256) = 32),
  created_at {int} NOT NULL,
  created_by TEXT NOT NULL,
  revoked_at {int});

CREATE TABLE provider_leases(
  spid TEXT PRIMARY KEY NOT NULL REFERENCES service_providers(spid) ON DELETE CASCADE,
  owner TEXT NOT NULL CHECK(length(owner) BETWEEN 1 AND 128),
  epoch {int} NOT NULL CHECK(epoch >= 1),
  expires_at {int} NOT NULL);
)sql";

constexpr const char* kDeliveryProgress = R"sql(
CREATE TABLE delivery_progress(
  seq {id},
  spid TEXT NOT NULL,
  event {int} NOT NULL CHECK(event BETWEEN 1 AND 5),
  association_id {int},
  at {int} NOT NULL,
  first_id {int} NOT NULL,
  last_id {int} NOT NULL CHECK(last_id >= first_id),
  ids {blob} NOT NULL,
  reason TEXT);
CREATE INDEX delivery_progress_by_provider ON delivery_progress(spid, first_id);
CREATE INDEX delivery_progress_by_last ON delivery_progress(spid, last_id);
CREATE TABLE delivery_settled(
  spid TEXT PRIMARY KEY NOT NULL,
  settled_through {int} NOT NULL,
  at {int} NOT NULL);
CREATE TABLE delivery_open(
  spid TEXT NOT NULL,
  id {int} NOT NULL,
  waiting {int32} NOT NULL CHECK(waiting IN (0, 1)),
  PRIMARY KEY(spid, id));
CREATE INDEX outbound_queue_open_base ON outbound_queue(spid, id)
  WHERE state IN ('sent', 'failed');
)sql";

constexpr const char* kSettledCounts = R"sql(
CREATE TABLE delivery_settled_counts(
  spid TEXT NOT NULL,
  function_mask {int} NOT NULL,
  messages {int} NOT NULL,
  PRIMARY KEY(spid, function_mask));
)sql";

constexpr const char* kRetentionRanges = R"sql(
CREATE TABLE delivery_marks(
  spid TEXT NOT NULL,
  minute BIGINT NOT NULL,
  at BIGINT NOT NULL,
  settled_through BIGINT NOT NULL,
  PRIMARY KEY(spid, minute));
CREATE TABLE delivery_late(
  spid TEXT NOT NULL,
  id BIGINT NOT NULL,
  PRIMARY KEY(spid, id));
)sql";

constexpr const char* kThrottleGroups = R"sql(
CREATE TABLE throttle_groups(
  name TEXT PRIMARY KEY NOT NULL,
  max_rate BIGINT NOT NULL,
  max_pending BIGINT NOT NULL,
  onset_1 INTEGER NOT NULL,
  abatement_1 INTEGER NOT NULL,
  onset_2 INTEGER NOT NULL,
  abatement_2 INTEGER NOT NULL,
  onset_3 INTEGER NOT NULL,
  abatement_3 INTEGER NOT NULL,
  min_abatement_ms BIGINT NOT NULL,
  peer_loss_reduction_percent INTEGER NOT NULL,
  updated_at BIGINT NOT NULL,
  updated_by TEXT NOT NULL);
CREATE TABLE throttle_group_members(
  spid TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL REFERENCES throttle_groups(name) ON DELETE CASCADE);
CREATE INDEX throttle_group_members_by_name ON throttle_group_members(name);
CREATE TABLE throttle_reports(
  name TEXT NOT NULL REFERENCES throttle_groups(name) ON DELETE CASCADE,
  node TEXT NOT NULL,
  rate DOUBLE PRECISION NOT NULL,
  pending BIGINT NOT NULL,
  wanting INTEGER NOT NULL CHECK(wanting IN (0, 1)),
  at BIGINT NOT NULL,
  PRIMARY KEY(name, node));
)sql";

// Association ids unique across every node of one PostgreSQL database (db/lease_store.h);
// on SQLite one npacd owns the file and counts them itself.
constexpr const char* kPostgresSequences = "CREATE SEQUENCE association_ids;\n";

}  // namespace

std::string render(std::string_view ddl, Backend backend) {
  const bool postgres = backend == Backend::kPostgres;
  const std::array<std::pair<std::string_view, std::string_view>, 5> placeholders{{
      {"{id_autoincrement}",
       postgres ? "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"},
      {"{id}", postgres ? "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" : "INTEGER PRIMARY KEY"},
      {"{int32}", "INTEGER"},
      {"{int}", postgres ? "BIGINT" : "INTEGER"},
      {"{blob}", postgres ? "BYTEA" : "BLOB"},
  }};
  std::string out;
  out.reserve(ddl.size() + ddl.size() / 4);
  std::size_t at = 0;
  while (at < ddl.size()) {
    bool replaced = false;
    if (ddl[at] == '{') {
      for (const auto& [name, text] : placeholders) {
        if (ddl.substr(at, name.size()) == name) {
          out += text;
          at += name.size();
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += ddl[at++];
  }
  return out;
}

std::string baseTables(Backend backend) {
  std::string ddl = render(kBaseTables, backend);
  if (backend == Backend::kPostgres) ddl += kPostgresSequences;
  return ddl;
}

std::string deliveryProgress(Backend backend) { return render(kDeliveryProgress, backend); }

std::string settledCounts(Backend backend) { return render(kSettledCounts, backend); }

std::string retentionRanges(Backend backend) { return render(kRetentionRanges, backend); }

std::string throttleGroups(Backend backend) { return render(kThrottleGroups, backend); }

}  // namespace npac::db::schema
