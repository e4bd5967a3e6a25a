// ProviderFarm: many service providers' SOA/LSMS associations to one npacd, in one
// process — the answering side of npacd's scale and load benchmarks (bench/scale.sh).
//
// Each provider (a SPID of --spid-file) binds K associations, association j of provider p
// from local address from[(p*K + j) mod |from|] (so with at least K addresses a
// provider's associations have K different NSAPs, docs/OPERATIONS.md "The association's
// NSAP"). Every bind is the full handshake of npac-soa-sim's AssociationClient: RFC 1006
// TPKT, X.224 CR/CC, X.225 CN/AC, X.226 CP/CPA and the X.227 AARQ/AARE carrying the
// Ed25519-signed LnpAccessControl (docs/npac-bind.asn1); the NPAC's signed answer is
// verified with --npac-key before the association is used. Binds are started at most
// --connect-rate per second with at most --concurrent-binds in flight, one provider per
// bind in flight: a provider binds its associations one after another, in the order of
// their sequence numbers (npacd refuses a number not above the last it accepted). Bound
// associations answer every confirmed NPAC invoke exactly as npac-soa-sim does
// (provider_messages.h answerFor(), heartbeats included) and otherwise sit idle: no timer
// runs per association, so an idle association costs no CPU on either side.
//
// The run ends when --expect NPAC messages (heartbeats not counted) have arrived and
// every answer has been written, at --duration, or on SIGINT/SIGTERM; then every
// association is released (RLRQ, RLRE awaited up to --release-timeout).
//
// Threading: --threads shards, each one io_context on its own thread owning the
// providers p with p mod threads == shard; a provider's associations and counters live on
// its shard's thread only. The shards share only atomics (totals, the stop flag) and the
// report's mutex-guarded bind summary.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npac/npac-soa-sim/bind_request.h"
#include "npac/npac-soa-sim/options.h"

namespace npac::farm {

using soasim::Millis;

// Exit codes, as npac-soa-sim's where the meaning is the same (simulation.h kExit*).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitKey = 3;
inline constexpr int kExitConnect = 4;         // a bind could not connect or got no AARE
inline constexpr int kExitBindRejected = 5;    // an AARE said rejected
inline constexpr int kExitGoalsNotMet = 6;     // --duration or a signal before --expect
inline constexpr int kExitAllLost = 7;         // every association ended before --expect
inline constexpr int kExitNpacUnverified = 9;  // an accepting AARE did not authenticate the NPAC

struct FarmOptions {
  std::string npac_host = "127.0.0.1";
  uint16_t npac_port = 10102;
  std::vector<std::string> spids;
  std::vector<std::string> from{"127.0.0.1"};
  size_t associations = 1;  // K per provider
  cmip::SystemType system_type = cmip::SystemType::kSoa;
  cmip::AssociationFunctionMask functions;
  std::string user_id = "npac-provider-farm";
  int64_t key_list = 1;
  int64_t key_id = 1;
  double connect_rate = 0;        // binds started per second over the farm; 0: unpaced
  size_t concurrent_binds = 128;  // binds in flight at once over the farm (at most one per provider)
  std::optional<uint64_t> expect;
  Millis duration{std::chrono::seconds(60)};
  Millis bind_timeout{std::chrono::seconds(10)};
  Millis release_timeout{std::chrono::seconds(5)};
  size_t threads = 1;
  std::string report_file;  // empty: stdout
  std::string ready_file;   // written (the bind summary) when the bind phase has ended
};

// What one run saw (the --report JSON).
struct FarmReport {
  size_t providers = 0;
  size_t associations_per_provider = 0;
  uint64_t bind_attempts = 0;
  uint64_t binds_ok = 0;
  uint64_t binds_refused = 0;      // an AARE said rejected
  uint64_t binds_failed = 0;       // no connection, timeout, abort, protocol error
  uint64_t binds_unverified = 0;   // accepted, but the NPAC's signature did not verify
  std::string first_refusal;       // the first refusal's ACSE diagnostic and LnpBindRefusal
  std::string first_failure;       // the first other failure's sentence
  double bind_phase_seconds = 0;   // first bind started → last bind ended
  double binds_per_second = 0;     // binds_ok / bind_phase_seconds
  double bind_latency_p50_ms = 0;  // connect → verified AARE, accepted binds
  double bind_latency_p99_ms = 0;
  double bind_latency_max_ms = 0;
  uint64_t received = 0;   // NPAC invokes, heartbeats excluded
  uint64_t answered = 0;   // answers written
  uint64_t heartbeats = 0;
  uint64_t answered_per_provider_min = 0;
  uint64_t answered_per_provider_max = 0;
  uint64_t ended_by_peer = 0;  // associations the NPAC released or aborted, or lost
  double cpu_seconds = 0;      // this process, user + system
  double run_seconds = 0;
  std::string stop_reason;
  int exit_code = 0;

  nlohmann::ordered_json bindJson() const;  // the bind phase only (--ready-file)
  nlohmann::ordered_json toJson() const;
};

// Runs the farm to its end; fills `report` and returns the exit code.
int runFarm(const FarmOptions& options, const soasim::ProviderKey& key, const soasim::NpacKeyRing& npac_keys,
            FarmReport& report);

}  // namespace npac::farm
