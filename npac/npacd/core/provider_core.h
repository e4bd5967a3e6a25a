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
// Delivery (decideRound(), finishRound()): reads queued rows whose functions an association that can take a
// PDU now has, and places each through the egress. A row that cannot be placed holds back
// only later rows of its own routing function (FIFO per function); other functions go on
// (no head-of-line blocking). Why the rest wait is computed from the live state on demand
// (ProviderView, provider_view.h): not bound, no association for the function, all
// congested, all silent, recovering, throttled, releasing, storage unavailable.
//
// Time: every decision reads the injected common::TimeSource; tick() (the manager's periodic timer,
// or a test on a manual clock) sends heartbeats, times requests out, aborts silent
// associations and releases what throttling held.
//
// Its parts, each a type of its own: its bound associations and the PDUs written on them
// (ProviderLinks, provider_links.h, which holds them until their rows commit: HeldPdus,
// held_pdus.h), the heartbeats (ProviderHeartbeats, provider_heartbeats.h), the egress
// throttling (ProviderThrottle, provider_throttle.h), recovery (ProviderRecovery,
// provider_recovery.h), the counting for GET /metrics with the latest PDUs written
// (ProviderCounting, provider_counting.h) and what operators read of it all (ProviderView,
// provider_view.h).
//
// Threading: the core thread only; no locks. Host callbacks are invoked synchronously.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
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
#include "npac/npacd/core/provider_counting.h"
#include "npac/npacd/core/provider_heartbeats.h"
#include "npac/npacd/core/provider_host.h"
#include "npac/npacd/core/provider_links.h"
#include "npac/npacd/core/provider_recovery.h"
#include "npac/npacd/core/provider_throttle.h"
#include "npac/npacd/core/provider_view.h"
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
  // What the core asks of its owner (provider_host.h).
  using Host = ProviderHost;

  ProviderCore(std::string spid, const common::TimeSource& clock, tunables::TunableRegistry& registry,
               DeliveryStore& store, Host& host);
  ProviderCore(const ProviderCore&) = delete;
  ProviderCore& operator=(const ProviderCore&) = delete;

  std::vector<associations::LiveAssociation> live() const { return egress_->logical().live(); }

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
  // lnpRecoveryRequest / lnpRecoveryComplete (ProviderRecovery); false if `invoke` is not
  // one of them (the manager brokers it to the application).
  bool onProviderAction(db::AssociationId id, const cmip::CmipInvoke& invoke);
  // The PDU sent with tag `tag` (an unconfirmed message or an answer) was written.
  void onWritten(db::AssociationId id, std::int64_t tag);

  // ---- the queue ----
  // New rows were committed for this provider (recovery mode holds them).
  void onSubmitted(const std::vector<db::MessageId>& ids);
  // A delivery round in two halves, so that the rounds of several providers due in one
  // turn commit their `sent` rows in ONE transaction (DeliveryScheduler::deliverDue):
  // decideRound() places queued rows on associations, records their progress in the
  // store without committing it and holds their PDUs; after the store's flush,
  // finishRound() lets them leave and schedules what follows (an abort, the next round).
  struct Round {
    bool decided = false;                     // rows were read (else nothing follows)
    std::optional<db::AssociationId> failed;  // a PDU its association refused: abort it
    bool throttled = false;                   // stopped by the egress throttle
    int group_level = 0;                      // held by the provider's throttle group (1..3)
    bool again = false;                       // a full batch left: more may be queued
  };
  Round decideRound();
  void finishRound(const Round& round);

  // ---- time and tunables ----
  void tick();
  // congestion_window, response_timeout, retry_attempts, egress_policy, throttle_* changed.
  void applyTunables();
  // SRR turned off for this provider (NANC 353): the earliest association per mask stays.
  void onSrrOff();

  // ---- operators ----
  // What operators see of this provider: its queue and why messages wait, its
  // associations, its figures for GET /metrics, its latest picks (provider_view.h). Made
  // on demand; use it at once.
  ProviderView view();
  // Counting for GET /metrics (core_metrics.h), on from construction; off drops the
  // counters, and no increment or clock read is made for them afterwards.
  void setCounting(bool on);
  // How many associations are bound (0: none, whatever is queued).
  std::size_t associationCount() const { return links_.all().size(); }

 private:
  // decideRound() in parts: one queued row placed (false: an association refused its PDU,
  // the round stops). A function whose oldest row could not be placed holds back only its
  // own later rows.
  struct RoundDraft {
    std::map<db::AssociationId, std::vector<db::MessageId>> sent;
    std::optional<db::AssociationId> failed;
    std::uint32_t blocked = 0;  // bits of the functions held back
    bool throttled = false;
    int group_level = 0;
    bool placed_any = false;
  };
  bool placeRow(const db::QueuedMessage& row, associations::TimePoint now, RoundDraft& draft);

  std::string spid_;
  const common::TimeSource& clock_;
  tunables::TunableRegistry& registry_;
  DeliveryStore& store_;
  Host& host_;
  std::unique_ptr<associations::ProviderEgress> egress_;  // built first: the parts use it
  ProviderCounting counting_;      // GET /metrics, and the latest PDUs written
  ProviderLinks links_;            // its associations and what is written on them
  ProviderThrottle throttle_;      // its own throttle_* limits and its throttle group's
  ProviderHeartbeats heartbeats_;  // NANC 404, per association
  ProviderRecovery recovery_;      // NANC 351 SWIM
};

}  // namespace npac::npacd
