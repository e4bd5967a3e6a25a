// A relative-cost (RC) group of the weighted policy (EAGLE "Weighted GTT Load Sharing"):
// the members of one egress set that share the same relative cost.
//
// It keeps that document's arithmetic — group weight, required weight from the in-service
// threshold, entity and group available weight, and the group state of Table 2-2 — and
// two precomputed structures that make every pick O(1):
//
//  * a smooth schedule over the Available members: each member of weight w appears w
//    times in a cycle of length W (the group available weight), at the virtual instants
//    (2k+1)/2w, k = 0..w−1, merged in time order (ties to the earlier member). Any W
//    consecutive non-keyed picks give each member exactly its weight, interleaved (the
//    Sainte-Laguë / stride order), not in bursts. Rebuilt on every status change.
//  * a slot table for the MSU key (sequenced / transaction-based traffic): S slots (a
//    multiple of the configured group weight, at least kMinSlots) each with a home member,
//    w·S/W slots per member. A key hashes to a slot; the slot's owner is its home when the
//    home is usable, otherwise the first usable home along the slot's own fixed probe
//    sequence. So when a member goes down only the slots it owned move (spread over the
//    others in proportion to weight), and when it comes back exactly those return; no key
//    moves between two members whose status did not change. Two owner tables are kept:
//    the normal view (usable = Available) and the sequenced view (usable = Available or
//    Congested — EAGLE "MSU Routing under Congestion": sequenced traffic stays on a
//    Congested primary).
//
// Threading: none (owned by one WeightedPolicy on one strand).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dispatch/member.h"

namespace npac::dispatch {

// EAGLE "In-Service Threshold": 1 %–100 %, initial value 1 %.
inline constexpr std::uint32_t kMinThresholdPercent = 1;
inline constexpr std::uint32_t kMaxThresholdPercent = 100;
inline constexpr std::uint32_t kDefaultThresholdPercent = 1;

// EAGLE Table 2-2 "RC Group In-Service Threshold States".
enum class RcGroupState : std::uint8_t { kAvailable, kProhibited, kThresholdProhibited };

std::string_view toString(RcGroupState state);

// Required RC group weight = group weight × threshold, rounded down but never below 1.
// EAGLE "In-Service Threshold": "if the RC group weight is 110, and the in-service
// threshold is 75%, the required group weight is 82" (82.5 → 82, so not rounded up or to
// nearest-even-up), and Table 2-5 gives G (weight 10, 1 %) a required weight of 1
// (0.1 → 1), so a group with no available weight is never Available.
std::uint32_t requiredWeight(std::uint32_t group_weight, std::uint32_t threshold_percent);

// Table 2-2: Available when available ≥ required; Prohibited when every entity is
// Prohibited; otherwise Threshold-Prohibited (even with 0 available weight, if one entity
// is Congested).
RcGroupState rcGroupState(std::uint32_t available_weight, std::uint32_t required_weight,
                          bool all_prohibited);

class RcGroup {
 public:
  // Minimum slot count of the MSU key table: enough that a dead member's slots spread
  // finely over the rest.
  static constexpr std::uint32_t kMinSlots = 1024;

  RcGroup(std::uint32_t relative_cost, std::uint32_t threshold_percent);

  std::uint32_t relativeCost() const { return rc_; }
  std::uint32_t thresholdPercent() const { return threshold_; }
  bool empty() const { return members_.empty(); }
  const std::vector<Member>& members() const { return members_; }
  Member* find(MemberId id);

  // Changes; each returns false when the id is unknown (add: already present).
  bool add(const Member& member);
  bool remove(MemberId id);
  bool setState(MemberId id, MemberState state);
  bool setWeight(MemberId id, std::uint32_t weight);
  void setThreshold(std::uint32_t percent);

  // The EAGLE tables' figures (normal view: Congested counts 0).
  std::uint32_t groupWeight() const { return group_weight_; }
  std::uint32_t requiredWeight() const { return required_; }
  std::uint32_t availableWeight() const { return available_weight_; }
  RcGroupState state() const { return state_; }
  // The same with Congested members counted as available: the group as sequenced traffic
  // sees it ("traffic would be routed if entity I were Available", Table 2-3 text).
  RcGroupState sequencedState() const { return sequenced_state_; }
  // Available members (normal view).
  std::uint32_t availableCount() const { return available_count_; }
  // Entity available weight (Table 2-3 column) of members()[i].
  std::uint32_t entityAvailableWeight(std::size_t i) const;

  // Next member of the smooth schedule. Requires state() == kAvailable. Honours `avoid`
  // when another Available member exists (the two schedule entries swap).
  MemberId next(std::optional<MemberId> avoid);
  // The member for an MSU key. Requires state() (or sequencedState() when `sequenced`)
  // to be kAvailable.
  MemberId keyed(std::uint64_t key, bool sequenced);

  // The only Available member; meaningful when availableCount() == 1.
  MemberId soleAvailable() const { return sole_available_; }

  // The smooth schedule as it stands (tests, docs).
  const std::vector<MemberId>& schedule();

 private:
  // Figures and states: recomputed at once on every change, O(n).
  void recount();
  // Schedule and slot tables: rebuilt lazily on the first pick after a change, so a
  // burst of changes (4,096 members added one by one) costs one rebuild, not thousands.
  void refresh();
  void rebuildHomes();
  void rebuildOwners(std::vector<MemberId>& owners, bool sequenced_view) const;
  std::uint32_t slotOf(std::uint64_t key) const;

  std::uint32_t rc_;
  std::uint32_t threshold_;
  void reindex();

  std::vector<Member> members_;  // in the order added
  std::unordered_map<MemberId, std::size_t> index_;  // id → members_ index

  std::uint32_t group_weight_ = 0;
  std::uint32_t required_ = 1;
  std::uint32_t available_weight_ = 0;
  std::uint32_t available_count_ = 0;
  MemberId sole_available_ = 0;
  bool homes_dirty_ = true;
  bool tables_dirty_ = true;
  RcGroupState state_ = RcGroupState::kProhibited;
  RcGroupState sequenced_state_ = RcGroupState::kProhibited;

  std::vector<MemberId> schedule_;
  std::vector<std::pair<MemberId, std::uint32_t>> schedule_basis_;  // (id, weight) it was built from
  std::uint32_t cursor_ = 0;

  std::vector<std::uint32_t> homes_;    // slot → members_ index
  std::vector<MemberId> owners_;        // slot → member, normal view
  std::vector<MemberId> seq_owners_;    // slot → member, sequenced view
};

// The smooth interleave used for schedules: weights[i] entries of index i, in the order of
// the instants (2k+1)/(2·weights[i]); ties go to the lower index. O(W log n).
std::vector<std::uint32_t> smoothInterleave(const std::vector<std::uint32_t>& weights);

}  // namespace npac::dispatch
