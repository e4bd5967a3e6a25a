// LogicalAssociation: one per service provider — its live associations treated as one
// logical association for messaging (NANC 353 7.b.i), with the egress policy that picks
// exactly one association per PDU.
//
// Function filter (NANC 111): an outbound PDU names the association function it needs and
// may only leave on an association whose function mask includes that function. The
// logical association therefore runs one dispatch::Policy per function (five, built from
// the same PolicyConfig — the provider's `egress_policy`): the members of the policy for
// function F are the bound associations whose mask has F. route(F) asks that policy only,
// so the pick is both filtered and fair within F's members. An association with several
// functions is a member of several policies; every state change and traffic event
// (congested, sent, completed) is sent to each policy that holds it, so load-aware policies
// (LRTM) see the association's whole load whatever function it was used for. Rotation
// state is per function: with round robin, each function's PDUs rotate strictly over that
// function's members (3 associations with the same mask: PDU n goes to member n mod 3).
//
// Association states: kBound associations take traffic; kReleasing ones (graceful
// release, or the SRR-off plan) leave every policy at once but stay listed — they still
// answer what is outstanding on them — until remove(). A Congested association (at
// `congestion_window`, see outstanding.h) stays a member and the policy treats it as the
// dispatch core says (round robin takes it out of the rotation until it is Available).
//
// The provider is available while at least one association is bound (NANC 353 7.b.iii).
//
// Threading: none; driven from the provider's strand. No I/O.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "associations/bind_facts.h"
#include "common/status.h"
#include "associations/srr_rules.h"
#include "dispatch/factory.h"

namespace npac::associations {

enum class AssociationState : std::uint8_t { kBound, kReleasing };
std::string_view toString(AssociationState state);

// What the caller knows of a newly admitted association.
struct AssociationSpec {
  AssociationId id = 0;
  Nsap nsap = Nsap::fromIpv4({0, 0, 0, 0});
  FunctionMask functions;
  std::uint64_t bound_order = 0;  // increasing per bind (srr_rules.h)
  // From the provider's provisioned NSAP entry, for the weighted policy (EAGLE "Weighted
  // GTT Load Sharing").
  std::uint32_t weight = dispatch::kDefaultWeight;
  std::uint32_t relative_cost = 0;
};

struct AssociationView {
  AssociationSpec spec;
  AssociationState state = AssociationState::kBound;
  dispatch::MemberState member_state = dispatch::MemberState::kAvailable;
};

// route()'s answer: the association for this PDU, or why there is none.
struct Route {
  enum class Why : std::uint8_t {
    kNoAssociationForFunction,  // no bound association has the function (NANC 111)
    kPolicyNone,                // members exist; the policy said none (see policy_reason)
  };
  std::optional<AssociationId> association;
  Why why = Why::kNoAssociationForFunction;
  dispatch::NoneReason policy_reason = dispatch::NoneReason::kNoMembers;

  bool ok() const { return association.has_value(); }
};

class LogicalAssociation {
 public:
  static Result<std::unique_ptr<LogicalAssociation>> create(
      std::string spid, const dispatch::PolicyConfig& config);

  LogicalAssociation(const LogicalAssociation&) = delete;
  LogicalAssociation& operator=(const LogicalAssociation&) = delete;

  const std::string& spid() const { return spid_; }
  const std::string& policyName() const { return policy_name_; }

  // Membership. add() of an id already present is ignored and returns false.
  bool add(const AssociationSpec& spec);
  void startReleasing(AssociationId id);  // out of every rotation, still listed
  void remove(AssociationId id);          // lost, aborted or released
  void setMemberState(AssociationId id, dispatch::MemberState state);

  // NANC 353 7.b.iii.
  bool available() const;
  bool empty() const { return associations_.empty(); }

  // The hot path: one association for one PDU needing `function`.
  Route route(AssociationFunction function, const dispatch::PickContext& context);

  // Traffic events, forwarded to every policy that holds the association.
  void onSent(AssociationId id, dispatch::TimePoint now);
  void onCompleted(AssociationId id, dispatch::Duration latency, dispatch::TimePoint now);
  void onFailed(AssociationId id, dispatch::TimePoint now);

  // `egress_policy` changed: rebuild every policy with the current members.
  // An error Status (kBadEgressPolicy) leaves the current policies in force.
  Status changePolicy(const dispatch::PolicyConfig& config);

  // Bound associations, for decideBind() and planSrrOff().
  std::vector<LiveAssociation> live() const;
  // Every listed association, in bind order (for the admin API).
  std::vector<AssociationView> snapshot() const;
  std::optional<AssociationView> find(AssociationId id) const;
  // What the egress policy computes about bound association `id` (load %, LRTM N/Nw),
  // from the policy of the lowest function in its mask: every policy holding it is sent
  // the same traffic events, so LRTM's figures agree across them; a weighted load % is
  // that function's. None for an unknown or releasing association (in no policy).
  std::optional<dispatch::MemberFigures> figures(AssociationId id) const;

 private:
  using Policies = std::array<std::unique_ptr<dispatch::Policy>, kFunctionCount>;

  LogicalAssociation(std::string spid, std::string policy_name, Policies policies)
      : spid_(std::move(spid)), policy_name_(std::move(policy_name)), policies_(std::move(policies)) {}

  static Status build(const dispatch::PolicyConfig& config, Policies& out);
  AssociationView* lookup(AssociationId id);
  void join(const AssociationView& view);   // into each policy of its functions
  void leave(const AssociationView& view);  // out of each policy of its functions
  template <typename Fn>
  void forEachPolicyOf(const AssociationView& view, Fn&& fn);

  std::string spid_;
  std::string policy_name_;
  Policies policies_;
  std::vector<AssociationView> associations_;  // bind order; a provider has a handful
};

}  // namespace npac::associations
