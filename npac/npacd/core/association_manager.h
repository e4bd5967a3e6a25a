// AssociationManager: npacd's core above the providers on one core thread — it accepts
// connections (Listener), hands each AARQ to its BindAdmission (bind_admission.h: the
// admission role), routes every event of a bound association by SPID to that provider's
// ProviderCore (provider_core.h), hands the providers' own requests to its InboundBroker
// (inbound_broker.h) for the NPAC application (pollInbound/respond), and runs the
// periodic tick and the retention purge (RetentionPurge). The CoreService the admin API
// calls is its base, CoreFacade (core_facade.h): the API's calls live there, posted onto
// this manager's thread.
//
// Everything of one provider's logical association — sessions, invoke ids, heartbeats,
// delivery, timeouts, SRR, recovery, throttling — lives in its ProviderCore; nothing here
// is shared between providers except the DeliveryStore (one database: when it stops
// taking writes, every provider stops taking new deliveries, see delivery_store.h).
//
// Threading: every method except CoreFacade's runs on the core io_context thread, which
// also runs every Session; no locks. CoreFacade's methods are called from the admin API's
// thread and post onto the core io_context (submit() hands its rows to the QueueWriter
// directly, which is thread-safe). The QueueWriter completes on its own thread; its
// completions are posted back as well.
// With npacd --threads N there are N managers, one per core thread, joined by CoreShards
// (core_shards.h), which decides where each provider lives; each manager's ShardRoute
// (shard_route.h) names the others, and the thread-safe methods under "Sharding" are how
// they reach each other.
// Time: the injected common::TimeSource (common/time_source.h); tick() is also callable
// by a test.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "associations/bind_gate.h"
#include "associations/outstanding.h"
#include "common/time_source.h"
#include "db/association_log_store.h"
#include "db/database.h"
#include "db/queue_writer.h"
#include "npac/npacd/asio_timers.h"
#include "npac/npacd/core/bind_admission.h"
#include "npac/npacd/core/core_facade.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/inbound_broker.h"
#include "npac/npacd/core/listener.h"
#include "npac/npacd/core/provider_core.h"
#include "npac/npacd/core/provider_leases.h"
#include "npac/npacd/core/retention_purge.h"
#include "npac/npacd/core/session.h"
#include "npac/npacd/core/shard_route.h"
#include "tunables/registry.h"

namespace npac::npacd {

class CoreShards;

// TCP keepalive on every association (NANC 301: "TCP keepalive is on as well").
inline constexpr std::chrono::seconds kKeepaliveIdle{60};
inline constexpr std::chrono::seconds kKeepaliveInterval{10};
inline constexpr int kKeepaliveProbes = 5;
// Period of the tick: heartbeats, response timeouts, bind timeouts, storage retry.
inline constexpr std::chrono::milliseconds kTimerPeriod{500};
// Graceful shutdown: how long associations may keep answering what is outstanding
// before they are released anyway.
inline constexpr std::chrono::seconds kDrainTimeout{2};

class AssociationManager : public CoreFacade,
                           public SessionOwner,
                           private ProviderCore::Host,
                           private BindAdmission::Host {
 public:
  // `db` and `progress_db` are the core's own connections (core thread only): `db` for
  // decisions that must be as durable as --durability (bind sequence numbers, the
  // association log, the retention purge), `progress_db` for the outbound queue's
  // delivery progress (sent, acknowledged, failed), which may run with
  // synchronous=NORMAL: losing progress only repeats a delivery. Both may be the same
  // connection. `clock` outlives the manager. `timers` (common/timer.h) makes every timer
  // the core arms, on `io`'s thread; unset, AsioTimers on `io` (asio_timers.h).
  AssociationManager(boost::asio::io_context& io, db::Database& db, db::Database& progress_db,
                     db::QueueWriter& writer, tunables::TunableRegistry& registry,
                     const common::TimeSource& clock, common::TimerFactory* timers = nullptr);
  ~AssociationManager() override;

  // Listens for associations on `endpoint`; false (and `*error`) if it cannot bind.
  bool listen(const boost::asio::ip::tcp::endpoint& endpoint, std::string* error);
  std::uint16_t port() const;
  // The acceptor and the connections not bound yet (their counters).
  const Listener& listener() const { return listener_; }
  // Startup: messages left "sent" by a previous run go back to queued (nothing lost
  // across kill -9). Call before io runs, after the instance lock is held.
  db::Status recoverInterrupted();
  // Graceful shutdown: stop accepting, release every association after draining
  // (bounded), then `done` on the core thread.
  void shutdown(std::function<void()> done);
  // One pass of everything time-driven, at clock.now(): bind timeouts, storage retry,
  // each provider's heartbeats / timeouts / throttle, the retention purge. The real
  // timer calls it every kTimerPeriod.
  void tick();
  // The retention purge (shard 0): a run now if due, the next while a backlog is left.
  void purge();

  // Counting for GET /metrics (core_metrics.h), on by default; npacd --metrics off turns
  // it off before io runs, and nothing is then counted (the cost of counting, measured by
  // bench/npacd_load.sh). Core thread, or before io runs.
  void setCounting(bool on);
  // This npacd node's name (npacd --node): the owner its provider leases carry
  // (provider_leases.h, docs/OPERATIONS.md "Two sites"). Before io runs.
  void setNode(const std::string& node);
  const ProviderLeases& leases() const { return leases_; }
  // The provisioned egress throttle groups (throttle_groups.h), shared by every core
  // thread; none by default. Before io runs.
  void setThrottleGroups(const ThrottleGroups* groups) { throttle_groups_ = groups; }

  // Sharding (npacd --threads N, core_shards.h). joinShards() before io runs: this
  // manager is core thread `index` of `shards`.
  void joinShards(CoreShards& shards, std::size_t index) { route_.join(shards, index); }
  std::size_t shardIndex() const { return route_.index(); }
  // The periodic tick without listening: a core thread other than the listener's.
  void startTimer() { armTimer(); }
  // The highest association id used before this run (after recoverInterrupted()).
  std::int64_t lastAssociationId() const { return next_association_id_; }
  // Thread-safe: each posts onto this manager's io_context.
  void adopt(Session::Handoff handoff);  // a connection handed over by another core thread
  void announceSubmitted(std::vector<db::QueuedMessage> rows);  // committed rows, their PDUs moved
  void announceAnswer(db::QueuedMessage row);  // a committed answer to a provider's request
  void postInbound(InboundRequest request);  // thread 0: another thread's provider asks
  void postWake(std::string spid);           // deliver for `spid` soon
  // Two sites (db/notification_listener.h): another node committed messages for `spid`;
  // what the store keeps of its queue in memory misses them, so it is read again.
  void postSubmittedElsewhere(std::string spid);
  // Two sites: every bound provider delivers soon, every provider's queue read again from
  // the database (the notifications of a lost LISTEN connection are unknown).
  void postWakeAll();
  // Another node changed the provider: if it is bound here and now disabled, its
  // associations are released as if it had been disabled here.
  void postProviderChanged(std::string spid);

  // SessionOwner (core thread).
  void onConnectIndication(const std::shared_ptr<Session>& session,
                           const cmip::ConnectIndication& indication) override;
  void onRose(const std::shared_ptr<Session>& session, cmip::RoseApdu apdu) override;
  void onClosed(const std::shared_ptr<Session>& session, const std::string& reason,
                bool orderly) override;
  void onWritten(const std::shared_ptr<Session>& session, std::int64_t tag) override;

 private:
  friend class CoreFacade;  // the API's calls (core_facade.h) run on this thread, on this state

  // The subscriptions to the tunables the providers' cores apply live (constructor).
  void subscribeTunables();

  // ProviderCore::Host.
  void wakeDelivery(const std::string& spid) override;
  // The delivery rounds due (delivery_due_): each decided, then ONE commit of every
  // round's `sent` rows, then each round's PDUs leave (ProviderCore::decideRound) — a
  // broadcast woke hundreds of providers in one turn and cost a commit each.
  void deliverDue();
  void wakeDeliveryAfter(const std::string& spid, associations::Duration delay) override;
  bool mayDeliver(const std::string& spid) const override { return leases_.valid(spid); }
  std::shared_ptr<ThrottleGroup> throttleGroupOf(const std::string& spid) const override {
    return throttle_groups_ != nullptr ? throttle_groups_->groupOf(spid) : nullptr;
  }

  // Leases (tick): renew what is due, release those of providers with no association
  // here, abort the providers whose lease another node took.
  void tendLeases();
  void providerLost(const std::string& spid, const db::Status& why) override;
  void installFence();

  // BindAdmission::Host.
  bool stopping() const override { return stopping_; }
  bool handOffElsewhere(const std::shared_ptr<Session>& session, const std::string& spid) override;
  ProviderCore* core(const std::string& spid) override;  // none if it never bound in this run
  ProviderCore& coreFor(const std::string& spid) override;  // made on first bind
  void leaseTaken(const std::string& spid) override;
  void forgetUnbound(const Session& session) override { listener_.forget(session); }
  std::int64_t nextLocalAssociationId() override;
  void armTimer();
  // A provider's Invoke that does not decode (cmip::fromRose refused it with `why`): ROSE
  // Reject on its association, one log line; it is not forwarded to the application.
  void rejectInvoke(Session& session, const cmip::RoseInvoke& invoke, const cmip::Status& why);
  // `id`: the association's, when the row is written before accept() gave it to the
  // session (a bind's row, written in the bind's transaction).
  void logEvent(db::AssociationEventKind kind, const Session& session, const std::string& reason,
                db::AssociationId id) override;
  void logEvent(db::AssociationEventKind kind, const Session& session, const std::string& reason) {
    logEvent(kind, session, reason, 0);
  }

  boost::asio::io_context& io_;
  AsioTimers asio_timers_{io_};
  common::TimerFactory& timers_;
  db::Database& db_;
  db::QueueWriter& writer_;
  tunables::TunableRegistry& registry_;
  const common::TimeSource& clock_;
  DeliveryStore store_;
  ProviderLeases leases_;
  const ThrottleGroups* throttle_groups_ = nullptr;  // setThrottleGroups
  RetentionPurge purge_;
  Listener listener_;
  std::unique_ptr<common::Timer> timer_;        // the tick
  std::unique_ptr<common::Timer> purge_timer_;  // the retention purge's next run while it catches up
  bool purge_continuing_ = false;          // purge_timer_ is armed
  std::map<std::string, std::unique_ptr<ProviderCore>> cores_;
  std::set<std::string> delivery_scheduled_;
  // The providers whose delivery round is due, in the order they were woken: one posted
  // handler (deliverDue) runs them all with one commit.
  std::vector<std::string> delivery_due_;
  std::map<std::string, std::unique_ptr<common::Timer>> delivery_timers_;
  bool flush_scheduled_ = false;
  std::int64_t next_association_id_ = 0;
  // Inbound requests from providers, for the NPAC application (thread 0 when sharded).
  InboundBroker inbound_{timers_};
  bool stopping_ = false;
  ShardRoute route_{*this};  // where the other core threads' managers are (none: one thread)
  std::vector<tunables::TunableRegistry::Subscription> subscriptions_;
  bool counting_ = true;  // metrics (core thread)
  BindAdmission admission_{io_, db_, registry_, clock_, leases_, *this};  // after leases_
};

}  // namespace npac::npacd
