// Round robin: strict rotation over the Available members (NANC 353 "SOA Round Robin").
//
// NANC 353 §7.b.ii: the NPAC sends each PDU over the next association of a provider's
// logical association "regardless of load on any given SOA association"; one PDU goes
// over exactly one association (§Description). This policy therefore ignores active
// counts and response times entirely; only the member state matters.
//
// The exact order (docs/DISPATCH.md "Round robin"):
//   * The rotation is a queue of the Available members. A pick serves the head and
//     moves it to the tail, so the tail is normally the member served last.
//   * A member that becomes Available (added, or back from Congested/Prohibited) joins
//     at the tail — it is served after every member already waiting — except that when
//     the tail is the member served last, it joins just before it. So a joiner never
//     makes the last-served member go twice in a row, and nobody waiting is overtaken.
//     Before the first pick, members are served in the order they joined.
//   * A member that leaves (removed, Congested, Prohibited) drops out of the queue; the
//     others keep their relative order and nobody is skipped.
//   * `avoid` (a retry): when the head is the avoided member and another Available
//     member exists, the second member is served and the two swap places, so the
//     avoided member keeps its turn and is next.
// A Congested member is out of the rotation: it is a transport signal (send queue
// full), not a load measure, and round robin has no sequenced traffic to keep on it.
//
// Cost: pick is O(1); a join or leave is O(n) (positions are renumbered).
// Threading: none (one strand), see dispatch/policy.h.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include "dispatch/policy.h"

namespace npac::dispatch {

class RoundRobinPolicy final : public Policy {
 public:
  RoundRobinPolicy() = default;

  std::string_view name() const override { return "round-robin"; }

  PickResult pick(const PickContext& context) override;

  void addMember(const Member& member) override;
  void removeMember(MemberId id) override;
  void setState(MemberId id, MemberState state) override;
  void setWeight(MemberId id, std::uint32_t weight) override;
  void onSent(MemberId id, TimePoint now) override;
  void onCompleted(MemberId id, Duration latency, TimePoint now) override;
  void onFailed(MemberId id, TimePoint now) override;

  // Members in the order they were added (not rotation order).
  std::vector<Member> members() const override;

  // The Available members in the order they will be served from the next pick on.
  std::vector<MemberId> rotation() const;

 private:
  static constexpr std::size_t kNotInRing = static_cast<std::size_t>(-1);

  struct Entry {
    Member member;
    std::size_t ring_pos = kNotInRing;  // index in ring_, or kNotInRing
  };

  void join(MemberId id);
  void leave(MemberId id);
  void renumberFrom(std::size_t first);

  std::vector<Entry> entries_;                       // insertion order
  std::unordered_map<MemberId, std::size_t> index_;  // id → entries_ index
  std::vector<MemberId> ring_;                       // rotation; ring_[cursor_] is next
  std::size_t cursor_ = 0;
  std::optional<MemberId> last_served_;
};

}  // namespace npac::dispatch
