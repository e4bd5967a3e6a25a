// ProviderCore: one service provider's logical association (NANC 353 7.b.i) inside npacd —
// everything of it and nothing of any other provider: its bound associations (links), its
// egress policy and outstanding requests (associations::ProviderEgress), its whole
// invoke-id space (confirmed requests, unconfirmed operations and heartbeats from ONE
// allocator, so no two PDUs in use share an id), delivery from the durable queue, response
// timeouts and silent associations, loss handling, SRR off, heartbeats (NANC 404),
// recovery (NANC 351 SWIM) and egress throttling (DSR "Egress Throttle Groups").
//
// The AssociationManager routes to it by SPID; it never reaches another provider's core,
// and an answer, a heartbeat response or a timeout of this provider can only ever complete
// or abort something of this provider (a heartbeat answer only the heartbeat of the
// association it was sent on).
//
// Delivery (deliver()): reads queued rows whose functions an association that can take a
// PDU now has, and places each through the egress. A row that cannot be placed holds back
// only later rows of its own routing function (FIFO per function); other functions go on
// (no head-of-line blocking). Why the rest wait is computed from the live state on demand
// (waitReason(), view()): not bound, no association for the function, all congested, all
// silent, recovering, throttled, releasing, storage unavailable.
//
// Time: every decision reads the injected common::TimeSource; tick() (the manager's periodic timer,
// or a test on a manual clock) sends heartbeats, times requests out, aborts silent
// associations and releases what throttling held.
//
// Its parts, each a type of its own: the heartbeats (ProviderHeartbeats,
// provider_heartbeats.h), the egress throttling (ProviderThrottle, provider_throttle.h) and
// the PDUs decided but held until their rows commit (HeldPdus, held_pdus.h).
//
// Threading: the core thread only; no locks. Host callbacks are invoked synchronously.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "associations/outstanding.h"
#include "associations/provider_egress.h"
#include "cmip/cmip_operations.h"
#include "common/time_source.h"
#include "dispatch/throttle_group.h"
#include "npac/npacd/core/association_link.h"
#include "npac/npacd/core/core_metrics.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/held_pdus.h"
#include "npac/npacd/core/provider_heartbeats.h"
#include "npac/npacd/core/provider_throttle.h"
#include "npac/npacd/core/row_facts.h"
#include "npac/npacd/core/throttle_groups.h"
#include "tunables/registry.h"

namespace npac::npacd {

// Messages read from the queue per delivery round.
inline constexpr std::size_t kDeliveryBatch = 256;
// Queue priority of an answer to a provider's request: above every priority the API
// accepts (0..9), so answers leave before the provider's queued messages.
inline constexpr int kResponsePriority = 10;

// routingFunction() and RowFacts, what a queued row is for its delivery: row_facts.h.

class ProviderCore {
 public:
  // What the core asks of its owner.
  class Host {
   public:
    virtual ~Host() = default;
    // Run deliver() of `spid` soon (a posted handler; coalesced by the host).
    virtual void wakeDelivery(const std::string& spid) = 0;
    // Run deliver() of `spid` once `delay` has passed (throttling released then).
    virtual void wakeDeliveryAfter(const std::string& spid, associations::Duration delay) = 0;
    // Whether this node may send `spid` anything from the queue now: it holds the
    // provider's lease and renewed it recently (provider_leases.h).
    virtual bool mayDeliver(const std::string& spid) const = 0;
    // The provisioned throttle group `spid` is a member of (throttle_groups.h), or none.
    virtual std::shared_ptr<ThrottleGroup> throttleGroupOf(const std::string& spid) const {
      (void)spid;
      return nullptr;
    }
  };

  ProviderCore(std::string spid, const common::TimeSource& clock, tunables::TunableRegistry& registry,
               DeliveryStore& store, Host& host);
  ProviderCore(const ProviderCore&) = delete;
  ProviderCore& operator=(const ProviderCore&) = delete;

  const std::string& spid() const { return spid_; }
  bool bound() const { return !links_.empty(); }
  std::vector<associations::LiveAssociation> live() const { return egress_->logical().live(); }
  bool has(db::AssociationId id) const { return links_.count(id) != 0; }

  // ---- associations ----
  // An admitted bind. A replacing bind: call onBound for the new one, then abort the old
  // one (its loss moves its messages to the new one).
  void onBound(std::shared_ptr<AssociationLink> link, const associations::AssociationSpec& spec,
               bool recovery_mode);
  // The association ended (released, aborted by either side, connection lost): its
  // in-flight requests go to the survivors (retransmissions, same invoke ids) or back to
  // queued. Nothing lost.
  void onLost(db::AssociationId id);
  // An operator abort; false if `id` is not one of this provider's.
  bool abort(db::AssociationId id, const std::string& reason);
  // The provider was disabled (or npacd stops): no new PDU; each association is released
  // once nothing is outstanding on it. How many are being released.
  std::size_t releaseAll(const std::string& release_reason);
  // This node lost the provider's lease (another node took it over): every association
  // is aborted at once with `reason` — nothing may be sent or recorded for it here.
  // How many were aborted.
  std::size_t abortAll(const std::string& reason);
  // Every association is being released (releaseAll was called, nothing bound since).
  bool allReleasing() const;
  // RLRQ for each releasing association with nothing outstanding (all of them if `force`).
  void releaseReady(bool force = false);

  // ---- PDUs from the provider ----
  // Something arrived on `id` (any PDU): the heartbeat's silence starts again.
  void onReceived(db::AssociationId id);
  // A ReturnResult / ReturnError / Reject: completes the heartbeat sent on `id` with that
  // invoke id, or the outstanding request with it (wherever it was sent, NANC 353 7.b.iv).
  void onAnswer(db::AssociationId id, const cmip::RoseApdu& apdu);
  // lnpRecoveryRequest / lnpRecoveryComplete (provider_core_recovery.cc); false if
  // `invoke` is not one of them (the manager brokers it to the application).
  bool onProviderAction(db::AssociationId id, const cmip::CmipInvoke& invoke);
  // The PDU sent with tag `tag` (an unconfirmed message or an answer) was written.
  void onWritten(db::AssociationId id, std::int64_t tag);

  // ---- the queue ----
  // New rows were committed for this provider (recovery mode holds them).
  void onSubmitted(const std::vector<db::MessageId>& ids);
  void deliver();
  // deliver() in two halves, so that the rounds of several providers due in one turn
  // commit their `sent` rows in ONE transaction (DeliveryScheduler::deliverDue):
  // decideRound() places queued rows on associations, records their progress in the
  // store without committing it and holds their PDUs; after the store's flush,
  // finishRound() lets them leave and schedules what follows (an abort, the next round).
  // deliver() is decideRound(), the flush, finishRound().
  struct Round {
    bool decided = false;                     // rows were read (else nothing follows)
    std::optional<db::AssociationId> failed;  // a PDU its association refused: abort it
    bool throttled = false;                   // stopped by the egress throttle
    int group_level = 0;                      // held by the provider's throttle group (1..3)
    bool again = false;                       // a full batch left: more may be queued
  };
  Round decideRound();
  void finishRound(const Round& round);
  // Why a queued message routed by `function` waits now; none if it could leave.
  std::optional<WaitReason> waitReason(associations::AssociationFunction function) const;

  // ---- time and tunables ----
  void tick();
  // congestion_window, response_timeout, retry_attempts, egress_policy, throttle_* changed.
  void applyTunables();
  // SRR turned off for this provider (NANC 353): the earliest association per mask stays.
  void onSrrOff();

  // ---- operators ----
  ProviderQueueView view();
  void describe(std::vector<AssociationInfo>& out) const;
  // Counting for GET /metrics (core_metrics.h), on from construction; off drops the
  // counters, and no increment or clock read is made for them afterwards.
  void setCounting(bool on);
  // This provider's counters and live associations, for a scrape.
  CoreMetrics::Provider metrics();
  // The policy in force and the latest PDUs written with their associations.
  ProviderEgressView egressView() const;
  // At stop: whether anything is still bound.
  std::size_t associationCount() const { return links_.size(); }

 private:
  struct Link {
    std::shared_ptr<AssociationLink> link;
    std::uint32_t function_mask = 0;
  };
  using Facts = RowFacts;

  // Writes a placed message on its association: an Invoke gets its invoke id (the
  // transmission's, or a reserved one for an unconfirmed operation); an answer leaves
  // as stored. kBadPdu: the stored bytes are no Invoke (the row is failed).
  enum class Written { kWritten, kRefused, kBadPdu };
  // Each PDU written is remembered in recent_ (egressView()).
  Written write(const associations::Transmission& t, const db::QueuedMessage& row,
                const Facts& facts);
  // A request that moved (SRR off, a retry elsewhere, a loss): written again and its row
  // pointed at the association it now waits on.
  void move(const associations::Transmission& t);
  // decideRound() in parts: the free congestion-window slots of the associations serving
  // `functions`, and one queued row placed (false: an association refused its PDU, the
  // round stops). A function whose oldest row could not be placed holds back only its own
  // later rows.
  struct RoundDraft {
    std::map<db::AssociationId, std::vector<db::MessageId>> sent;
    std::optional<db::AssociationId> failed;
    std::uint32_t blocked = 0;  // bits of the functions held back
    bool throttled = false;
    int group_level = 0;
    bool placed_any = false;
  };
  std::size_t freeWindowSlots(std::uint32_t functions) const;
  bool placeRow(const db::QueuedMessage& row, associations::TimePoint now, RoundDraft& draft);
  // Decide, commit, then write: write() does not hand a PDU to its association; it holds
  // it (held_) until the store has committed the rows' progress (`sent`). The held PDUs
  // released, and the associations that refused one aborted.
  void releaseOutgoing();
  // A recovery request answered (provider_core_recovery.cc): the messages `wanted` selects,
  // sent and their rows committed; how many, or none and the *refusal for the provider.
  std::optional<std::int64_t> answerRecovery(const associations::RecoveryRequest& wanted, std::string* refusal);
  // A recovery request's selected messages, written in order until the window is full
  // (provider_core_recovery.cc); how many were.
  std::int64_t sendRecovered(const std::vector<associations::MessageId>& selected,
                             const std::map<associations::MessageId, const db::QueuedMessage*>& by_id);
  std::uint32_t usableFunctions() const;
  // Metrics (only while counters_ is set): a row written on the wire, first send or not.
  void countWritten(const db::QueuedMessage& row, const Facts& facts, bool retransmission);
  // The acknowledged or failed count of a confirmed request's row, and forgets it.
  void countAnswered(db::MessageId message, ProviderCounters::Outcome outcome);

  std::string spid_;
  const common::TimeSource& clock_;
  tunables::TunableRegistry& registry_;
  DeliveryStore& store_;
  Host& host_;
  std::unique_ptr<associations::ProviderEgress> egress_;
  std::map<db::AssociationId, Link> links_;
  // Unconfirmed PDUs and answers on the wire, by message id: the invoke id reserved for
  // an unconfirmed one (released once written), none for an answer.
  struct Unconfirmed {
    db::AssociationId association = 0;
    std::optional<associations::InvokeId> invoke_id;
    PduSeries series;  // for its acknowledged count, while counting
  };
  std::map<db::MessageId, Unconfirmed> unconfirmed_;
  HeldPdus held_;  // decided, waiting for their rows to commit
  ProviderThrottle throttle_;      // its own throttle_* limits and its throttle group's
  ProviderHeartbeats heartbeats_;  // NANC 404, per association
  // Metrics; none while counting is off. What each confirmed request in flight is.
  std::unique_ptr<ProviderCounters> counters_ = std::make_unique<ProviderCounters>();
  std::unordered_map<db::MessageId, PduSeries> in_flight_series_;
  // The latest kRecentPicks PDUs written (a ring; next_pick_ counts every one written).
  struct RecentPick {
    db::AssociationId association = 0;
    associations::AssociationFunction function = associations::AssociationFunction::kNotifications;
    bool retransmission = false;
    db::TimeMs at = 0;
  };
  std::array<RecentPick, kRecentPicks> recent_{};
  std::uint64_t next_pick_ = 0;
};

}  // namespace npac::npacd
