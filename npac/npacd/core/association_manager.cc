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
    : CoreFacade(*this),
      io_(io),
      timers_(timers != nullptr ? *timers : asio_timers_),
      db_(db),
      writer_(writer),
      registry_(registry),
      clock_(clock),
      store_(progress_db,
             [this] {
               if (flush_scheduled_) return;
               flush_scheduled_ = true;
               asio::post(io_, [this] {
                 flush_scheduled_ = false;
                 store_.flush();
               });
             }),
      leases_(db, clock, registry),
      purge_(db, registry, clock),
      listener_(io, timers_, registry, clock,
                [this](asio::ip::tcp::socket socket, as::Nsap nsap, std::string peer) {
                  enableKeepalive(socket);
                  return std::make_shared<Session>(std::move(socket), nsap, std::move(peer), *this,
                                                   timers_.makeTimer());
                }),
      timer_(timers_.makeTimer()),
      purge_timer_(timers_.makeTimer()) {
  installFence();
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
            for (auto& [name, c] : cores_) {
              if (!registry_.get(tunables::kSrr, name)) c->onSrrOff();
            }
          } else if (ProviderCore* c = core(spid)) {
            c->onSrrOff();
          }
        });
      }));
  for (const char* name : kLiveTunables) {
    tunables::TunableRegistry::Subscription subscription;
    tunables::Status subscribed = registry_.subscribe(
        name, "", [this](const tunables::TunableRegistry::Change& change) {
          asio::post(io_, [this, spid = change.spid] {
            for (auto& [name, c] : cores_) {
              if (spid.empty() || spid == name) c->applyTunables();
            }
          });
        },
        &subscription);
    if (subscribed.isOk()) subscriptions_.push_back(std::move(subscription));
  }
}

AssociationManager::~AssociationManager() { subscriptions_.clear(); }

bool AssociationManager::listen(const asio::ip::tcp::endpoint& endpoint, std::string* error) {
  if (!listener_.listen(endpoint, error)) return false;
  armTimer();
  return true;
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

ProviderCore* AssociationManager::core(const std::string& spid) {
  auto it = cores_.find(spid);
  return it == cores_.end() ? nullptr : it->second.get();
}

ProviderCore& AssociationManager::coreFor(const std::string& spid) {
  auto& slot = cores_[spid];
    if (!slot) {
    ProviderCore::Host& host = *this;  // a private base: converted here, not in make_unique
    slot = std::make_unique<ProviderCore>(spid, clock_, registry_, store_, host);
    slot->setCounting(counting_);
  }
  return *slot;
}

void AssociationManager::wakeDelivery(const std::string& spid) {
  if (stopping_ || !delivery_scheduled_.insert(spid).second) return;
  delivery_due_.push_back(spid);
  if (delivery_due_.size() == 1) asio::post(io_, [this] { deliverDue(); });
}

void AssociationManager::deliverDue() {
  std::vector<std::string> due;
  due.swap(delivery_due_);
  std::vector<std::pair<std::string, ProviderCore::Round>> rounds;
  rounds.reserve(due.size());
  for (std::string& spid : due) {
    delivery_scheduled_.erase(spid);
    if (ProviderCore* c = core(spid)) rounds.emplace_back(std::move(spid), c->decideRound());
  }
  store_.flush();  // every round's rows read `sent` before any of their PDUs leaves
  for (const auto& [spid, round] : rounds) {
    if (ProviderCore* c = core(spid)) c->finishRound(round);
  }
}

void AssociationManager::wakeDeliveryAfter(const std::string& spid, as::Duration delay) {
  auto& timer = delivery_timers_[spid];
  if (!timer) timer = timers_.makeTimer();
  if (timer->armed()) return;  // the earlier wake comes first
  timer->after(std::chrono::ceil<std::chrono::milliseconds>(delay), [this, spid] { wakeDelivery(spid); });
}

void AssociationManager::installFence() {
  DeliveryStore::Fence fence;
  fence.owner = leases_.node();
  fence.epoch_of = [this](const std::string& spid) { return leases_.epoch(spid); };
  fence.on_fenced = [this](const std::string& spid, const db::Status& why) {
    // Not from inside the store's flush: aborting records progress again.
    asio::post(io_, [this, spid, why] { providerLost(spid, why); });
  };
  store_.setFence(std::move(fence));
}

void AssociationManager::setNode(const std::string& node) {
  leases_.setNode(node);
  installFence();
}

bool AssociationManager::handOffElsewhere(const std::shared_ptr<Session>& session, const std::string& spid) {
  AssociationManager& owner = route_.ownerOf(spid);
  if (&owner == this) return false;
  listener_.forget(*session);
  session->handOff([&owner](Session::Handoff handoff) { owner.adopt(std::move(handoff)); });
  return true;
}

void AssociationManager::leaseTaken(const std::string& spid) {
  store_.forgetReady(spid);  // what the store kept of the provider is read again
  wakeDelivery(spid);        // rows queued meanwhile (or re-queued by the takeover) leave now
}

std::int64_t AssociationManager::nextLocalAssociationId() {
  return route_.nextAssociationId(&next_association_id_);
}

void AssociationManager::onConnectIndication(const std::shared_ptr<Session>& session,
                                             const cmip::ConnectIndication& indication) {
  admission_.onConnectIndication(session, indication);
}

void AssociationManager::providerLost(const std::string& spid, const db::Status& why) {
  const bool was_held = leases_.held(spid);
  leases_.forget(spid);
  store_.forgetReady(spid);
  ProviderCore* c = core(spid);
  const std::size_t aborted = c != nullptr ? c->abortAll("provider lease lost to another npacd node") : 0;
  // Said once: the writes refused after the abort (their associations' losses) add nothing.
  if (!was_held && aborted == 0) return;
  spdlog::error("provider {}: this node ('{}') lost its lease — {}; {} association(s) aborted, nothing more "
                "is sent or recorded for it here",
                spid, leases_.node(), why.message(), aborted);
}

void AssociationManager::tendLeases() {
  store_.flush();  // what was recorded under a lease commits before it is released
  std::vector<std::string> unbound;
  for (const std::string& spid : leases_.heldSpids()) {
    ProviderCore* c = core(spid);
    if (c == nullptr || !c->bound()) unbound.push_back(spid);
  }
  leases_.release(unbound);
  std::vector<std::string> paused;
  for (const std::string& spid : leases_.heldSpids()) {
    if (!leases_.valid(spid)) paused.push_back(spid);
  }
  for (ProviderLeases::Lost& lost : leases_.renewDue()) providerLost(lost.spid, lost.why);
  for (const std::string& spid : paused) {
    if (leases_.valid(spid)) wakeDelivery(spid);  // renewed again: what waited leaves
  }
}

void AssociationManager::tick() {
  listener_.tick(clock_.now());  // bind_timeout
  if (!store_.healthy() && store_.retry()) {
    // Writes succeed again: every provider delivers what waited meanwhile.
    for (auto& [spid, c] : cores_) wakeDelivery(spid);
  }
  tendLeases();
  for (auto& [spid, c] : cores_) c->tick();
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

void AssociationManager::adopt(Session::Handoff handoff) {
  asio::post(io_, [this, handoff = std::make_shared<Session::Handoff>(std::move(handoff))]() mutable {
    const int fd = handoff->fd;
    boost::system::error_code ec;
    asio::ip::tcp::socket socket(io_);
    socket.assign(handoff->protocol_v6 ? asio::ip::tcp::v6() : asio::ip::tcp::v4(), fd, ec);
    if (ec) {
      spdlog::warn("association from {}: cannot take over its connection on core thread {}: {}",
                   handoff->peer, route_.index(), ec.message());
      ::close(fd);
      return;
    }
    auto session = std::make_shared<Session>(std::move(socket), std::move(*handoff), *this, timers_.makeTimer());
    session->resume();
  });
}

void AssociationManager::postWake(std::string spid) {
  asio::post(io_, [this, spid = std::move(spid)] { wakeDelivery(spid); });
}

void AssociationManager::postSubmittedElsewhere(std::string spid) {
  asio::post(io_, [this, spid = std::move(spid)] {
    store_.forgetReady(spid);
    wakeDelivery(spid);
  });
}

void AssociationManager::onRose(const std::shared_ptr<Session>& session, cmip::RoseApdu apdu) {
  ProviderCore* provider = core(session->spid);
  if (provider == nullptr) return;
  const db::AssociationId id = session->associationId();
  provider->onReceived(id);
  if (!std::holds_alternative<cmip::RoseInvoke>(apdu)) {
    provider->onAnswer(id, apdu);
    return;
  }
  auto& invoke = std::get<cmip::RoseInvoke>(apdu);
  auto decoded = cmip::fromRose(invoke);
  if (!decoded.isOk()) {
    rejectInvoke(*session, invoke, decoded.status());
    return;
  }
  if (provider->onProviderAction(id, *decoded)) return;
  InboundRequest request;
  request.spid = session->spid;
  request.association_id = id;
  request.function_mask = session->function_mask;
  request.nsap_hex = session->nsap().toHex();
  request.invoke_id = invoke.invokeId;
  request.opcode = static_cast<cmip::CmipOpcode>(invoke.opcode.localValue());
  request.pdu = cmip::encodeRoseApdu(apdu);
  request.received_at = clock_.wallMs();
  if (AssociationManager& home = route_.inboundHome(); &home != this) {
    home.postInbound(std::move(request));  // one place the application polls
    return;
  }
  inbound_.add(std::move(request));
}

void AssociationManager::postInbound(InboundRequest request) {
  asio::post(io_, [this, request = std::move(request)]() mutable { inbound_.add(std::move(request)); });
}

void AssociationManager::rejectInvoke(Session& session, const cmip::RoseInvoke& invoke,
                                      const cmip::Status& why) {
  // An operation CMIP does not define, or an argument not of its operation's type, is
  // answered at once with a ROSE Reject (X.880 InvokeProblem; X.711 leaves no other
  // answer for an Invoke it cannot decode) and never reaches the application: nobody
  // there could answer it. The association stays up.
  const cmip::RoseReject reject = cmip::rejectInvoke(invoke, why);
  const std::string opcode = invoke.opcode.isLocal()
                                 ? std::to_string(invoke.opcode.localValue())
                                 : std::get<cmip::Oid>(invoke.opcode.value).toString();
  spdlog::warn("SPID {} association {}: invoke id {} opcode {} rejected ({}): {}", session.spid,
               session.associationId(), invoke.invokeId, opcode,
               cmip::rejectProblemName(reject.kind, reject.problem), why.toString());
  session.sendRoseEncoded(cmip::encodeRoseApdu(cmip::RoseApdu{reject}));
}

void AssociationManager::onWritten(const std::shared_ptr<Session>& session, std::int64_t tag) {
  if (ProviderCore* provider = core(session->spid)) provider->onWritten(session->associationId(), tag);
}

void AssociationManager::onClosed(const std::shared_ptr<Session>& session,
                                  const std::string& reason, bool orderly) {
  logEvent(orderly ? db::AssociationEventKind::kRelease : db::AssociationEventKind::kAbort,
           *session, reason);
  spdlog::info("association {} {}: SPID {} NSAP {} mask {}: {}", session->associationId(),
               orderly ? "released" : "aborted", session->spid, session->nsap().toHex(),
               as::FunctionMask(static_cast<std::uint8_t>(session->function_mask)).toString(),
               reason);
  if (ProviderCore* provider = core(session->spid)) provider->onLost(session->associationId());
}

void AssociationManager::logEvent(db::AssociationEventKind kind, const Session& session,
                                  const std::string& reason, db::AssociationId id) {
  db::AssociationEvent event;
  event.at = clock_.wallMs();
  event.kind = kind;
  event.spid = session.spid;
  event.nsap.assign(session.nsap().octets().begin(), session.nsap().octets().end());
  event.association_id = id != 0 ? id : session.associationId();
  event.function_mask = session.function_mask;
  event.recovery_mode = session.recovery_mode;
  if (kind != db::AssociationEventKind::kBind) event.bound_at = session.bound_at_ms;
  event.reason = reason;
  db::Status status = db::AssociationLogStore(db_).append(event).status();
  if (!status.isOk() && !db::isStorageFailure(status)) {
    spdlog::error("association log: {}", status.toString());
  }
}

void AssociationManager::shutdown(std::function<void()> done) {
  asio::post(io_, [this, done = std::move(done)] {
    stopping_ = true;
    listener_.stop("npacd shutting down");
    timer_->cancel();
    purge_timer_->cancel();
    purge_continuing_ = false;
    for (auto& [spid, timer] : delivery_timers_) timer->cancel();
    store_.flush();
    inbound_.stop();
    // Drain: no new PDU leaves; each association is released (RLRQ) once nothing is
    // outstanding on it, or at kDrainTimeout whatever remains; the release timeout then
    // closes what did not answer. Done as soon as every association is gone.
    for (auto& [spid, c] : cores_) c->releaseAll(kReleaseShutdown);
    const auto drain_deadline = clock_.now() + kDrainTimeout;
    const auto final_deadline = drain_deadline + kReleaseTimeout + std::chrono::milliseconds(200);
    std::shared_ptr<common::Timer> tick = timers_.makeTimer();
    auto step = std::make_shared<std::function<void()>>();
    *step = [this, tick, step, done, drain_deadline, final_deadline] {
      const auto now = clock_.now();
      bool any = false;
      for (auto& [spid, c] : cores_) {
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
