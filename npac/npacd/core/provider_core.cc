// ProviderCore: associations coming and going, answers, timeouts, SRR off, operators'
// views. Delivery is provider_core_delivery.cc, recovery provider_core_recovery.cc;
// heartbeats are ProviderHeartbeats' (provider_heartbeats.h), throttling ProviderThrottle's
// (provider_throttle.h).
#include "npac/npacd/core/provider_core.h"

#include <spdlog/spdlog.h>

#include "npac/npacd/core/session.h"
#include "tunables/catalogue.h"

namespace npac::npacd {
namespace as = npac::associations;

namespace {

dispatch::PolicyConfig policyFor(tunables::EgressPolicy policy) {
  dispatch::PolicyConfig config;
  switch (policy) {
    case tunables::EgressPolicy::kRoundRobin: config.name = dispatch::kRoundRobinName; break;
    case tunables::EgressPolicy::kWeighted: config.name = dispatch::kWeightedName; break;
    case tunables::EgressPolicy::kLrtm: config.name = dispatch::kLrtmName; break;
  }
  return config;
}

as::OutstandingLimits limitsFor(tunables::TunableRegistry& registry, const std::string& spid) {
  as::OutstandingLimits limits;
  limits.congestion_window = static_cast<std::uint32_t>(registry.get(tunables::kCongestionWindow, spid));
  limits.response_timeout = registry.get(tunables::kResponseTimeout, spid);
  limits.retry_attempts = static_cast<std::uint32_t>(registry.get(tunables::kRetryAttempts, spid));
  return limits;
}

std::optional<std::int32_t> answeredId(const cmip::RoseApdu& apdu, bool* error) {
  if (auto* result = std::get_if<cmip::RoseReturnResult>(&apdu)) return result->invokeId.present;
  *error = true;
  if (auto* err = std::get_if<cmip::RoseReturnError>(&apdu)) return err->invokeId.present;
  if (auto* reject = std::get_if<cmip::RoseReject>(&apdu)) return reject->invokeId.present;
  return std::nullopt;
}

// The egress policy's figures of association `id` (describe()).
std::optional<EgressFigures> egressFiguresOf(as::ProviderEgress& egress, db::AssociationId id) {
  const auto member = static_cast<as::AssociationId>(id);
  const std::optional<dispatch::MemberFigures> figures = egress.logical().figures(member);
  if (!figures) return std::nullopt;
  EgressFigures out;
  out.weight = figures->member.weight;
  out.relative_cost = figures->member.relative_cost;
  out.load_percent = figures->load_percent;
  if (figures->nw) {
    const dispatch::Duration response_time = figures->response_time.value_or(dispatch::Duration{});
    out.lrtm = EgressFigures::Lrtm{std::chrono::duration<double>(response_time).count(), figures->measured,
                                   figures->n.value_or(0), *figures->nw};
  }
  return out;
}

}  // namespace

ProviderCore::ProviderCore(std::string spid, const common::TimeSource& clock,
                           tunables::TunableRegistry& registry, DeliveryStore& store, Host& host)
    : spid_(std::move(spid)),
      clock_(clock),
      registry_(registry),
      store_(store),
      host_(host),
      held_(spid_, store_),
      throttle_(spid_, registry_),
      heartbeats_(spid_, registry_, clock_) {
  const as::OutstandingLimits limits = limitsFor(registry_, spid_);
  auto egress = as::ProviderEgress::create(spid_, policyFor(registry_.get(tunables::kEgressPolicy, spid_)), limits);
  if (!egress.ok()) {
    spdlog::error("SPID {}: its egress_policy cannot be built; round robin applies", spid_);
    egress = as::ProviderEgress::create(spid_, dispatch::PolicyConfig{}, limits);
  }
  egress_ = std::move(egress).value();  // the default policy always builds
  throttle_.build();
}

void ProviderCore::onBound(std::shared_ptr<AssociationLink> link, const as::AssociationSpec& spec,
                           bool recovery_mode) {
  const auto id = static_cast<db::AssociationId>(spec.id);
  Link& entry = links_[id];
  entry.link = link;
  entry.function_mask = spec.functions.bits();
  heartbeats_.add(id, std::move(link), clock_.now());
  egress_->onBound(spec, recovery_mode);
  host_.wakeDelivery(spid_);
}

void ProviderCore::onLost(db::AssociationId id) {
  auto it = links_.find(id);
  if (it == links_.end()) return;
  if (auto heartbeat = heartbeats_.forget(id)) egress_->outstanding().releaseInvokeId(*heartbeat);
  links_.erase(it);
  for (auto u = unconfirmed_.begin(); u != unconfirmed_.end();) {
    if (u->second.association != id) {
      ++u;
      continue;
    }
    if (u->second.invoke_id) egress_->outstanding().releaseInvokeId(*u->second.invoke_id);
    u = unconfirmed_.erase(u);
  }
  const as::TimePoint now = clock_.now();
  const db::TimeMs now_ms = clock_.wallMs();
  // Everything in flight there goes back to queued (flagged); what the egress re-sends
  // on a survivor is marked sent again below.
  store_.requeueAssociation(spid_, id);
  as::LossOutcome outcome = egress_->onAssociationLost(static_cast<as::AssociationId>(id), now);
  for (const as::Transmission& t : outcome.retransmissions) {
    auto stored = store_.get(static_cast<db::MessageId>(t.message));
    if (!stored.isOk()) continue;
    if (stored->state != db::MessageState::kQueued) {
      move(t);  // its row named another association, still sent
      continue;
    }
    if (write(t, *stored, factsOf(*stored)) != Written::kBadPdu) {
      if (counters_) countWritten(*stored, factsOf(*stored), /*retransmission=*/true);
      store_.markSent(spid_, {stored->id}, static_cast<db::AssociationId>(t.association), now_ms);
    }
  }
  // Requests moved here from elsewhere that found no survivor: their rows may name
  // another association, so they are re-queued by id as well.
  throttle_.onEnded(now, outcome.requeue.size());
  for (as::MessageId message : outcome.requeue) in_flight_series_.erase(static_cast<db::MessageId>(message));
  store_.requeue(spid_, std::vector<db::MessageId>(outcome.requeue.begin(), outcome.requeue.end()));
  store_.flush();  // the re-sent rows read `sent` on their survivors first
  releaseOutgoing();
  host_.wakeDelivery(spid_);
}

bool ProviderCore::abort(db::AssociationId id, const std::string& reason) {
  auto it = links_.find(id);
  if (it == links_.end()) return false;
  auto link = it->second.link;  // abort reports the loss synchronously: keep it alive
  link->abort(reason);
  return true;
}

std::size_t ProviderCore::abortAll(const std::string& reason) {
  std::vector<db::AssociationId> ids;
  for (const auto& [id, entry] : links_) ids.push_back(id);
  for (db::AssociationId id : ids) abort(id, reason);  // each loss is reported synchronously
  return ids.size();
}

bool ProviderCore::allReleasing() const {
  for (const as::AssociationView& view : egress_->logical().snapshot()) {
    if (view.state != as::AssociationState::kReleasing) return false;
  }
  return true;
}

std::size_t ProviderCore::releaseAll(const std::string& release_reason) {
  for (auto& [id, entry] : links_) {
    entry.link->setReleaseReason(release_reason);
    egress_->startRelease(static_cast<as::AssociationId>(id));
  }
  const std::size_t count = links_.size();
  releaseReady();
  return count;
}

void ProviderCore::releaseReady(bool force) {
  std::vector<db::AssociationId> ids;
  if (force) {
    for (const auto& [id, entry] : links_) ids.push_back(id);
  } else {
    for (as::AssociationId id : egress_->readyToRelease()) ids.push_back(static_cast<db::AssociationId>(id));
  }
  for (db::AssociationId id : ids) {
    auto it = links_.find(id);
    if (it == links_.end()) continue;
    auto link = it->second.link;  // kept alive while it reports
    link->requestRelease();
  }
}

void ProviderCore::onReceived(db::AssociationId id) {
  if (links_.count(id) != 0) heartbeats_.received(id, clock_.now());
}

void ProviderCore::onAnswer(db::AssociationId id, const cmip::RoseApdu& apdu) {
  bool error = false;
  const std::optional<std::int32_t> answered = answeredId(apdu, &error);
  if (!answered) return;  // a Reject of something undecodable names no invoke id
  if (const std::optional<double> rtt = heartbeats_.answered(id, *answered, clock_.now())) {
    // The heartbeat of this association (NANC 404), and nothing else.
    if (counters_) counters_->heartbeat_rtt.observe(*rtt);
    egress_->outstanding().releaseInvokeId(*answered);
    return;
  }
  const as::TimePoint now = clock_.now();
  std::optional<as::TimePoint> sent_at;
  if (counters_) {
    if (auto request = egress_->outstanding().find(*answered)) sent_at = request->sent_at;
  }
  auto message = egress_->onResponse(*answered, static_cast<as::AssociationId>(id), now);
  if (message) {
    throttle_.onAnswered(now, egress_->outstanding().size());
    if (counters_) {
      // From the latest send: a retransmission's round trip is its own (X.880 gives a
      // request one invoke id, so the answer cannot say which send it answers).
      if (sent_at) counters_->response_rtt.observe(std::chrono::duration<double>(now - *sent_at).count());
      countAnswered(static_cast<db::MessageId>(*message),
                    error ? ProviderCounters::kFailed : ProviderCounters::kAcknowledged);
    }
    if (error) {
      store_.markFailed(spid_, static_cast<db::MessageId>(*message), "the provider answered with an error",
                        clock_.wallMs());
    } else {
      store_.acknowledge(spid_, static_cast<db::MessageId>(*message), clock_.wallMs());
    }
  }
  host_.wakeDelivery(spid_);
  releaseReady();
}

void ProviderCore::onWritten(db::AssociationId id, std::int64_t tag) {
  (void)id;
  auto it = unconfirmed_.find(static_cast<db::MessageId>(tag));
  if (it != unconfirmed_.end()) {
    if (counters_) {
      counters_->count(ProviderCounters::kAcknowledged, it->second.series.function, it->second.series.operation);
    }
    if (it->second.invoke_id) egress_->outstanding().releaseInvokeId(*it->second.invoke_id);
    unconfirmed_.erase(it);
  }
  store_.acknowledge(spid_, static_cast<db::MessageId>(tag), clock_.wallMs());
}

void ProviderCore::onSubmitted(const std::vector<db::MessageId>& ids) {
  store_.noteSubmitted(spid_, ids);
  // A provider in recovery holds new messages (they stay queued until it completes).
  if (!egress_->recovery().mayPush()) {
    for (db::MessageId id : ids) egress_->recovery().onNewMessage(static_cast<as::MessageId>(id));
  }
  host_.wakeDelivery(spid_);
}

void ProviderCore::move(const as::Transmission& t) {
  auto stored = store_.get(static_cast<db::MessageId>(t.message));
  if (!stored.isOk()) {
    spdlog::error("SPID {}: message {} not readable for its retransmission: {}", spid_, t.message,
                  stored.status().toString());
    return;
  }
  if (write(t, *stored, factsOf(*stored)) != Written::kBadPdu && counters_) {
    countWritten(*stored, factsOf(*stored), /*retransmission=*/true);
  }
  const auto association = static_cast<db::AssociationId>(t.association);
  if (stored->state == db::MessageState::kSent && stored->association_id != association) {
    store_.moveSent(spid_, stored->id, association);
  }
  store_.flush();  // the row names its association before the PDU leaves
  releaseOutgoing();
}

void ProviderCore::tick() {
  const as::TimePoint now = clock_.now();
  // Losses and timeouts changed the pending count too.
  throttle_.refreshGroup(host_.throttleGroupOf(spid_), egress_->outstanding().size());
  for (db::AssociationId id : heartbeats_.tick(now, egress_->outstanding())) {
    spdlog::warn("SPID {} association {}: no heartbeat response within heartbeat_timeout", spid_, id);
    abort(id, "no heartbeat response within heartbeat_timeout (NANC 404)");
  }
  as::TimerOutcome outcome = egress_->onTimer(now);
  for (as::AssociationId id : outcome.silenced) {
    spdlog::warn("SPID {} association {}: silent — a request passed response_timeout unanswered; "
                 "it takes no new PDU until it answers (timeout {} of retry_attempts {})",
                 spid_, id, egress_->timeouts(id), egress_->outstanding().limits().retry_attempts);
  }
  // A retry may leave on another association (avoid): the row follows it.
  for (const as::Transmission& t : outcome.retries) move(t);
  for (as::AssociationId id : outcome.abort) {
    spdlog::warn("SPID {} association {}: aborted after {} response timeout(s) (retry_attempts {})",
                 spid_, id, egress_->timeouts(id), egress_->outstanding().limits().retry_attempts);
    abort(static_cast<db::AssociationId>(id),
          "no response within response_timeout after retry_attempts");
  }
  if (throttle_.throttled() || !outcome.retries.empty()) host_.wakeDelivery(spid_);
}

void ProviderCore::applyTunables() {
  for (const as::MemberStateChange& change : egress_->outstanding().setLimits(limitsFor(registry_, spid_))) {
    if (!egress_->silent(change.association)) {
      egress_->logical().setMemberState(change.association, change.state);
    }
  }
  auto policy = policyFor(registry_.get(tunables::kEgressPolicy, spid_));
  if (policy.name != egress_->logical().policyName()) {
    if (auto error = egress_->logical().changePolicy(policy)) {
      spdlog::error("SPID {}: egress_policy {} refused; the current policy stays", spid_, policy.name);
    } else {
      spdlog::info("SPID {}: egress policy now {}", spid_, policy.name);
    }
  }
  throttle_.build();
  host_.wakeDelivery(spid_);
}

void ProviderCore::onSrrOff() {
  as::SrrOffOutcome outcome = egress_->onSrrTurnedOff(clock_.now());
  // The moved requests now belong to the association that stays; those that could not
  // be placed go back to queued (nothing lost, nothing sent twice under another id).
  for (const auto& t : outcome.retransmissions) move(t);
  for (as::MessageId message : outcome.requeue) in_flight_series_.erase(static_cast<db::MessageId>(message));
  store_.requeue(spid_, std::vector<db::MessageId>(outcome.requeue.begin(), outcome.requeue.end()));
  spdlog::info("SPID {}: SRR turned off, {} association(s) to release", spid_, outcome.plan.size());
  for (const auto& planned : outcome.plan) {
    auto it = links_.find(static_cast<db::AssociationId>(planned.release));
    if (it != links_.end()) it->second.link->setReleaseReason(kReleaseSrrOff);
  }
  releaseReady();
  host_.wakeDelivery(spid_);
}

void ProviderCore::describe(std::vector<AssociationInfo>& out) const {
  for (const auto& [id, entry] : links_) {
    AssociationInfo info = entry.link->describe();
    info.id = id;
    info.spid = spid_;
    info.outstanding = egress_->outstanding().outstanding(static_cast<as::AssociationId>(id));
    const auto view = egress_->logical().find(static_cast<as::AssociationId>(id));
    info.state = entry.link->releasing() || (view && view->state == as::AssociationState::kReleasing)
                     ? "releasing"
                 : !egress_->recovery().mayPush() ? "recovering"
                 : egress_->silent(static_cast<as::AssociationId>(id)) ? "silent"
                 : view && view->member_state == dispatch::MemberState::kCongested ? "congested"
                                                                                    : "bound";
    info.heartbeat_rtt_seconds = heartbeats_.rtt(id);
    info.egress = egressFiguresOf(*egress_, id);
    out.push_back(std::move(info));
  }
}

void ProviderCore::setCounting(bool on) {
  if (!on) {
    counters_.reset();
    in_flight_series_.clear();
  } else if (!counters_) {
    counters_ = std::make_unique<ProviderCounters>();
  }
}

void ProviderCore::countWritten(const db::QueuedMessage& row, const Facts& facts, bool retransmission) {
  const PduSeries series{routingFunction(row.function_mask),
                         static_cast<std::uint8_t>(ProviderCounters::operationIndex(row.opcode))};
  counters_->count(ProviderCounters::kSent, series.function, series.operation);
  if (retransmission) counters_->count(ProviderCounters::kRetransmitted, series.function, series.operation);
  if (facts.confirmed) {
    in_flight_series_[row.id] = series;
  } else if (auto it = unconfirmed_.find(row.id); it != unconfirmed_.end()) {
    it->second.series = series;
  }
}

void ProviderCore::countAnswered(db::MessageId message, ProviderCounters::Outcome outcome) {
  PduSeries series;
  if (auto it = in_flight_series_.find(message); it != in_flight_series_.end()) {
    series = it->second;
    in_flight_series_.erase(it);
  }
  counters_->count(outcome, series.function, series.operation);
}

CoreMetrics::Provider ProviderCore::metrics() {
  CoreMetrics::Provider out;
  out.spid = spid_;
  if (counters_) out.counters = *counters_;
  std::vector<AssociationInfo> infos;
  describe(infos);
  for (const AssociationInfo& info : infos) {
    CoreMetrics::Provider::Association a;
    a.id = info.id;
    a.state = info.state;
    a.outstanding = info.outstanding;
    const auto member = egress_->logical().find(static_cast<as::AssociationId>(info.id));
    a.congested = member && member->member_state == dispatch::MemberState::kCongested;
    a.sent = info.sent;
    a.received = info.received;
    a.retransmissions = info.retransmissions;
    a.egress = info.egress;
    out.associations.push_back(std::move(a));
  }
  out.recovering = !egress_->recovery().mayPush();
  // As view() reports it.
  if (const std::optional<int> level = throttle_.level(clock_.now())) out.throttle_level = *level;
  return out;
}

ProviderEgressView ProviderCore::egressView() const {
  ProviderEgressView view;
  view.spid = spid_;
  view.policy = egress_->logical().policyName();
  const std::uint64_t first = next_pick_ > kRecentPicks ? next_pick_ - kRecentPicks : 0;
  for (std::uint64_t i = first; i < next_pick_; ++i) {
    const RecentPick& pick = recent_[i % kRecentPicks];
    view.recent.push_back({pick.association, as::FunctionMask::of({pick.function}).toString(),
                           pick.at, pick.retransmission});
  }
  return view;
}

ProviderQueueView ProviderCore::view() {
  ProviderQueueView view;
  view.spid = spid_;
  view.bound = !links_.empty();
  view.storage_ok = store_.healthy();
  auto counts = store_.queuedByMask(spid_);
  if (counts.isOk()) {
    std::map<as::AssociationFunction, std::size_t> waiting;
    for (const auto& [mask, count] : counts.value()) waiting[routingFunction(mask)] += count;
    for (const auto& [function, count] : waiting) {
      if (auto reason = waitReason(function)) {
        view.waits.push_back({as::FunctionMask::of({function}).toString(), *reason, count});
      }
    }
  } else {
    view.storage_ok = false;
  }
  // The provider's throttle group as provisioned now (DSR ETG/ETL), and its level while it
  // holds the provider's messages.
  if (auto group = host_.throttleGroupOf(spid_)) view.throttle_group = group->name();
  throttle_.describe(view, clock_, egress_->outstanding().size());
  for (const auto& [id, entry] : links_) {
    ProviderQueueView::AssociationLoad load;
    load.id = id;
    load.outstanding = egress_->outstanding().outstanding(static_cast<as::AssociationId>(id));
    const auto member = egress_->logical().find(static_cast<as::AssociationId>(id));
    load.congested = member && member->member_state == dispatch::MemberState::kCongested;
    load.silent = egress_->silent(static_cast<as::AssociationId>(id));
    view.associations.push_back(load);
  }
  return view;
}

}  // namespace npac::npacd
