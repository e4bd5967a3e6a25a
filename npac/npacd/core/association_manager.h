// AssociationManager: npacd's core above the providers on one core thread — it accepts
// connections (Listener), hands each AARQ to its BindAdmission (bind_admission.h: the
// admission role), routes every event of a bound association by SPID to that provider's
// ProviderCore (provider_core.h) and the providers' own requests to its InboundBroker
// (inbound_broker.h) for the NPAC application (pollInbound/respond), and runs the
// periodic tick, the retention purge (RetentionPurge) and the graceful shutdown. Its parts,
// each a type of its own:
//   - ProviderCores (provider_cores.h): the providers' cores by SPID, their host, and what
//     the provider leases mean for them (fence, renewals, a lost lease);
//   - DeliveryScheduler (delivery_scheduler.h): when they deliver — the wakes of one turn,
//     one commit for every due provider's round;
//   - SessionRouter (session_router.h): every Session's owner, routing its events;
//   - CoreInbox (core_inbox.h, inbox()): what other threads hand this one, posted;
//   - CoreFacade (core_facade.h, service()): the CoreService the admin API calls, posted.
//
// Everything of one provider's logical association — sessions, invoke ids, heartbeats,
// delivery, timeouts, SRR, recovery, throttling — lives in its ProviderCore; nothing here
// is shared between providers except the DeliveryStore (one database: when it stops
// taking writes, every provider stops taking new deliveries, see delivery_store.h).
//
// Threading: every method runs on the core io_context thread, which also runs every
// Session; no locks. The exceptions are service() and inbox(), whose methods are called
// from other threads (the admin API's, the QueueWriter's, another core thread) and post
// onto the core io_context (CoreService::submit hands its rows to the QueueWriter
// directly, which is thread-safe); the QueueWriter's completions are posted back as well.
// With npacd --threads N there are N managers, one per core thread, joined by CoreShards
// (core_shards.h), which decides where each provider lives; each manager's ShardRoute
// (shard_route.h) names the others, and their inboxes are how they reach each other.
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
#include "npac/npacd/core/core_inbox.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/delivery_scheduler.h"
#include "npac/npacd/core/delivery_store.h"
#include "npac/npacd/core/inbound_broker.h"
#include "npac/npacd/core/listener.h"
#include "npac/npacd/core/provider_core.h"
#include "npac/npacd/core/provider_cores.h"
#include "npac/npacd/core/provider_leases.h"
#include "npac/npacd/core/retention_purge.h"
#include "npac/npacd/core/session.h"
#include "npac/npacd/core/session_router.h"
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

class AssociationManager : private BindAdmission::Host {
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

  // Listens for associations on `endpoint`; kCannotListen if it cannot bind.
  Status listen(const boost::asio::ip::tcp::endpoint& endpoint);
  std::uint16_t port() const;
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
  // The provisioned egress throttle groups (throttle_groups.h), shared by every core
  // thread; none by default. Before io runs.
  void setThrottleGroups(const ThrottleGroups* groups) { providers_.setThrottleGroups(groups); }
  // The admin API's entry into this manager (core_facade.h): callable from any thread.
  CoreService& service() { return facade_; }

  // Sharding (npacd --threads N, core_shards.h). joinShards() before io runs: this
  // manager is core thread `index` of `shards`.
  void joinShards(CoreShards& shards, std::size_t index) { route_.join(shards, index); }
  // The periodic tick without listening: a core thread other than the listener's.
  void startTimer() { armTimer(); }
  // The highest association id used before this run (after recoverInterrupted()).
  std::int64_t lastAssociationId() const { return next_association_id_; }
  // The thread-safe entries other threads use (core_inbox.h): each posts onto this
  // manager's io_context.
  CoreInbox& inbox() { return inbox_; }

 private:
  // The subscriptions to the tunables the providers' cores apply live (constructor).
  void subscribeTunables();

  // BindAdmission::Host.
  bool stopping() const override { return stopping_; }
  bool handOffElsewhere(const std::shared_ptr<Session>& session, const std::string& spid) override;
  void forgetUnbound(const Session& session) override { listener_.forget(session); }
  std::int64_t nextLocalAssociationId() override;
  // The association log (SessionRouter::logEvent).
  void logEvent(db::AssociationEventKind kind, const Session& session, const std::string& reason,
                db::AssociationId id) override;
  void armTimer();

  boost::asio::io_context& io_;
  AsioTimers asio_timers_{io_};
  common::TimerFactory& timers_;
  db::Database& db_;
  db::QueueWriter& writer_;
  tunables::TunableRegistry& registry_;
  const common::TimeSource& clock_;
  DeliveryStore store_;
  ProviderLeases leases_;
  DeliveryScheduler delivery_;
  ProviderCores providers_{io_, clock_, registry_, store_, leases_, delivery_};
  RetentionPurge purge_;
  Listener listener_;
  std::unique_ptr<common::Timer> timer_;        // the tick
  std::unique_ptr<common::Timer> purge_timer_;  // the retention purge's next run while it catches up
  bool purge_continuing_ = false;          // purge_timer_ is armed
  std::int64_t next_association_id_ = 0;
  // Inbound requests from providers, for the NPAC application (thread 0 when sharded).
  InboundBroker inbound_{timers_};
  bool stopping_ = false;
  ShardRoute route_{*this};  // where the other core threads' managers are (none: one thread)
  std::vector<tunables::TunableRegistry::Subscription> subscriptions_;
  BindAdmission admission_{io_, db_, registry_, clock_, leases_, providers_, *this};  // after providers_
  SessionRouter router_{admission_, providers_, route_, inbound_, db_, clock_};  // every Session's owner
  CoreInbox inbox_{{io_, timers_, db_, store_, providers_, delivery_, inbound_, router_, route_}};
  CoreFacade facade_{{io_, writer_, inbox_, route_, providers_, inbound_, store_, listener_, admission_, stopping_}};
};

}  // namespace npac::npacd
