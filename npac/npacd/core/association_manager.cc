#include "npac/npacd/core/association_manager.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <unistd.h>

#include <algorithm>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "db/association_log_store.h"
#include "db/outbound_queue.h"
#include "db/statement.h"
#include "db/storage_health.h"
#include "npac/npacd/core/session_link.h"
#include "tunables/catalogue.h"

namespace npac::npacd {
namespace asio = boost::asio;
namespace as = npac::associations;

namespace {

// TCP keepalive on every association (NANC 301), so a peer that vanished without a FIN or
// RST (power loss, a dropped route) is noticed even when heartbeats are off and nothing is
// outstanding: probes after kKeepaliveIdle of silence, every kKeepaliveInterval, and the
// connection is reset after kKeepaliveProbes unanswered ones (~110 s in all).
void enableKeepalive(asio::ip::tcp::socket& socket) {
  boost::system::error_code ec;
  socket.set_option(asio::socket_base::keep_alive(true), ec);
  if (ec) {
    spdlog::warn("TCP keepalive could not be enabled: {}", ec.message());
    return;
  }
  const int fd = socket.native_handle();
  const int idle = static_cast<int>(kKeepaliveIdle.count());
  const int interval = static_cast<int>(kKeepaliveInterval.count());
  const int probes = kKeepaliveProbes;
  if (setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle) != 0 ||
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval) != 0 ||
      setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes) != 0) {
    spdlog::warn("TCP keepalive timers could not be set; the system defaults apply");
  }
}

// The tunables a ProviderCore applies live (applyTunables).
constexpr const char* kLiveTunables[] = {
    "congestion_window",   "response_timeout",     "retry_attempts",     "egress_policy",
    "throttle_max_rate",   "throttle_max_pending", "throttle_onset_1",   "throttle_abatement_1",
    "throttle_onset_2",    "throttle_abatement_2", "throttle_onset_3",   "throttle_abatement_3",
    "throttle_min_abatement_time"};

}  // namespace

AssociationManager::AssociationManager(asio::io_context& io, db::Database& db,
                                       db::Database& progress_db, db::QueueWriter& writer,
                                       tunables::TunableRegistry& registry, const common::TimeSource& clock,
                                       common::TimerFactory* timers)
    : io_(io),
      timers_(timers != nullptr ? *timers : asio_timers_),
      db_(db),
      writer_(writer),
      registry_(registry),
      clock_(clock),
      store_(progress_db, [this] { delivery_.flushSoon(); }),
      leases_(db, clock, registry),
      delivery_(io_, timers_, store_, [this](const std::string& spid) { return providers_.find(spid); }),
      purge_(db, registry, clock),
      listener_(io, timers_, registry, clock,
                [this](asio::ip::tcp::socket socket, as::Nsap nsap, std::string peer) {
                  enableKeepalive(socket);
                  return std::make_shared<Session>(std::move(socket), nsap, std::move(peer), router_,
                                                   timers_.makeTimer());
                }),
      timer_(timers_.makeTimer()),
      purge_timer_(timers_.makeTimer()) {
  providers_.installFence();
  // Rows this node's writer committed reach the store in memory (announceSubmitted); the
  // writer's mark tells a load which of them its snapshot already holds.
  store_.setCommittedThrough([this] { return writer_.committedThrough(); });
  subscribeTunables();
}

void AssociationManager::subscribeTunables() {
  subscriptions_.push_back(registry_.subscribe(
      tunables::kSrr, "", [this](const tunables::TunableRegistry::Change& change) {
        const bool* value = std::get_if<bool>(&change.new_value);
        const bool on = value != nullptr && *value;
        asio::post(io_, [this, spid = change.spid, on] {
          if (on) return;  // SRR on: new binds are accepted at once (the BindGate reads it)
          if (spid.empty()) {
            for (auto& [name, c] : providers_.all()) {
              if (!registry_.get(tunables::kSrr, name)) c->onSrrOff();
            }
          } else if (ProviderCore* c = providers_.find(spid)) {
            c->onSrrOff();
          }
        });
      }));
  for (const char* name : kLiveTunables) {
    tunables::TunableRegistry::Subscription subscription;
    tunables::Status subscribed = registry_.subscribe(
        name, "", [this](const tunables::TunableRegistry::Change& change) {
          asio::post(io_, [this, spid = change.spid] {
            for (auto& [name, c] : providers_.all()) {
              if (spid.empty() || spid == name) c->applyTunables();
            }
          });
        },
        &subscription);
    if (subscribed.isOk()) subscriptions_.push_back(std::move(subscription));
  }
}

AssociationManager::~AssociationManager() { subscriptions_.clear(); }

Status AssociationManager::listen(const asio::ip::tcp::endpoint& endpoint) {
  Status listening = listener_.listen(endpoint);
  if (listening.isOk()) armTimer();
  return listening;
}

void AssociationManager::armTimer() {
  timer_->after(kTimerPeriod, [this] {
    if (stopping_) return;
    tick();
    armTimer();
  });
}

std::uint16_t AssociationManager::port() const { return listener_.port(); }

db::Status AssociationManager::recoverInterrupted() {
  // Association ids are unique across runs (the queue and the log remember them) and fit
  // the dispatch core's 32-bit member id.
  auto last = db_.prepare(
      "SELECT MAX(m) FROM (SELECT MAX(association_id) AS m FROM outbound_queue "
      "UNION ALL SELECT MAX(association_id) FROM delivery_progress "
      "UNION ALL SELECT MAX(association_id) FROM association_log) AS highest");
  if (!last.isOk()) return last.status();
  auto has_row = last->step();
  if (!has_row.isOk()) return has_row.status();
  if (*has_row) next_association_id_ = last->columnInt64(0);
  if (db_.backend() == db::Backend::kPostgres) {
    // Other nodes may be delivering from this database right now: their rows in flight
    // are theirs. Each provider's in-flight rows are queued again when a node takes its
    // lease (db/lease_store.h), this node after a restart included.
    return db::Status::ok();
  }
  auto requeued = db::OutboundQueue(db_).requeueAllInFlight();
  if (!requeued.isOk()) return requeued.status();
  const std::size_t total = *requeued;
  if (total > 0) spdlog::info("{} message(s) in flight at the last stop are queued again", total);
  return db::Status::ok();
}

void AssociationManager::setCounting(bool on) {
  admission_.setCounting(on);
  providers_.setCounting(on);
}

void AssociationManager::setNode(const std::string& node) {
  leases_.setNode(node);
  providers_.installFence();
}

bool AssociationManager::handOffElsewhere(const std::shared_ptr<Session>& session, const std::string& spid) {
  AssociationManager& owner = route_.ownerOf(spid);
  if (&owner == this) return false;
  listener_.forget(*session);
  session->handOff([&owner](Session::Handoff handoff) { owner.inbox().adopt(std::move(handoff)); });
  return true;
}

std::int64_t AssociationManager::nextLocalAssociationId() {
  return route_.nextAssociationId(&next_association_id_);
}

void AssociationManager::logEvent(db::AssociationEventKind kind, const Session& session,
                                  const std::string& reason, db::AssociationId id) {
  router_.logEvent(kind, session, reason, id);
}

void AssociationManager::tick() {
  listener_.tick(clock_.now());  // bind_timeout
  if (!store_.healthy() && store_.retry()) {
    // Writes succeed again: every provider delivers what waited meanwhile.
    providers_.wakeAll();
  }
  providers_.tendLeases();
  for (auto& [spid, c] : providers_.all()) c->tick();
  if (route_.index() == 0) purge();  // one purge for the file, whatever the threads
}

// A purge run, and while it leaves a backlog the next one after its pause
// (RetentionPurge::continueAfter): between runs the core thread serves everyone else.
void AssociationManager::purge() {
  purge_.runIfDue();
  const std::optional<as::Duration> pause = purge_.continueAfter();
  if (!pause || purge_continuing_ || stopping_) return;
  purge_continuing_ = true;
  purge_timer_->after(std::chrono::ceil<std::chrono::milliseconds>(*pause), [this] {
    purge_continuing_ = false;
    purge();
  });
}

void AssociationManager::shutdown(std::function<void()> done) {
  asio::post(io_, [this, done = std::move(done)] {
    stopping_ = true;
    delivery_.stop();  // no wake is taken any more; the delayed ones are cancelled
    listener_.stop("npacd shutting down");
    timer_->cancel();
    purge_timer_->cancel();
    purge_continuing_ = false;
    store_.flush();
    inbound_.stop();
    // Drain: no new PDU leaves; each association is released (RLRQ) once nothing is
    // outstanding on it, or at kDrainTimeout whatever remains; the release timeout then
    // closes what did not answer. Done as soon as every association is gone.
    for (auto& [spid, c] : providers_.all()) c->releaseAll(kReleaseShutdown);
    const auto drain_deadline = clock_.now() + kDrainTimeout;
    const auto final_deadline = drain_deadline + kReleaseTimeout + std::chrono::milliseconds(200);
    std::shared_ptr<common::Timer> tick = timers_.makeTimer();
    auto step = std::make_shared<std::function<void()>>();
    *step = [this, tick, step, done, drain_deadline, final_deadline] {
      const auto now = clock_.now();
      bool any = false;
      for (auto& [spid, c] : providers_.all()) {
        if (c->associationCount() == 0) continue;
        any = true;
        c->releaseReady(now >= drain_deadline);
      }
      store_.flush();
      if (!any || now >= final_deadline) {
        inbound_.reportUnanswered();
        // Another node may take these providers at once (db/lease_store.h).
        leases_.release(leases_.heldSpids());
        auto finished = done;  // a copy: clearing *step destroys this lambda's captures
        *step = nullptr;       // break the self-reference
        finished();
        return;
      }
      tick->after(std::chrono::milliseconds(20), [step] {
        if (*step) (*step)();
      });
    };
    (*step)();
  });
}

}  // namespace npac::npacd
