// The association core's counters and the snapshot a scrape takes of them
// (GET /metrics, docs/OPERATIONS.md "Metrics").
//
//   ProviderCounters  kept by one ProviderCore: PDUs sent, acknowledged, retransmitted and
//                     failed by association function (NANC 111) and CMIP operation (X.711
//                     §7.4 operation code of the queue row), the response and heartbeat
//                     round trips (histograms), recovery sessions (NANC 351). Plain
//                     integers, incremented on the core thread; none at all when counting
//                     is off (npacd --metrics off: the core then holds no ProviderCounters
//                     and skips every increment and clock read made for metrics).
//   CoreMetrics       what CoreService::metrics() answers: a copy of every provider's
//                     counters with its live associations, and the core's own state (bind
//                     admissions, listener, drain, storage). Taken on the core thread; a
//                     plain value afterwards, read on the API thread.
//
// Threading: ProviderCounters belongs to the core thread; CoreMetrics is a value.
// Included by core_service.h (the call that answers it): it needs nothing of it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "associations/bind_facts.h"
#include "cmip/cmip.h"
#include "common/metrics_text.h"
#include "db/outbound_queue.h"

namespace npac::npacd {

// Round trips from milliseconds to response_timeout's 15-minute default (seconds).
inline constexpr std::array<double, 14> kRoundTripBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                          1,     2.5,  5,     10,   30,  120, 900};

struct ProviderCounters {
  enum Outcome : std::uint8_t { kSent, kAcknowledged, kRetransmitted, kFailed, kOutcomes };
  // Operation index: the X.711 opcode 0..kMaxCmipOpcode, or kUnknownOperation for a row
  // written before schema 4 classified it.
  static constexpr std::size_t kOperations = cmip::kMaxCmipOpcode + 2;
  static constexpr std::size_t kUnknownOperation = kOperations - 1;
  static std::size_t operationIndex(int opcode) {
    return cmip::isKnownCmipOpcode(opcode) ? static_cast<std::size_t>(opcode) : kUnknownOperation;
  }
  using Table = std::array<std::array<std::array<std::uint64_t, kOperations>, associations::kFunctionCount>,
                           kOutcomes>;

  void count(Outcome outcome, associations::AssociationFunction function, std::size_t operation) {
    ++pdus[outcome][static_cast<std::size_t>(function)][operation];
  }

  Table pdus{};
  common::Histogram response_rtt{kRoundTripBuckets};
  common::Histogram heartbeat_rtt{kRoundTripBuckets};
  std::uint64_t recovery_sessions = 0;  // lnpRecoveryRequest accepted (NANC 351)
};

// What a PDU is, for its counters: remembered from its queue row while it is in flight.
struct PduSeries {
  associations::AssociationFunction function = associations::AssociationFunction::kNotifications;
  std::uint8_t operation = ProviderCounters::kUnknownOperation;
};

// What the egress policy computes about one association (dispatch::MemberFigures), with
// its provisioned weight and relative cost: listed by GET /v1/associations, exposed by
// GET /metrics.
struct EgressFigures {
  std::uint32_t weight = 1;         // the NSAP's weight (EAGLE weights 1-99)
  std::uint32_t relative_cost = 0;  // the NSAP's relative cost
  // Weighted policy: EAGLE Table 2-4 "Current Load %"; none under another policy.
  std::optional<std::uint32_t> load_percent;
  // LRTM policy (NetScaler "LRTM method"); none under another policy.
  struct Lrtm {
    double response_time_seconds = 0;  // what N uses
    bool measured = false;             // false: the unmeasured default
    double n = 0;                      // active × response time [s]
    double nw = 0;                     // n × 10000 / weight
  };
  std::optional<Lrtm> lrtm;
};

struct CoreMetrics {
  struct Provider {
    std::string spid;
    std::optional<ProviderCounters> counters;  // none while counting is off
    struct Association {
      db::AssociationId id = 0;
      std::string state;  // as listed (AssociationInfo::state): bound, congested, silent, ...
      std::uint64_t outstanding = 0;
      bool congested = false;
      std::uint64_t sent = 0;  // PDUs the egress policy put on it (its picks)
      std::uint64_t received = 0;
      std::uint64_t retransmissions = 0;
      std::optional<EgressFigures> egress;  // none while it is releasing
    };
    std::vector<Association> associations;  // by id
    int throttle_level = 0;
    bool recovering = false;
  };
  bool counting = true;
  bool listening = false;  // the association listener is accepting
  bool draining = false;   // shutdown began
  bool storage_ok = true;  // the core's DeliveryStore takes writes
  // Delivery rounds answered from the ReadyQueues in memory, and read from the database
  // (DeliveryStore::readyRounds/databaseRounds).
  std::uint64_t delivery_rounds_memory = 0;
  std::uint64_t delivery_rounds_database = 0;
  std::uint64_t binds_accepted = 0;
  // Transactions that admitted binds (bind_queue.h): binds_accepted / bind_commits binds
  // share one commit on average.
  std::uint64_t bind_commits = 0;
  std::map<std::string, std::uint64_t> binds_refused;  // by LnpBindRefusal reason code
  std::uint64_t connections_accepted = 0;               // Listener::Counters
  std::uint64_t connections_dropped = 0;                 // over max_unbound, at the fd limit
  std::uint64_t bind_timeouts = 0;
  std::size_t unbound_connections = 0;
  std::vector<Provider> providers;  // by SPID
};

}  // namespace npac::npacd
