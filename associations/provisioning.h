// Reading the BindGate's provisioning facts from the db/ stores.
//
// The gate itself only sees ProviderRecord / KeyRecord (bind_facts.h); this seam fills
// them from the provider, NSAP and key stores, and records an admitted bind's sequence
// number. It is the only file of the association layer that knows the stores.
//
// Provisioned NSAPs that are not 12-octet RFC 1277 Internet NSAPs (nsap.h) can never
// match a peer address; they are skipped and counted in `unusable_nsaps` so the caller
// can warn the operator.
//
// Threading: as the Database passed in (one thread at a time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "associations/bind_facts.h"
#include "db/database.h"
#include "db/status.h"

namespace npac::associations {

// Weight and relative cost of one provisioned NSAP (for AssociationSpec and the weighted
// policy, EAGLE "Weighted GTT Load Sharing").
struct NsapTraffic {
  Nsap nsap;
  std::uint32_t weight = 1;
  std::uint32_t relative_cost = 0;
};

struct BindFacts {
  std::optional<ProviderRecord> provider;  // none: unknown SPID
  std::optional<KeyRecord> key;            // none: unknown (list id, key id)
  std::vector<NsapTraffic> traffic;        // per provisioned NSAP
  std::size_t unusable_nsaps = 0;
};

// Unknown provider or key is not an error (the gate refuses with its diagnostic); a
// storage failure is, and the caller refuses the bind without blaming the provider.
db::Result<BindFacts> loadBindFacts(db::Database& database, const BindRequest& request);

// The weight and relative cost for an association from `peer` (defaults if unprovisioned).
NsapTraffic trafficFor(const BindFacts& facts, const Nsap& peer);

// Persists the gate's consume_sequence. The store takes it only if it is still above the
// last one (one UPDATE), so of two binds racing with one number only one passes: a
// kInvalidArgument here means the bind is a replay after all and must be refused.
db::Status recordSequence(db::Database& database, const BindRequest& request,
                          std::uint64_t sequence);

}  // namespace npac::associations
