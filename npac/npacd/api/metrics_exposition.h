// The text GET /metrics answers (Prometheus text format 0.0.4, common/metrics_text.h):
// every npacd family, from snapshots each owner took on its own thread — the core's
// CoreMetrics (core thread), the QueueWriter's Metrics (under its lock), the queue counts
// SQLite has (db::summarizeQueue, the same counts GET /v1/providers/{spid}/queue shows)
// and the process-wide StorageHealth. docs/OPERATIONS.md "Metrics" lists the families,
// their labels and what an operator does with each.
//
// Series are bounded: per provider by SPID, per association by its id while it is live
// (an association's series disappear with it, because they are rendered from the live
// list), by association function (5) and CMIP operation (X.711 §7.4, 11 + unknown) only
// where something was counted, and by LnpBindRefusal reason code (a fixed set).
//
// Threading: a pure function of its inputs.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/clock.h"
#include "db/queue_summary.h"
#include "db/queue_writer.h"
#include "db/wal_checkpointer.h"
#include "npac/npacd/api/tls_context.h"
#include "npac/npacd/core/core_metrics.h"
#include "npac/npacd/core/throttle_groups.h"

namespace npac::npacd {

struct MetricsInputs {
  db::TimeMs now = 0;                  // the API's clock: queue ages
  double process_start_seconds = 0;    // Unix time npacd started
  const CoreMetrics* core = nullptr;   // none: no core attached, or it did not answer
  std::optional<db::QueueWriter::Metrics> writer;
  std::optional<db::WalCheckpointer::Metrics> checkpointer;  // SQLite only
  bool storage_failing = false;        // db::StorageHealth::process()
  std::uint64_t storage_failures = 0;  // since it was last healthy
  std::vector<std::pair<std::string, db::QueueSummary>> queues;  // by SPID
  // Every provisioned SPID, so that npacd_associations_up reads 0 for a provider that has
  // not bound since npacd started (the core knows only providers that bound).
  std::vector<std::string> provisioned;
  // Admin API requests refused before their handler, by reason ("unauthenticated" 401,
  // "forbidden" 403, "connection-limit", "tls-handshake", "expensive-read-rate" 429...):
  // what the API's access control, expensive reads and HTTP server count; empty when
  // they count nothing.
  std::vector<std::pair<std::string, std::uint64_t>> api_refusals;
  // Admin API connections npacd closed itself, by reason (idle-for-room, slow-stream).
  std::vector<std::pair<std::string, std::uint64_t>> api_connections_closed;
  // The provisioned throttle groups as this node sees them (core/throttle_groups.h).
  std::vector<ThrottleGroup::View> throttle_groups;
  // The admin API's TLS certificate (tls_context.h); nullopt in plain HTTP.
  std::optional<CertificateValidity> api_certificate;
};

// "event-report", "action-confirmed", ... for ProviderCounters' operation index.
const char* operationLabel(std::size_t operation);

std::string renderMetrics(const MetricsInputs& in);

}  // namespace npac::npacd
