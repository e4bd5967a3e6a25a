// LRTM — least response time using monitors (NetScaler "LRTM method": Citrix ADC,
// "Método LRTM", 9 May 2023).
//
// The pick is the Available member with the smallest
//     N  = active transactions × response time           (first formula, Table 1)
//     Nw = N × 10000 / weight                             ("cuando se asignan pesos", Table 2)
// with these exact rules (docs/dispatch/lrtm.md):
//   1. A member with no active transaction is picked before any member with one
//      (LRTM method: "recibe la primera solicitud, porque este servicio no está manejando
//      ninguna transacción activa"), even if a busy member's N were 0.
//   2. Otherwise the smallest Nw wins. Nw is compared exactly (an integer rank, N in
//      nanoseconds, see kNwScale), so ties are real ties, never rounding accidents.
//      With every weight equal, Nw orders as N does, so one rule serves both tables.
//   3. Ties go round robin: to the tied member that was sent to least recently; members
//      never sent to come first, in the order they were added. Over a stable tie set this
//      is a strict rotation. LRTM method Table 1, request 6: Service-2 and Service-3 both
//      have N = 8; Service-2 got request 5, so Service-3 gets request 6.
//   4. Response time: the mean of the member's bound monitors (dispatch/monitor.h, EWMA
//      per monitor). onCompleted's latency is a sample of the kRequestResponse monitor.
//      A member with no sample yet is ranked as if its response time were
//      LrtmConfig::unmeasured_response_time (default 1 s): idle, it is still picked
//      first (rule 1); loaded, it competes as a 1-second member until it is measured,
//      so an unmeasured association neither starves nor attracts everything.
//   5. Only Available members are candidates; a Congested member (send queue full) is
//      skipped like a Prohibited one. `avoid` is honoured when another candidate exists
//      (the second best is served). The message key is not used: LRTM is load-driven.
// Active count: onSent increments it and marks the member as sent-to (rule 3);
// onCompleted and onFailed decrement it (never below zero). pick() changes nothing: a
// caller that picks must report onSent, as the LRTM method's tables assume for every request.
//
// Cost: candidates sit in a 4-ary min-heap keyed by (busy, Nw, last-sent sequence): pick
// is O(1) (O(1) more with `avoid`); each event re-sifts one member, O(log n).
// Threading: none (one strand), see dispatch/policy.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "dispatch/config_error.h"
#include "dispatch/monitor.h"
#include "dispatch/policy.h"

namespace npac::dispatch {

// LRTM method, Table 2: Nw = N × (10000 / weight).
inline constexpr double kLrtmWeightScale = 10000.0;
inline constexpr Duration kDefaultUnmeasuredResponseTime = std::chrono::seconds(1);

struct LrtmConfig {
  // Monitors bound to every member unless bindMonitors() says otherwise (LRTM method:
  // "-LRTM ENABLED" on a monitor). Default: all three kinds.
  MonitorMask monitors = MonitorMask::all();
  // Per-monitor EWMA gain, in (0, 1]; 1 keeps only the last sample.
  double monitor_alpha = kDefaultMonitorAlpha;
  // Response time assumed for a member none of whose monitors has a sample. > 0.
  Duration unmeasured_response_time = kDefaultUnmeasuredResponseTime;

  Status validate() const;
};

// One member as LRTM sees it (npacctl plan's table, tests). N and Nw are expressed with
// the response time in seconds, as the LRTM method's tables write them.
struct LrtmMemberView {
  MemberId id = 0;
  MemberState state = MemberState::kAvailable;
  std::uint32_t weight = kDefaultWeight;
  std::uint32_t active = 0;
  std::optional<Duration> measured;  // monitors' mean; nullopt = unmeasured
  Duration response_time{};          // what N uses (measured or the unmeasured default)
  double n = 0;                      // active × response time [s]
  double nw = 0;                     // n × 10000 / weight
};

class LrtmPolicy final : public Policy {
 public:
  // An invalid config (see LrtmConfig::validate) is sanitised: alpha clamped into
  // (0, 1], a non-positive unmeasured time replaced by the default. Validate first.
  explicit LrtmPolicy(LrtmConfig config = {});

  std::string_view name() const override { return "lrtm"; }

  PickResult pick(const PickContext& context) override;

  void addMember(const Member& member) override;
  void removeMember(MemberId id) override;
  void setState(MemberId id, MemberState state) override;
  void setWeight(MemberId id, std::uint32_t weight) override;

  void onSent(MemberId id, TimePoint now) override;
  void onCompleted(MemberId id, Duration latency, TimePoint now) override;
  void onFailed(MemberId id, TimePoint now) override;
  void onMonitorSample(MemberId id, MonitorKind kind, Duration rtt, TimePoint now) override;

  // Members in the order they were added.
  std::vector<Member> members() const override;
  // With each member's response time, N and Nw (table()).
  std::vector<MemberFigures> figures() const override;

  // Rebinds one member's monitors (the LRTM method binds monitors per service). Returns false
  // for an unknown id.
  bool bindMonitors(MemberId id, MonitorMask monitors);

  std::optional<LrtmMemberView> view(MemberId id) const;
  std::vector<LrtmMemberView> table() const;  // in the order members were added
  const LrtmConfig& config() const { return config_; }

 private:
  static constexpr std::size_t kNotInHeap = static_cast<std::size_t>(-1);
  static constexpr std::size_t kArity = 4;
  // Rank = floor(N[ns] × kNwScale / weight), with kBusyRank added for a busy member.
  // kNwScale > 99² makes the floor order-exact: for distinct N_a/w_a < N_b/w_b the gap is
  // at least 1/(w_a w_b) ≥ 1/9801, i.e. more than 1 after scaling, and equal ratios give
  // equal floors. N < 2^95 (32-bit count × 63-bit ns), so the rank stays below 2^109.
  static constexpr unsigned __int128 kNwScale = 16384;
  static constexpr unsigned __int128 kBusyRank = static_cast<unsigned __int128>(1) << 120;

  struct Entry {
    Member member;
    MemberMonitors monitors;
    std::uint64_t response_ns = 0;     // effective response time
    unsigned __int128 n = 0;           // active × response_ns
    std::uint64_t order = 0;           // rule 3 rotation key (lower = sooner)
    std::uint64_t added = 0;           // add sequence, for table() order
    std::size_t heap_pos = kNotInHeap;
  };
  // Heap nodes carry their key so that sifting never leaves the heap array.
  struct HeapNode {
    unsigned __int128 rank = 0;  // rules 1 and 2
    std::uint64_t order = 0;     // rule 3
    std::size_t slot = 0;
  };

  Entry* find(MemberId id);
  const Entry* find(MemberId id) const;
  std::size_t slotOf(const Entry& e) const { return static_cast<std::size_t>(&e - entries_.data()); }
  void refreshKey(std::size_t slot);       // recompute n, then restore heap order
  void refreshResponseTime(Entry& e);
  HeapNode nodeFor(std::size_t slot) const;
  static bool before(const HeapNode& a, const HeapNode& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.order < b.order;
  }
  void heapInsert(std::size_t slot);
  void heapErase(std::size_t slot);
  void heapFix(std::size_t slot);
  void siftUp(std::size_t pos);
  void siftDown(std::size_t pos);
  void place(std::size_t pos, const HeapNode& node);
  LrtmMemberView viewOf(const Entry& e) const;

  LrtmConfig config_;
  std::vector<Entry> entries_;                       // dense; slot order is arbitrary
  std::unordered_map<MemberId, std::size_t> index_;  // id → slot
  std::vector<HeapNode> heap_;                       // Available members, 4-ary min-heap
  std::uint64_t add_seq_ = 0;
  // Members never sent to rank by add order below every member sent to (rule 3).
  std::uint64_t sent_seq_ = std::uint64_t{1} << 62;
};

}  // namespace npac::dispatch
