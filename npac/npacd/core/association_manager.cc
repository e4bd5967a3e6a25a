#include "npac/npacd/core/association_manager.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "associations/cmip_bind.h"
#include "associations/provisioning.h"
#include "db/association_log_store.h"
#include "db/statement.h"
#include "tunables/catalogue.h"

namespace npac::npacd {
namespace asio = boost::asio;
namespace as = npac::associations;

namespace {

as::TimePoint steadyNow() { return as::TimePoint::clock::now(); }

dispatch::PolicyConfig policyFor(tunables::EgressPolicy policy) {
  dispatch::PolicyConfig config;
  switch (policy) {
    case tunables::EgressPolicy::kRoundRobin: config.name = dispatch::kRoundRobinName; break;
    case tunables::EgressPolicy::kWeighted: config.name = dispatch::kWeightedName; break;
    case tunables::EgressPolicy::kLrtm: config.name = dispatch::kLrtmName; break;
  }
  return config;
}

std::optional<std::int32_t> invokeIdOf(const cmip::InvokeId& id) { return id.present; }

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

}  // namespace

as::AssociationFunction routingFunction(std::uint32_t mask) {
  for (unsigned bit = 0; bit < as::kFunctionCount; ++bit) {
    if (mask >> bit & 1u) return static_cast<as::AssociationFunction>(bit);
  }
  return as::AssociationFunction::kNotifications;
}

AssociationManager::AssociationManager(asio::io_context& io, db::Database& db,
                                       db::Database& progress_db, db::QueueWriter& writer,
                                       tunables::TunableRegistry& registry, db::Clock clock)
    : io_(io),
      db_(db),
      queue_(progress_db),
      writer_(writer),
      registry_(registry),
      clock_(std::move(clock)),
      acceptor_(io),
      timer_(io),
      next_association_id_(0) {
  subscriptions_.push_back(registry_.subscribe(
      tunables::kSrr, "", [this](const tunables::TunableRegistry::Change& change) {
        const bool* value = std::get_if<bool>(&change.new_value);
        const bool on = value != nullptr && *value;
        std::string spid = change.spid;
        asio::post(io_, [this, spid, on] {
          if (on) return;  // SRR on: new binds are accepted at once (decideBind reads it)
          auto it = providers_.find(spid);
          if (it == providers_.end() || !it->second.egress) return;
          as::SrrOffOutcome outcome = it->second.egress->onSrrTurnedOff(steadyNow());
          // The moved requests now belong to the association that stays; those that
          // could not be placed go back to queued (nothing lost, nothing sent twice
          // under another invoke id).
          for (const auto& t : outcome.retransmissions) move(it->second, t);
          requeue(spid, outcome.requeue);
          spdlog::info("SPID {}: SRR turned off, {} association(s) to release", spid,
                       outcome.plan.size());
          for (const auto& planned : outcome.plan) {
            auto s = it->second.sessions.find(static_cast<std::int64_t>(planned.release));
            if (s != it->second.sessions.end()) s->second->setReleaseReason(kReleaseSrrOff);
          }
          for (as::AssociationId ready : it->second.egress->readyToRelease()) {
            auto s = it->second.sessions.find(ready);
            if (s != it->second.sessions.end()) s->second->requestRelease();
          }
        });
      }));
  // Limits and the egress policy apply live to providers already bound.
  for (const char* name : {"congestion_window", "response_timeout", "retry_attempts", "egress_policy"}) {
    tunables::TunableRegistry::Subscription subscription;
    tunables::Status subscribed = registry_.subscribe(
        name, "", [this](const tunables::TunableRegistry::Change& change) {
          asio::post(io_, [this, spid = change.spid] { applyTunables(spid); });
        },
        &subscription);
    if (subscribed.isOk()) subscriptions_.push_back(std::move(subscription));
  }
}

void AssociationManager::applyTunables(const std::string& spid) {
  for (auto& [name, provider] : providers_) {
    if (!provider.egress || (!spid.empty() && spid != name)) continue;
    as::OutstandingLimits limits;
    limits.congestion_window =
        static_cast<std::uint32_t>(registry_.get(tunables::kCongestionWindow, name));
    limits.response_timeout = registry_.get(tunables::kResponseTimeout, name);
    limits.retry_attempts = static_cast<std::uint32_t>(registry_.get(tunables::kRetryAttempts, name));
    for (const as::MemberStateChange& change : provider.egress->outstanding().setLimits(limits)) {
      provider.egress->logical().setMemberState(change.association, change.state);
    }
    auto policy = policyFor(registry_.get(tunables::kEgressPolicy, name));
    if (policy.name != provider.egress->logical().policyName()) {
      if (auto error = provider.egress->logical().changePolicy(policy)) {
        spdlog::error("SPID {}: egress_policy {} refused; the current policy stays", name, policy.name);
      } else {
        spdlog::info("SPID {}: egress policy now {}", name, policy.name);
      }
    }
    scheduleDelivery(name);
  }
}

AssociationManager::~AssociationManager() { subscriptions_.clear(); }

bool AssociationManager::listen(const asio::ip::tcp::endpoint& endpoint, std::string* error) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    *error = "cannot listen on " + endpoint.address().to_string() + ":" +
             std::to_string(endpoint.port()) + ": " + ec.message();
    return false;
  }
  acceptLoop();
  timer_.expires_after(kTimerPeriod);
  timer_.async_wait([this](boost::system::error_code ec2) {
    if (!ec2) onTimer();
  });
  return true;
}

std::uint16_t AssociationManager::port() const {
  boost::system::error_code ec;
  auto endpoint = acceptor_.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

db::Status AssociationManager::recoverInterrupted() {
  // Association ids are unique across runs (the queue and the log remember them) and fit
  // the dispatch core's 32-bit member id.
  auto last = db_.prepare(
      "SELECT MAX(m) FROM (SELECT MAX(association_id) AS m FROM outbound_queue "
      "UNION ALL SELECT MAX(association_id) FROM association_log)");
  if (!last.isOk()) return last.status();
  auto has_row = last->step();
  if (!has_row.isOk()) return has_row.status();
  if (*has_row) next_association_id_ = last->columnInt64(0);
  auto statement = db_.prepare(
      "SELECT DISTINCT association_id FROM outbound_queue WHERE state = 'sent'");
  if (!statement.isOk()) return statement.status();
  std::vector<std::int64_t> associations;
  while (true) {
    auto row = statement->step();
    if (!row.isOk()) return row.status();
    if (!*row) break;
    associations.push_back(statement->columnInt64(0));
  }
  std::size_t total = 0;
  for (std::int64_t id : associations) {
    auto moved = queue_.requeueAssociation(id);
    if (!moved.isOk()) return moved.status();
    total += *moved;
  }
  if (total > 0) spdlog::info("{} message(s) in flight at the last stop are queued again", total);
  return db::Status::ok();
}

void AssociationManager::acceptLoop() {
  acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
    if (ec) {
      if (ec != asio::error::operation_aborted && !stopping_) acceptLoop();
      return;
    }
    boost::system::error_code peer_ec;
    auto peer = socket.remote_endpoint(peer_ec);
    auto nsap = as::Nsap::fromAddressString(peer.address().to_string());
    std::string peer_text = peer.address().to_string() + ":" + std::to_string(peer.port());
    if (peer_ec || !nsap.ok()) {
      spdlog::warn("connection from {} refused: no NSAP for that address", peer_text);
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      enableKeepalive(socket);
      auto session = std::make_shared<Session>(std::move(socket), nsap.value(), peer_text, *this);
      unbound_.insert(session);
      session->start(registry_.get(tunables::kBindTimeout));
      // Forget it once it bound or closed (bounded by the bind timeout).
      auto forget = std::make_shared<asio::steady_timer>(io_);
      forget->expires_after(registry_.get(tunables::kBindTimeout) + std::chrono::seconds(1));
      forget->async_wait([this, session, forget](boost::system::error_code) {
        unbound_.erase(session);
      });
    }
    if (!stopping_) acceptLoop();
  });
}

AssociationManager::Provider* AssociationManager::providerFor(const std::string& spid,
                                                              bool create) {
  auto it = providers_.find(spid);
  if (it != providers_.end() && it->second.egress) return &it->second;
  if (!create) return nullptr;
  as::OutstandingLimits limits;
  limits.congestion_window =
      static_cast<std::uint32_t>(registry_.get(tunables::kCongestionWindow, spid));
  limits.response_timeout = registry_.get(tunables::kResponseTimeout, spid);
  limits.retry_attempts = static_cast<std::uint32_t>(registry_.get(tunables::kRetryAttempts, spid));
  auto egress = as::ProviderEgress::create(
      spid, policyFor(registry_.get(tunables::kEgressPolicy, spid)), limits);
  if (!egress.ok()) {
    egress = as::ProviderEgress::create(spid, dispatch::PolicyConfig{}, limits);
    if (!egress.ok()) return nullptr;
  }
  Provider& provider = providers_[spid];
  provider.egress = std::move(egress).value();
  return &provider;
}

void AssociationManager::scheduleDelivery(const std::string& spid) {
  if (!delivery_scheduled_.insert(spid).second) return;
  asio::post(io_, [this, spid] {
    delivery_scheduled_.erase(spid);
    deliver(spid);
  });
}

bool AssociationManager::writeTransmission(Provider& provider, const as::Transmission& t,
                                           const std::vector<std::uint8_t>& queued_pdu,
                                           bool response) {
  auto session = provider.sessions.find(static_cast<std::int64_t>(t.association));
  if (session == provider.sessions.end()) return false;
  if (response) {
    // It carries the provider's invoke id already; acknowledged when written.
    return session->second->sendRoseEncoded(queued_pdu, static_cast<std::int64_t>(t.message));
  }
  const std::int32_t invoke_id = t.invoke_id ? *t.invoke_id : provider.next_unconfirmed_id++;
  if (provider.next_unconfirmed_id == as::kMaxInvokeId) provider.next_unconfirmed_id = 0x40000000;
  auto pdu = withInvokeId(queued_pdu, invoke_id);
  if (!pdu.isOk()) return false;
  if (t.retransmission) session->second->countRetransmission();
  // An unconfirmed operation is acknowledged when its write completed (onWritten), not
  // here: until then it is in flight like any other and goes back to queued if the
  // association is lost first (docs/OPERATIONS.md "Outstanding requests, congestion and
  // timeouts").
  const std::int64_t tag = t.invoke_id ? 0 : static_cast<std::int64_t>(t.message);
  return session->second->sendRoseEncoded(pdu.value(), tag);
}

void AssociationManager::deliver(const std::string& spid) {
  Provider* provider = providerFor(spid, false);
  if (provider == nullptr || provider->sessions.empty()) return;
  std::uint32_t functions = 0;
  // Free congestion-window slots: at most that many requests can leave now, so no more
  // rows are read (an answer that frees a slot schedules the next round).
  std::size_t capacity = 0;
  const std::uint32_t window = provider->egress->outstanding().limits().congestion_window;
  for (auto& [id, session] : provider->sessions) {
    if (!session->bound() || session->releasing()) continue;
    functions |= session->function_mask;
    const std::uint32_t busy =
        provider->egress->outstanding().outstanding(static_cast<as::AssociationId>(id));
    capacity += window > busy ? window - busy : 0;
  }
  if (functions == 0 || capacity == 0) return;
  const std::size_t limit = std::min(kDeliveryBatch, capacity);
  auto batch = queue_.nextQueued(spid, functions, limit);
  if (!batch.isOk()) {
    spdlog::error("SPID {}: reading the outbound queue failed: {}", spid, batch.status().toString());
    return;
  }
  const as::TimePoint now = steadyNow();
  const db::TimeMs now_ms = nowMs();
  std::map<std::int64_t, std::vector<db::MessageId>> sent;
  std::optional<std::int64_t> failed;
  bool waited = false;
  for (const db::QueuedMessage& message : *batch) {
    auto apdu = cmip::decodeRoseApdu(message.pdu);
    if (!apdu.isOk() || std::holds_alternative<cmip::RoseReject>(apdu.value())) {
      queue_.markFailed(message.id, "stored PDU is not a ROSE Invoke, ReturnResult or ReturnError",
                        now_ms);
      continue;
    }
    auto* invoke = std::get_if<cmip::RoseInvoke>(&apdu.value());
    as::OutboundMessage out;
    out.id = static_cast<as::MessageId>(message.id);
    out.function = routingFunction(message.function_mask);
    out.priority = static_cast<std::uint8_t>(std::clamp(message.priority, 0, 255));
    if (invoke != nullptr) {
      out.confirmed =
          invoke->opcode.isLocal() &&
          cmip::isConfirmedCmipOpcode(static_cast<cmip::CmipOpcode>(invoke->opcode.localValue()));
    } else {
      // An answer to one of the provider's requests (respond()): leaves through the
      // rotation even in recovery mode, acknowledged once written (NANC 353 7.b.iv).
      out.confirmed = false;
      out.purpose = as::OutboundMessage::Purpose::kResponse;
    }
    as::SendOutcome outcome = provider->egress->send(out, now);
    if (!outcome.ok()) {
      waited = true;
      break;
    }
    const as::Transmission& t = *outcome.transmission;
    sent[static_cast<std::int64_t>(t.association)].push_back(message.id);
    if (!writeTransmission(*provider, t, message.pdu, invoke == nullptr)) {
      // The connection cannot take it: counted as in flight there, and that association
      // is aborted once the rows say so, so its loss moves the message like the others.
      failed = static_cast<std::int64_t>(t.association);
      break;
    }
  }
  for (auto& [association, ids] : sent) {
    db::Status status = queue_.markSent(ids, association, now_ms);
    if (!status.isOk()) spdlog::error("SPID {}: markSent failed: {}", spid, status.toString());
  }
  if (failed) {
    auto session = provider->sessions.find(*failed);
    if (session != provider->sessions.end()) {
      auto keep = session->second;
      keep->abort("a PDU could not be written");
    } else {
      lose(*provider, spid, *failed);
    }
    return;
  }
  if (!waited && batch->size() == limit) scheduleDelivery(spid);
}

void AssociationManager::onRose(const std::shared_ptr<Session>& session, cmip::RoseApdu apdu) {
  Provider* provider = providerFor(session->spid, false);
  if (provider == nullptr) return;
  std::optional<std::int32_t> answered;
  bool error = false;
  if (auto* result = std::get_if<cmip::RoseReturnResult>(&apdu)) {
    answered = invokeIdOf(result->invokeId);
  } else if (auto* err = std::get_if<cmip::RoseReturnError>(&apdu)) {
    answered = invokeIdOf(err->invokeId);
    error = true;
  } else if (auto* reject = std::get_if<cmip::RoseReject>(&apdu)) {
    answered = invokeIdOf(reject->invokeId);
    error = true;
  }
  if (answered && heartbeatAnswered(*answered)) return;
  if (answered) {
    auto message = provider->egress->onResponse(*answered, session->associationId(), steadyNow());
    if (message) {
      if (error) {
        queue_.markFailed(static_cast<db::MessageId>(*message), "the provider answered with an error",
                          nowMs());
      } else {
        queueAck(static_cast<db::MessageId>(*message));
      }
    }
    scheduleDelivery(session->spid);
    for (as::AssociationId ready : provider->egress->readyToRelease()) {
      auto s = provider->sessions.find(ready);
      if (s != provider->sessions.end()) s->second->requestRelease();
    }
    return;
  }
  auto& invoke = std::get<cmip::RoseInvoke>(apdu);
  auto decoded = cmip::fromRose(invoke);
  if (!decoded.isOk()) {
    rejectInvoke(*session, invoke, decoded.status());
    return;
  }
  if (handleProviderAction(session, *decoded)) return;
  InboundRequest request;
  request.id = next_inbound_id_++;
  request.spid = session->spid;
  request.association_id = session->associationId();
  request.function_mask = session->function_mask;
  request.nsap_hex = session->nsap().toHex();
  request.invoke_id = invoke.invokeId;
  request.opcode = static_cast<cmip::CmipOpcode>(invoke.opcode.localValue());
  request.pdu = cmip::encodeRoseApdu(apdu);
  request.received_at = nowMs();
  inbound_waiting_.emplace(request.id, std::move(request));
  answerPolls();
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
  (void)session;
  queueAck(static_cast<db::MessageId>(tag));
}

void AssociationManager::queueAck(db::MessageId id) {
  pending_acks_.push_back(id);
  if (!ack_flush_scheduled_) {
    ack_flush_scheduled_ = true;
    asio::post(io_, [this] { flushAcks(); });
  }
}

void AssociationManager::flushAcks() {
  ack_flush_scheduled_ = false;
  if (pending_acks_.empty()) return;
  db::Status status = queue_.markAcknowledged(pending_acks_, nowMs());
  if (!status.isOk()) spdlog::error("markAcknowledged failed: {}", status.toString());
  pending_acks_.clear();
}

void AssociationManager::move(Provider& provider, const as::Transmission& t) {
  auto stored = queue_.get(static_cast<db::MessageId>(t.message));
  if (!stored.isOk()) {
    spdlog::error("message {}: not readable for its retransmission: {}", t.message,
                  stored.status().toString());
    return;
  }
  writeTransmission(provider, t, stored->pdu);
  const auto association = static_cast<db::AssociationId>(t.association);
  if (stored->state == db::MessageState::kSent && stored->association_id != association) {
    db::Status moved = queue_.moveSent(stored->id, association);
    if (!moved.isOk()) spdlog::error("message {}: {}", t.message, moved.toString());
  }
}

void AssociationManager::requeue(const std::string& spid, const std::vector<as::MessageId>& ids) {
  if (ids.empty()) return;
  std::vector<db::MessageId> rows(ids.begin(), ids.end());
  auto requeued = queue_.requeue(rows);
  if (!requeued.isOk()) {
    spdlog::error("SPID {}: re-queueing {} message(s) failed: {}", spid, rows.size(),
                  requeued.status().toString());
  }
  scheduleDelivery(spid);
}

void AssociationManager::lose(Provider& provider, const std::string& spid,
                              std::int64_t association) {
  provider.sessions.erase(association);
  heartbeats_.erase(association);
  flushAcks();
  // Everything in flight there goes back to queued (flagged); what the egress re-sends
  // on a survivor is marked sent again below.
  queue_.requeueAssociation(association);
  as::LossOutcome outcome =
      provider.egress->onAssociationLost(static_cast<as::AssociationId>(association), steadyNow());
  const db::TimeMs now_ms = nowMs();
  for (const as::Transmission& t : outcome.retransmissions) {
    auto stored = queue_.get(static_cast<db::MessageId>(t.message));
    if (!stored.isOk()) continue;
    if (stored->state != db::MessageState::kQueued) {
      move(provider, t);  // its row named another association, still sent
      continue;
    }
    writeTransmission(provider, t, stored->pdu);
    queue_.markSent(stored->id, static_cast<std::int64_t>(t.association), now_ms);
  }
  // Requests that had been moved here from elsewhere and found no survivor: their rows
  // may name another association, so they are re-queued by id as well.
  requeue(spid, outcome.requeue);
  scheduleDelivery(spid);
}

void AssociationManager::onClosed(const std::shared_ptr<Session>& session,
                                  const std::string& reason, bool orderly) {
  logEvent(orderly ? db::AssociationEventKind::kRelease : db::AssociationEventKind::kAbort,
           *session, reason);
  spdlog::info("association {} {}: SPID {} NSAP {} mask {}: {}", session->associationId(),
               orderly ? "released" : "aborted", session->spid, session->nsap().toHex(),
               as::FunctionMask(static_cast<std::uint8_t>(session->function_mask)).toString(),
               reason);
  Provider* provider = providerFor(session->spid, false);
  if (provider != nullptr) lose(*provider, session->spid, session->associationId());
}

void AssociationManager::logEvent(db::AssociationEventKind kind, const Session& session,
                                  const std::string& reason) {
  db::AssociationEvent event;
  event.at = nowMs();
  event.kind = kind;
  event.spid = session.spid;
  event.nsap.assign(session.nsap().octets().begin(), session.nsap().octets().end());
  event.association_id = session.associationId();
  event.function_mask = session.function_mask;
  event.recovery_mode = session.recovery_mode;
  if (kind != db::AssociationEventKind::kBind) event.bound_at = session.bound_at_ms;
  event.reason = reason;
  db::Status status = db::AssociationLogStore(db_).append(event).status();
  if (!status.isOk()) spdlog::error("association log: {}", status.toString());
}

void AssociationManager::onTimer() {
  const as::TimePoint now = steadyNow();
  for (auto& [spid, provider] : providers_) {
    if (!provider.egress) continue;
    heartbeats(provider, spid);
    as::TimerOutcome outcome = provider.egress->onTimer(now);
    // A retry may leave on another association (avoid): the row follows it.
    for (const as::Transmission& t : outcome.retries) move(provider, t);
    for (as::AssociationId id : outcome.abort) {
      auto s = provider.sessions.find(static_cast<std::int64_t>(id));
      if (s != provider.sessions.end()) {
        auto session = s->second;
        session->abort("no response within response_timeout after retry_attempts");
      }
    }
  }
  if (stopping_) return;
  timer_.expires_after(kTimerPeriod);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) onTimer();
  });
}

void AssociationManager::reportUnanswered() const {
  // Providers' requests live in memory until the application answers them (the answer
  // itself is durable): say which ones this stop leaves unanswered, so an operator can
  // tell the application or expect the providers' ROSE retries.
  std::map<std::string, std::vector<std::int32_t>> by_spid;
  for (const auto* requests : {&inbound_waiting_, &inbound_open_}) {
    for (const auto& [id, request] : *requests) by_spid[request.spid].push_back(request.invoke_id);
  }
  for (const auto& [spid, invoke_ids] : by_spid) {
    std::string list;
    for (std::int32_t invoke_id : invoke_ids) list += (list.empty() ? "" : ", ") + std::to_string(invoke_id);
    spdlog::warn("SPID {}: {} request(s) from the provider left unanswered at stop (invoke ids {}); "
                 "the provider will have to send them again",
                 spid, invoke_ids.size(), list);
  }
}

void AssociationManager::shutdown(std::function<void()> done) {
  asio::post(io_, [this, done = std::move(done)] {
    stopping_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    timer_.cancel();
    for (auto& session : unbound_) session->close("npacd shutting down");
    unbound_.clear();
    flushAcks();
    for (auto& poll : polls_) poll->done(db::Status::shutdown("npacd is stopping"));
    polls_.clear();
    // Drain: no new PDU leaves; each association is released (RLRQ) once nothing is
    // outstanding on it, or at kDrainTimeout whatever remains; the release timeout then
    // closes what did not answer. Done as soon as every association is gone.
    for (auto& [spid, provider] : providers_) {
      for (auto& [id, session] : provider.sessions) {
        session->setReleaseReason(kReleaseShutdown);
        provider.egress->startRelease(static_cast<as::AssociationId>(id));
      }
    }
    const auto drain_deadline = std::chrono::steady_clock::now() + kDrainTimeout;
    const auto final_deadline = drain_deadline + kReleaseTimeout + std::chrono::milliseconds(200);
    auto tick = std::make_shared<asio::steady_timer>(io_);
    auto step = std::make_shared<std::function<void()>>();
    *step = [this, tick, step, done, drain_deadline, final_deadline] {
      const auto now = std::chrono::steady_clock::now();
      bool any = false;
      for (auto& [spid, provider] : providers_) {
        std::set<as::AssociationId> ready;
        for (as::AssociationId id : provider.egress->readyToRelease()) ready.insert(id);
        for (auto& [id, session] : provider.sessions) {
          any = true;
          if (now >= drain_deadline || ready.count(static_cast<as::AssociationId>(id)) != 0) {
            session->requestRelease();
          }
        }
      }
      flushAcks();
      if (!any || now >= final_deadline) {
        reportUnanswered();
        auto finished = done;  // a copy: clearing *step destroys this lambda's captures
        *step = nullptr;       // break the self-reference
        finished();
        return;
      }
      tick->expires_after(std::chrono::milliseconds(20));
      tick->async_wait([step](boost::system::error_code) {
        if (*step) (*step)();
      });
    };
    (*step)();
  });
}

}  // namespace npac::npacd
