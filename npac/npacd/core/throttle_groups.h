// ThrottleGroups: the provisioned egress throttle groups in force on this npacd node (DSR
// "Egress Throttle Groups" and "Egress Throttle Lists"; docs/OPERATIONS.md "Egress
// throttling"). A group names a far end that serves several SPIDs (a service bureau):
// what all nodes send to its members together stays under its EMR and EPT maxima.
//
// One ThrottleGroup per provisioned group counts what THIS node sends to the members — a
// rate over a 1 s window shared by all their ProviderCores (on any core thread), and each
// member's outstanding requests — and keeps an EgressThrottleList of the other nodes'
// latest reports (dispatch/throttle_list.h). A member's ProviderCore asks mayAdmit() before
// each message that is not an answer, and calls onSent() when it placed one:
//   * the list's congestion level, from the aggregate (this node plus every counted peer)
//     against the effective maxima, with the group's onset/abatement percentages: at any
//     level above 0 the members' messages are held (as a provider's own throttle_* does);
//   * this node's share (EgressThrottleList::rateAllowance/pendingAllowance): its own rate
//     stays under it, paced in tenths of a second, and its pending requests too.
// A held message stays queued (durable, never discarded); the core retries in 100 ms and
// the message's wait reason reads "throttled" with the group and its level.
//
// The nodes' link is the shared database (ThrottleExchange, throttle_exchange.h): each
// node writes localReports() a few times a second and hands the others' to
// applyReports(). A peer whose report is older than kStaleReport counts as lost (its
// counts are ignored, the maxima lose peer_loss_reduction_percent each) until a fresh one
// arrives; a peer whose report vanished (it stopped cleanly and removed it) or is older
// than kForgetPeer is no longer in the list.
//
// Threading: every method may be called from any thread. The map of groups is guarded by
// one shared mutex (apply() writes, lookups read); each group by its own mutex, held only
// for its arithmetic (no I/O, no callbacks under a lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "associations/outstanding.h"
#include "common/time_source.h"
#include "db/throttle_group_store.h"
#include "dispatch/congestion.h"
#include "dispatch/throttle_list.h"

namespace npac::npacd {

// A peer's report older than this counts as a lost link. Reports are written every
// kReportPeriod, so this is six missed reports: a node stalled by load for a moment is
// not yet lost, one paused or cut off is within about 2 s (docs/OPERATIONS.md).
inline constexpr std::chrono::milliseconds kReportPeriod{250};
inline constexpr std::chrono::milliseconds kStaleReport{1500};
// A peer silent this long has left the list (a node that died and never came back).
inline constexpr std::chrono::hours kForgetPeer{1};
// The egress rate is paced in tenths of a second, a provider's own throttle_* limits
// (provider_throttle.h) and its group's alike: at most ceil(max/10) pushes per slot, so a
// held burst leaves spread over the second instead of all at once. A round stopped by
// throttling is retried one slot later.
inline constexpr auto kPaceSlot = std::chrono::milliseconds(100);

// The dispatch configuration a provisioned group stands for (the same level rules as the
// throttle_* tunables: level n in use while its onset and abatement are both set).
dispatch::ThrottleListConfig listConfigOf(const db::ThrottleGroupDefinition& group);

class ThrottleGroup {
 public:
  ThrottleGroup(db::ThrottleGroupDefinition definition, std::string node);
  ThrottleGroup(const ThrottleGroup&) = delete;
  ThrottleGroup& operator=(const ThrottleGroup&) = delete;

  const std::string& name() const { return definition_.name; }
  const db::ThrottleGroupDefinition& definition() const { return definition_; }

  // Whether one more message (not an answer) may leave now for a member; 0 when it may,
  // else the level that holds it (1..3; 1 also when only this node's share is used up).
  int mayAdmit(associations::TimePoint now);
  // A member's message left: counted in the rate; `outstanding` is the member's
  // outstanding requests now (after it).
  void onSent(const std::string& spid, std::size_t outstanding, associations::TimePoint now);
  // A member's outstanding requests changed (answers, losses, timeouts).
  void notePending(const std::string& spid, std::size_t outstanding);
  // "level 1: rate 5012/5000 msg/s, pending 40/6000" as operators read it.
  std::string detail(associations::TimePoint now);

  // What an operator sees of it (GET /v1/throttle-groups/{name}, metrics).
  struct NodeShare {
    std::string node;
    bool local = false;
    double rate = 0;
    std::uint64_t pending = 0;
    bool wanting = false;
    double age_seconds = 0;  // since the report was written (0 for this node)
    bool counted = true;     // in the aggregate (false: its link is lost)
  };
  struct View {
    db::ThrottleGroupDefinition definition;
    int level = 0;
    double max_rate = 0;        // effective (reduced) maxima; 0 when not limited
    double max_pending = 0;
    double rate = 0;            // aggregate, as of now
    std::uint64_t pending = 0;
    double rate_share = 0;      // this node's share of the effective maxima
    double pending_share = 0;
    std::vector<NodeShare> nodes;          // this node first, then peers by name
    std::vector<std::string> unreachable;  // peers whose link is lost
    std::uint64_t held = 0;      // messages held by it on this node, ever
    std::uint64_t admitted = 0;  // messages it let leave on this node, ever
  };
  View view(associations::TimePoint now);

  // The exchange: this node's report, and the peers' (`written_at`: the report's time on
  // this node's steady clock, now less its age). A node beyond the list's size is ignored.
  db::ThrottleReport localReport(associations::TimePoint now);
  void applyPeerReports(const std::vector<db::ThrottleReport>& reports, associations::TimePoint read_at);
  // Counts and peers carried over from the group this one replaces (its limits changed).
  void carryFrom(ThrottleGroup& previous);

 private:
  struct PeerState {
    std::string node;
    dispatch::PeerId id = 0;
    double rate = 0;
    std::uint64_t pending = 0;
    bool wanting = false;
    associations::TimePoint written_at{};
  };
  int evaluateLocked(associations::TimePoint now);
  std::uint64_t pendingLocked() const;
  bool wantingLocked(associations::TimePoint now) const;
  std::string detailLocked(associations::TimePoint now);

  const db::ThrottleGroupDefinition definition_;
  const std::string node_;
  std::mutex mu_;
  dispatch::EgressRateWindow window_;
  std::map<std::string, std::size_t> pending_;  // per member SPID
  dispatch::EgressThrottleList list_;
  std::map<std::string, PeerState> peers_;  // by node name
  dispatch::PeerId next_peer_id_ = 1;
  bool warned_full_ = false;
  std::optional<associations::TimePoint> last_held_;
  std::int64_t pace_slot_ = -1;
  std::uint32_t pace_in_slot_ = 0;
  std::uint64_t held_ = 0;
  std::uint64_t admitted_ = 0;
};

class ThrottleGroups {
 public:
  ThrottleGroups(const common::TimeSource& clock, std::string node);

  const std::string& node() const { return node_; }
  const common::TimeSource& clock() const { return clock_; }

  // The provisioned groups as read from the store. A group whose definition did not change
  // keeps its state; a changed one starts from the old one's counts and peers.
  void apply(std::vector<db::ThrottleGroupDefinition> groups);
  // The group `spid` is a member of, or null.
  std::shared_ptr<ThrottleGroup> groupOf(const std::string& spid) const;
  std::shared_ptr<ThrottleGroup> find(const std::string& name) const;
  std::vector<std::shared_ptr<ThrottleGroup>> all() const;

  // The exchange (see above).
  std::vector<db::ThrottleReport> localReports(associations::TimePoint now) const;
  void applyReports(const std::vector<db::ThrottleReport>& reports, associations::TimePoint read_at) const;

  // The API changed a group: the exchange reads the store again at once (its hook).
  void setReloadHook(std::function<void()> hook);
  void requestReload() const;

 private:
  const common::TimeSource& clock_;
  const std::string node_;
  mutable std::shared_mutex mu_;
  std::map<std::string, std::shared_ptr<ThrottleGroup>> by_name_;
  std::map<std::string, std::shared_ptr<ThrottleGroup>> by_member_;
  std::function<void()> reload_hook_;
};

}  // namespace npac::npacd
