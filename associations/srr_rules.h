// The SOA Round Robin rules (NANC 353, NANC 386) as pure functions over the provider's
// live associations.
//
// decideBind() is the SRR decision table (docs/OPERATIONS.md, "SOA Round Robin (SRR) and
// duplicate binds") for one incoming bind that passed every other admission check:
//
//   situation                                   SRR off                     SRR on
//   recovery mode on, any association up        reject (recovery-while-up)  same
//   same mask from the NSAP of a live one       replace that one            replace that one
//   same mask from another NSAP while one up    duplicate_bind: replace     accept: another
//                                               (NANC 386) or reject        member
//   first bind for (SPID, mask)                 accept                      accept
//
// The rows are checked top to bottom. "Same mask" means an equal function mask: a bind
// whose mask differs (even if it overlaps) is a different association and is accepted —
// NANC 386 speaks of "the same function mask". With SRR off and replace, if several
// associations already share the mask (SRR was just turned off and the release plan is
// still running), the earliest-bound one is replaced.
//
// planSrrOff() is the transition when SRR is turned off while several associations share
// a mask: per mask, the earliest-bound association stays; each other one is released
// gracefully after its outstanding messages move to the one that stays. Nothing is done
// here: the plan is returned as data for the caller to carry out.
//
// Turning SRR on needs no plan: decideBind() reads `srr` on every bind.
//
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "associations/bind_diagnostic.h"
#include "associations/bind_facts.h"
#include "dispatch/member.h"

namespace npac::associations {

using AssociationId = dispatch::MemberId;

// What the SRR rules need to know of one live association.
struct LiveAssociation {
  AssociationId id = 0;
  Nsap nsap = Nsap::fromIpv4({0, 0, 0, 0});
  FunctionMask functions;
  // Bind order: earlier binds have smaller values (a counter or a monotonic time);
  // ties are broken by the smaller id.
  std::uint64_t bound_order = 0;
};

struct BindDecision {
  enum class Kind : std::uint8_t { kAccept, kAcceptReplacing, kReject };
  Kind kind = Kind::kAccept;
  std::optional<AssociationId> replaced;    // kAcceptReplacing: abort this one
  std::optional<BindDiagnostic> rejection;  // kReject: why

  static BindDecision accept() { return {Kind::kAccept, std::nullopt, std::nullopt}; }
  static BindDecision replacing(AssociationId old) { return {Kind::kAcceptReplacing, old, std::nullopt}; }
  static BindDecision reject(BindDiagnostic why) { return {Kind::kReject, std::nullopt, why}; }
  bool admitted() const { return kind != Kind::kReject; }
};

BindDecision decideBind(std::span<const LiveAssociation> live, const Nsap& nsap,
                        FunctionMask functions, bool recovery_mode, bool srr,
                        DuplicateBind duplicate_bind);

struct SrrOffRelease {
  AssociationId release = 0;  // to be released gracefully (RLRQ after draining)
  AssociationId move_to = 0;  // where its outstanding messages go first
};

// Releases in bind order (the latest-bound last).
std::vector<SrrOffRelease> planSrrOff(std::span<const LiveAssociation> live);

}  // namespace npac::associations
