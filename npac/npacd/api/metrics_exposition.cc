#include "npac/npacd/api/metrics_exposition.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string_view>

#include "associations/bind_facts.h"
#include "common/metrics_text.h"
#include "npac/version.h"

namespace npac::npacd {

namespace as = npac::associations;
using common::MetricType;
using common::MetricsText;

namespace {

// The states an association is listed in (ProviderCore::describe), each rendered for
// every provider so that a state going to zero shows as 0, not as a missing series.
constexpr std::array<std::string_view, 5> kAssociationStates{"bound", "congested", "silent", "recovering",
                                                             "releasing"};

// The states in which an association is up: bound, and still bound while congested (at
// congestion_window), silent (a request passed response_timeout) or held by recovery
// mode (NANC 351) — slow or paused, not gone. Only a releasing association is on its way
// out (docs/OPERATIONS.md "Metrics": npacd_associations_up).
bool isUp(std::string_view state) { return state != "releasing"; }

double seconds(db::TimeMs ms) { return static_cast<double>(ms) / 1000.0; }

void renderQueue(MetricsText& m, const MetricsInputs& in) {
  m.family("npacd_queue_messages",
           "Rows of the durable outbound queue by provider and state (acknowledged and failed rows "
           "count until the retention purge deletes them).",
           MetricType::kGauge);
  for (const auto& [spid, summary] : in.queues) {
    for (db::MessageState state : {db::MessageState::kQueued, db::MessageState::kSent,
                                   db::MessageState::kAcknowledged, db::MessageState::kFailed}) {
      m.sample("npacd_queue_messages", {{"spid", spid}, {"state", db::toString(state)}},
               static_cast<double>(summary.total(state)));
    }
  }
  m.family("npacd_queue_oldest_queued_age_seconds",
           "Age of the provider's oldest queued (not yet sent) message; 0 when none is queued.",
           MetricType::kGauge);
  for (const auto& [spid, summary] : in.queues) {
    const std::optional<db::TimeMs> oldest = summary.oldestQueuedAt();
    m.sample("npacd_queue_oldest_queued_age_seconds", {{"spid", spid}},
             oldest ? seconds(std::max<db::TimeMs>(0, in.now - *oldest)) : 0.0);
  }
}

// DSR "Egress Throttle Lists": each provisioned group's level, effective maxima (reduced
// per unreachable peer node), the aggregate and this node's share, and per node of the
// list its last reported rate and pending count with the report's age.
void renderThrottleGroups(MetricsText& m, const std::vector<ThrottleGroup::View>& groups) {
  if (groups.empty()) return;
  const auto gauge = [&](const char* name, const char* help, auto value) {
    m.family(name, help, MetricType::kGauge);
    for (const ThrottleGroup::View& g : groups) m.sample(name, {{"group", g.definition.name}}, static_cast<double>(value(g)));
  };
  using V = ThrottleGroup::View;
  gauge("npacd_throttle_group_level", "Congestion level of the throttle group, from the aggregate of every node (0..3).",
        [](const V& g) { return g.level; });
  gauge("npacd_throttle_group_max_rate",
        "Effective EMR maximum of the throttle group in msg/s: max_rate less peer_loss_reduction_percent per "
        "unreachable peer node; 0 when the rate is not limited.",
        [](const V& g) { return g.max_rate; });
  gauge("npacd_throttle_group_max_pending", "Effective EPT maximum of the throttle group; 0 when not limited.",
        [](const V& g) { return g.max_pending; });
  gauge("npacd_throttle_group_rate", "Aggregate egress rate to the group's members (this node and every reachable peer), msg/s.",
        [](const V& g) { return g.rate; });
  gauge("npacd_throttle_group_pending", "Aggregate pending requests to the group's members.",
        [](const V& g) { return g.pending; });
  gauge("npacd_throttle_group_rate_share", "This node's share of the effective EMR maximum, msg/s.",
        [](const V& g) { return g.rate_share; });
  gauge("npacd_throttle_group_peers_unreachable", "Peer nodes of the group's list whose counts are older than the stale bound.",
        [](const V& g) { return g.unreachable.size(); });
  m.family("npacd_throttle_group_holds_total",
           "Delivery rounds of a member held by the group on this node (messages stay queued).", MetricType::kCounter);
  for (const V& g : groups) m.sample("npacd_throttle_group_holds_total", {{"group", g.definition.name}}, static_cast<double>(g.held));
  m.family("npacd_throttle_group_admitted_total", "Messages to the group's members this node let leave.",
           MetricType::kCounter);
  for (const V& g : groups) {
    m.sample("npacd_throttle_group_admitted_total", {{"group", g.definition.name}}, static_cast<double>(g.admitted));
  }
  const auto per_node = [&](const char* name, const char* help, auto value) {
    m.family(name, help, MetricType::kGauge);
    for (const V& g : groups) {
      for (const ThrottleGroup::NodeShare& n : g.nodes) {
        m.sample(name, {{"group", g.definition.name}, {"node", n.node}}, static_cast<double>(value(n)));
      }
    }
  };
  using N = ThrottleGroup::NodeShare;
  per_node("npacd_throttle_group_node_rate", "Egress rate to the group's members each node last reported, msg/s.",
           [](const N& n) { return n.rate; });
  per_node("npacd_throttle_group_node_pending", "Pending requests to the group's members each node last reported.",
           [](const N& n) { return n.pending; });
  per_node("npacd_throttle_group_node_report_age_seconds", "Age of each node's last report (0 for this node).",
           [](const N& n) { return n.age_seconds; });
  per_node("npacd_throttle_group_node_reachable", "1 while the node's counts are counted, 0 while its link is lost.",
           [](const N& n) { return n.counted ? 1 : 0; });
}

void renderWriter(MetricsText& m, const db::QueueWriter::Metrics& w) {
  m.family("npacd_queue_writer_backlog_messages",
           "Messages submitted to the QueueWriter and not yet in a committing batch.", MetricType::kGauge);
  m.sample("npacd_queue_writer_backlog_messages", {}, static_cast<double>(w.backlog_messages));
  m.family("npacd_queue_writer_committed_messages_total", "Messages the QueueWriter committed (group commit).",
           MetricType::kCounter);
  m.sample("npacd_queue_writer_committed_messages_total", {}, static_cast<double>(w.committed_messages));
  m.family("npacd_queue_writer_committed_batches_total", "Transactions the QueueWriter committed.",
           MetricType::kCounter);
  m.sample("npacd_queue_writer_committed_batches_total", {}, static_cast<double>(w.committed_batches));
  m.family("npacd_queue_writer_failed_batches_total",
           "QueueWriter transactions rolled back by a storage error (each submission in them got it).",
           MetricType::kCounter);
  m.sample("npacd_queue_writer_failed_batches_total", {}, static_cast<double>(w.failed_batches));
  m.family("npacd_sqlite_commit_seconds", "Duration of the QueueWriter's COMMIT (the fsync of --durability).",
           MetricType::kHistogram);
  m.histogram("npacd_sqlite_commit_seconds", {}, w.commit_seconds);
}

void renderCheckpointer(MetricsText& m, const db::WalCheckpointer::Metrics& c) {
  m.family("npacd_sqlite_checkpoints_total",
           "WAL checkpoints npacd's checkpoint thread completed (db/wal_checkpointer.h), by mode.",
           MetricType::kCounter);
  m.sample("npacd_sqlite_checkpoints_total", {{"mode", "passive"}}, static_cast<double>(c.checkpoints - c.restarts));
  m.sample("npacd_sqlite_checkpoints_total", {{"mode", "restart"}}, static_cast<double>(c.restarts));
  m.family("npacd_sqlite_checkpoint_failures_total", "WAL checkpoints that failed (the WAL keeps every commit).",
           MetricType::kCounter);
  m.sample("npacd_sqlite_checkpoint_failures_total", {}, static_cast<double>(c.failures));
  m.family("npacd_sqlite_checkpoint_busy_total",
           "WAL checkpoints that could not finish: a reader outlasted a RESTART's wait, or another checkpoint ran.",
           MetricType::kCounter);
  m.sample("npacd_sqlite_checkpoint_busy_total", {}, static_cast<double>(c.busy));
  m.family("npacd_sqlite_wal_pages", "Pages in the SQLite WAL after the latest commit.", MetricType::kGauge);
  m.sample("npacd_sqlite_wal_pages", {}, static_cast<double>(c.wal_pages));
  m.family("npacd_sqlite_checkpoint_seconds", "Duration of a WAL checkpoint (the copy and its fsync), off the "
           "committing threads.", MetricType::kHistogram);
  m.histogram("npacd_sqlite_checkpoint_seconds", {}, c.seconds);
}

// npacd_associations_up: one series per provider, provisioned or known to the core, so
// that "nothing up" is a 0 an alert can see rather than a missing series.
void renderAssociationsUp(MetricsText& m, const CoreMetrics& core, const std::vector<std::string>& provisioned) {
  std::map<std::string, std::size_t> up;
  for (const std::string& spid : provisioned) up.emplace(spid, 0);
  for (const CoreMetrics::Provider& p : core.providers) {
    up[p.spid] = static_cast<std::size_t>(std::count_if(p.associations.begin(), p.associations.end(),
                                                        [](const auto& a) { return isUp(a.state); }));
  }
  m.family("npacd_associations_up",
           "Live associations of the provider that are up: bound, congested, silent or recovering "
           "(not releasing); 0 for a provisioned provider with none.",
           MetricType::kGauge);
  for (const auto& [spid, n] : up) m.sample("npacd_associations_up", {{"spid", spid}}, static_cast<double>(n));
}

// The association listener's counts and the delivery rounds.
void renderListener(MetricsText& m, const CoreMetrics& core) {
  m.family("npacd_listener_connections_accepted_total", "TCP connections accepted on the association listener.",
           MetricType::kCounter);
  m.sample("npacd_listener_connections_accepted_total", {}, static_cast<double>(core.connections_accepted));
  m.family("npacd_listener_connections_dropped_total",
           "Unbound connections closed to make room (max_unbound_connections, descriptor limit).",
           MetricType::kCounter);
  m.sample("npacd_listener_connections_dropped_total", {}, static_cast<double>(core.connections_dropped));
  m.family("npacd_listener_bind_timeouts_total", "Unbound connections closed at bind_timeout.",
           MetricType::kCounter);
  m.sample("npacd_listener_bind_timeouts_total", {}, static_cast<double>(core.bind_timeouts));
  m.family("npacd_listener_unbound_connections", "Connections accepted and not bound yet.", MetricType::kGauge);
  m.sample("npacd_listener_unbound_connections", {}, static_cast<double>(core.unbound_connections));
  m.family("npacd_delivery_rounds_total",
           "Delivery rounds, by where their messages were read: memory (what the queue writer handed over) or "
           "database.",
           MetricType::kCounter);
  m.sample("npacd_delivery_rounds_total", {{"source", "memory"}}, static_cast<double>(core.delivery_rounds_memory));
  m.sample("npacd_delivery_rounds_total", {{"source", "database"}},
           static_cast<double>(core.delivery_rounds_database));
}

// The binds admitted, committed and refused (with metrics on).
void renderBinds(MetricsText& m, const CoreMetrics& core) {
  m.family("npacd_binds_accepted_total", "Binds (AARQ) admitted.", MetricType::kCounter);
  m.sample("npacd_binds_accepted_total", {}, static_cast<double>(core.binds_accepted));
  m.family("npacd_bind_commits_total",
           "Transactions that admitted binds: the binds received in one turn commit together.",
           MetricType::kCounter);
  m.sample("npacd_bind_commits_total", {}, static_cast<double>(core.bind_commits));
  m.family("npacd_binds_refused_total", "Binds refused, by LnpBindRefusal reason code.", MetricType::kCounter);
  for (const auto& [reason, count] : core.binds_refused) {
    m.sample("npacd_binds_refused_total", {{"reason", reason}}, static_cast<double>(count));
  }
}

// The live associations by provider and state, and how many of each provider's are up.
void renderAssociations(MetricsText& m, const CoreMetrics& core, const std::vector<std::string>& provisioned) {
  m.family("npacd_associations", "Live associations by provider and state.", MetricType::kGauge);
  for (const CoreMetrics::Provider& p : core.providers) {
    for (std::string_view state : kAssociationStates) {
      const auto n = std::count_if(p.associations.begin(), p.associations.end(),
                                   [&](const auto& a) { return a.state == state; });
      m.sample("npacd_associations", {{"spid", p.spid}, {"state", state}}, static_cast<double>(n));
    }
  }
  renderAssociationsUp(m, core, provisioned);
}

// The per-association counts and gauges.
void renderPerAssociation(MetricsText& m, const CoreMetrics& core) {
  struct PerAssociation {
    const char* name;
    const char* help;
    MetricType type;
    std::uint64_t (*value)(const CoreMetrics::Provider::Association&);
  };
  const PerAssociation per_association[] = {
      {"npacd_association_outstanding_requests", "NPAC requests awaiting their response on the association.",
       MetricType::kGauge, [](const auto& a) { return a.outstanding; }},
      {"npacd_association_congested", "1 while the association holds congestion_window requests.",
       MetricType::kGauge, [](const auto& a) { return std::uint64_t{a.congested ? 1u : 0u}; }},
      {"npacd_association_pdus_sent_total", "PDUs written on the association (the egress policy's picks of it).",
       MetricType::kCounter, [](const auto& a) { return a.sent; }},
      {"npacd_association_pdus_received_total", "PDUs received on the association.", MetricType::kCounter,
       [](const auto& a) { return a.received; }},
      {"npacd_association_retransmissions_total", "Retransmissions written on the association.",
       MetricType::kCounter, [](const auto& a) { return a.retransmissions; }},
  };
  for (const PerAssociation& family : per_association) {
    m.family(family.name, family.help, family.type);
    for (const CoreMetrics::Provider& p : core.providers) {
      for (const auto& a : p.associations) {
        const std::string id = std::to_string(a.id);
        m.sample(family.name, {{"spid", p.spid}, {"association", id}}, static_cast<double>(family.value(a)));
      }
    }
  }
}

void renderEgressFigures(MetricsText& m, const CoreMetrics& core) {
  // What the egress policy computes per association: LRTM's response time and Nw
  // (NetScaler "LRTM method"), the weighted policy's Current Load % (EAGLE Table 2-4).
  // A family is written only with samples: a provider on round robin adds none.
  struct PerAssociationFigure {
    const char* name;
    const char* help;
    std::optional<double> (*value)(const EgressFigures&);
  };
  const PerAssociationFigure figures[] = {
      {"npacd_egress_lrtm_response_time_seconds",
       "LRTM: the association's response time as N uses it (monitors' mean, or the unmeasured default).",
       [](const EgressFigures& f) { return f.lrtm ? std::optional<double>(f.lrtm->response_time_seconds) : std::nullopt; }},
      {"npacd_egress_lrtm_nw", "LRTM: Nw = active requests x response time [s] x 10000 / weight; the lowest is picked.",
       [](const EgressFigures& f) { return f.lrtm ? std::optional<double>(f.lrtm->nw) : std::nullopt; }},
      {"npacd_egress_load_percent", "Weighted policy: the association's Current Load % of its relative-cost group.",
       [](const EgressFigures& f) {
         return f.load_percent ? std::optional<double>(*f.load_percent) : std::nullopt;
       }},
  };
  for (const PerAssociationFigure& family : figures) {
    bool declared = false;
    for (const CoreMetrics::Provider& p : core.providers) {
      for (const auto& a : p.associations) {
        const std::optional<double> value = a.egress ? family.value(*a.egress) : std::nullopt;
        if (!value) continue;
        if (!declared) m.family(family.name, family.help, MetricType::kGauge);
        declared = true;
        m.sample(family.name, {{"spid", p.spid}, {"association", std::to_string(a.id)}}, *value);
      }
    }
  }
}

// Each provider's throttle level and recovery mode.
void renderProviderStates(MetricsText& m, const CoreMetrics& core) {
  m.family("npacd_throttle_level", "Egress throttle level in force (0 none, 1..3; DSR Egress Throttle Groups).",
           MetricType::kGauge);
  for (const CoreMetrics::Provider& p : core.providers) {
    m.sample("npacd_throttle_level", {{"spid", p.spid}}, p.throttle_level);
  }
  m.family("npacd_provider_recovering", "1 while the provider is in recovery mode (NANC 351).", MetricType::kGauge);
  for (const CoreMetrics::Provider& p : core.providers) {
    m.sample("npacd_provider_recovering", {{"spid", p.spid}}, p.recovering ? 1 : 0);
  }
}

// The PDUs' outcomes by provider, association function and operation (with metrics on).
void renderOutcomes(MetricsText& m, const CoreMetrics& core) {
  struct Outcome {
    ProviderCounters::Outcome index;
    const char* name;
    const char* help;
  };
  const Outcome outcomes[] = {
      {ProviderCounters::kSent, "npacd_pdus_sent_total", "PDUs written to the provider, first sends and re-sends."},
      {ProviderCounters::kAcknowledged, "npacd_pdus_acknowledged_total",
       "PDUs acknowledged: a confirmed one answered with a result, an unconfirmed one written."},
      {ProviderCounters::kRetransmitted, "npacd_pdus_retransmitted_total",
       "Re-sends (after a response timeout or an association loss), also counted as sent."},
      {ProviderCounters::kFailed, "npacd_pdus_failed_total",
       "PDUs failed: answered with an error, or a stored PDU that cannot be sent."},
  };
  for (const Outcome& outcome : outcomes) {
    m.family(outcome.name, outcome.help, MetricType::kCounter);
    for (const CoreMetrics::Provider& p : core.providers) {
      if (!p.counters) continue;
      for (std::size_t f = 0; f < as::kFunctionCount; ++f) {
        for (std::size_t op = 0; op < ProviderCounters::kOperations; ++op) {
          const std::uint64_t n = p.counters->pdus[outcome.index][f][op];
          if (n == 0) continue;  // only combinations that happened: bounded by traffic
          m.sample(outcome.name,
                   {{"spid", p.spid},
                    {"function", as::toString(static_cast<as::AssociationFunction>(f))},
                    {"operation", operationLabel(op)}},
                   static_cast<double>(n));
        }
      }
    }
  }
}

// The round trips and recovery sessions by provider (with metrics on).
void renderProviderHistograms(MetricsText& m, const CoreMetrics& core) {
  m.family("npacd_response_round_trip_seconds", "From a request's latest send to its response.",
           MetricType::kHistogram);
  for (const CoreMetrics::Provider& p : core.providers) {
    if (p.counters) m.histogram("npacd_response_round_trip_seconds", {{"spid", p.spid}}, p.counters->response_rtt);
  }
  m.family("npacd_heartbeat_round_trip_seconds", "From a heartbeat (NANC 404) to its answer.",
           MetricType::kHistogram);
  for (const CoreMetrics::Provider& p : core.providers) {
    if (p.counters) {
      m.histogram("npacd_heartbeat_round_trip_seconds", {{"spid", p.spid}}, p.counters->heartbeat_rtt);
    }
  }
  m.family("npacd_recovery_sessions_total", "Recovery requests answered (lnpRecoveryRequest, NANC 351).",
           MetricType::kCounter);
  for (const CoreMetrics::Provider& p : core.providers) {
    if (p.counters) {
      m.sample("npacd_recovery_sessions_total", {{"spid", p.spid}},
               static_cast<double>(p.counters->recovery_sessions));
    }
  }
}

// The core's families, in the order a scrape has always seen them.
void renderCore(MetricsText& m, const CoreMetrics& core, const std::vector<std::string>& provisioned) {
  renderListener(m, core);
  if (core.counting) renderBinds(m, core);
  renderAssociations(m, core, provisioned);
  renderPerAssociation(m, core);
  renderEgressFigures(m, core);
  renderProviderStates(m, core);
  if (!core.counting) return;
  renderOutcomes(m, core);
  renderProviderHistograms(m, core);
}

}  // namespace

const char* operationLabel(std::size_t operation) {
  // X.711 §7.4 operation codes 0..10, named as the CMIP services they carry.
  static constexpr const char* kNames[] = {"event-report", "event-report-confirmed", "linked-reply",
                                           "get",          "set",                    "set-confirmed",
                                           "action",       "action-confirmed",       "create",
                                           "delete",       "cancel-get"};
  static_assert(std::size(kNames) == ProviderCounters::kUnknownOperation);
  return operation < std::size(kNames) ? kNames[operation] : "unknown";
}

std::string renderMetrics(const MetricsInputs& in) {
  MetricsText m;
  m.family("npacd_build_info", "npacd's version and git revision; always 1.", MetricType::kGauge);
  m.sample("npacd_build_info", {{"version", npac::kVersion}, {"revision", npac::kGitRevision}}, 1);
  m.family("npacd_process_start_time_seconds", "Start time of the npacd process since the Unix epoch.",
           MetricType::kGauge);
  m.sample("npacd_process_start_time_seconds", {}, in.process_start_seconds);
  m.family("npacd_metrics_counting", "1 when npacd counts (the default), 0 with --metrics off.",
           MetricType::kGauge);
  m.sample("npacd_metrics_counting", {}, in.core == nullptr || in.core->counting ? 1 : 0);
  m.family("npacd_storage_writable", "1 while the database takes writes (storage health), else 0.",
           MetricType::kGauge);
  m.sample("npacd_storage_writable", {}, in.storage_failing ? 0 : 1);
  m.family("npacd_storage_failures", "Storage failures reported since the database was last writable.",
           MetricType::kGauge);
  m.sample("npacd_storage_failures", {}, static_cast<double>(in.storage_failures));
  renderThrottleGroups(m, in.throttle_groups);
  m.family("npacd_core_up", "1 when the association core answered this scrape.", MetricType::kGauge);
  m.sample("npacd_core_up", {}, in.core != nullptr ? 1 : 0);
  if (!in.api_refusals.empty()) {
    m.family("npacd_api_refusals_total", "Admin API requests refused before their handler, by reason.",
             MetricType::kCounter);
    for (const auto& [reason, count] : in.api_refusals) {
      m.sample("npacd_api_refusals_total", {{"reason", reason}}, static_cast<double>(count));
    }
  }
  if (!in.api_connections_closed.empty()) {
    m.family("npacd_api_connections_closed_total",
             "Admin API connections npacd closed itself, by reason: idle-for-room (the longest-idle one, for a "
             "new connection at --api-max-connections), slow-stream (an event stream whose client did not read).",
             MetricType::kCounter);
    for (const auto& [reason, count] : in.api_connections_closed) {
      m.sample("npacd_api_connections_closed_total", {{"reason", reason}}, static_cast<double>(count));
    }
  }
  if (in.api_certificate) {
    // What a renewal alert needs (the issue 24 audit: an expired certificate started
    // with no warning): the days left, and whether the certificate is valid now at all.
    const CertificateValidity& c = *in.api_certificate;
    m.family("npacd_api_certificate_expiry_days",
             "Days until the admin API's TLS certificate expires (its notAfter); negative once it has.",
             MetricType::kGauge);
    m.sample("npacd_api_certificate_expiry_days", {}, static_cast<double>(c.not_after - in.now) / 86'400'000.0);
    m.family("npacd_api_certificate_valid",
             "1 while the admin API's TLS certificate is within its validity (notBefore to notAfter), else 0.",
             MetricType::kGauge);
    m.sample("npacd_api_certificate_valid", {}, in.now >= c.not_before && in.now <= c.not_after ? 1 : 0);
  }
  renderQueue(m, in);
  if (in.writer) renderWriter(m, *in.writer);
  if (in.checkpointer) renderCheckpointer(m, *in.checkpointer);
  if (in.core != nullptr) renderCore(m, *in.core, in.provisioned);
  return m.take();
}

}  // namespace npac::npacd
