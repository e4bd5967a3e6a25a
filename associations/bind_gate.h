// BindGate: admission of one NPAC bind, checked in a fixed order.
//
// The checks, in the order docs/OPERATIONS.md "Admission: the checks, in order" gives them; the first failure is the one
// reported (AARE rejected-permanent with the matching diagnostic, an association-log entry
// and a log line):
//    1. the SPID is provisioned, and enabled
//    2. the bind's system type is the provider's (an SOA-and-LSMS provider may bind as SOA,
//       LSMS or both)
//    3. the function mask is not empty and allowed for the bind's system type
//       (allowedFunctions() in bind_facts.h)
//    4. the key (key list id, key id) exists for the provider, is not revoked, not expired
//       and already valid (not-before ≤ now < not-after)
//    5. the signature verifies over the signed bytes with that key (RSA-SHA256 / Ed25519)
//    6. the departure time is within departure_time_window of now, either side
//    7. the sequence number is greater than the last one accepted with that key (replay)
//    8. the peer's NSAP is in the provider's provisioned list, when it has one
//    9. max_associations_per_sp: a bind that would add an association to a provider
//       already holding the maximum is refused (one that replaces does not add)
//   10. the SRR and recovery rules (srr_rules.h decideBind)
// Checks 1–8 only read the request; 9–10 read the provider's live associations, which the
// caller must pass for this SPID only (every function mask).
//
// Replay state: once a bind has passed checks 1–7 it is authentic and fresh, so its
// sequence number is consumed even if a later check refuses it; the verdict says so in
// `consume_sequence` and the caller persists it as the key's last sequence number.
//
// Keys: each provider key's PEM text is parsed once and kept (parsed_key_cache.h); the
// caller may keep its own keys there too (the NPAC's signing key, npac/npacd/npac_keys.h).
//
// Threading: one thread per BindGate (its key cache is not synchronised); apart from that
// cache, pure.
// The clock is the caller's `now`.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "associations/bind_diagnostic.h"
#include "associations/bind_facts.h"
#include "associations/parsed_key_cache.h"
#include "associations/srr_rules.h"

namespace npac::associations {

struct BindInput {
  const BindRequest& request;
  const Nsap& peer_nsap;
  const ProviderRecord* provider = nullptr;  // looked up by request.spid; null = unknown
  const KeyRecord* key = nullptr;  // looked up by (spid, key list id, key id); null = unknown
  std::span<const LiveAssociation> live;  // this provider's live associations
  const BindTunables& tunables;
  WallTime now;
};

struct BindVerdict {
  std::optional<BindDiagnostic> rejection;  // set when refused
  std::string reason;                       // the operator's sentence, with the specifics
  BindDecision decision;                    // when admitted: accept, or replace `replaced`
  std::optional<std::uint64_t> consume_sequence;

  bool admitted() const { return !rejection.has_value(); }
};

class BindGate {
 public:
  BindVerdict check(const BindInput& input);
  ParsedKeyCache& keys() { return keys_; }

 private:
  ParsedKeyCache keys_;
};

}  // namespace npac::associations
