// ProviderCore: associations coming and going, answers, timeouts, SRR off. Operators'
// reads are provider_view.cc, delivery provider_core_delivery.cc; what is written on the
// associations is ProviderLinks' (provider_links.h), heartbeats ProviderHeartbeats'
// (provider_heartbeats.h), throttling ProviderThrottle's (provider_throttle.h), recovery
// ProviderRecovery's (provider_recovery.h), the counting ProviderCounting's
// (provider_counting.h).
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

// The provider's egress under its egress_policy; round robin if that cannot be built.
std::unique_ptr<as::ProviderEgress> buildEgress(const std::string& spid, tunables::TunableRegistry& registry) {
  const as::OutstandingLimits limits = limitsFor(registry, spid);
  auto egress = as::ProviderEgress::create(spid, policyFor(registry.get(tunables::kEgressPolicy, spid)), limits);
  if (!egress.isOk()) {
    spdlog::error("SPID {}: its egress_policy cannot be built ({}); round robin applies", spid,
                  egress.status().message());
    egress = as::ProviderEgress::create(spid, dispatch::PolicyConfig{}, limits);
  }
  return std::move(egress).value();  // the default policy always builds
}

}  // namespace

ProviderCore::ProviderCore(std::string spid, const common::TimeSource& clock,
                           tunables::TunableRegistry& registry, DeliveryStore& store, Host& host)
    : spid_(std::move(spid)),
      clock_(clock),
      registry_(registry),
      store_(store),
      host_(host),
      egress_(buildEgress(spid_, registry_)),
      links_(spid_, clock_, store_, *egress_, counting_),
      throttle_(spid_, registry_),
      heartbeats_(spid_, registry_, clock_),
      recovery_(spid_, clock_, store_, *egress_, links_, counting_,
                ProviderRecovery::Host{[this] { return host_.mayDeliver(spid_); },
                                       [this] { host_.wakeDelivery(spid_); }}) {
  throttle_.build();
}

void ProviderCore::onBound(std::shared_ptr<AssociationLink> link, const as::AssociationSpec& spec,
                           bool recovery_mode) {
  const auto id = static_cast<db::AssociationId>(spec.id);
  links_.add(id, link, spec.functions.bits());
  heartbeats_.add(id, std::move(link), clock_.now());
  egress_->onBound(spec, recovery_mode);
  host_.wakeDelivery(spid_);
}

void ProviderCore::onLost(db::AssociationId id) {
  if (links_.all().count(id) == 0) return;
  if (auto heartbeat = heartbeats_.forget(id)) egress_->outstanding().releaseInvokeId(*heartbeat);
  links_.remove(id);  // and its unconfirmed PDUs, their invoke ids released
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
      links_.move(t);  // its row named another association, still sent
      continue;
    }
    if (links_.write(t, *stored, factsOf(*stored)) != ProviderLinks::Written::kBadPdu) {
      links_.count(*stored, factsOf(*stored), /*retransmission=*/true);
      store_.markSent(spid_, {stored->id}, static_cast<db::AssociationId>(t.association), now_ms);
    }
  }
  // Requests moved here from elsewhere that found no survivor: their rows may name
  // another association, so they are re-queued by id as well.
  throttle_.onEnded(now, outcome.requeue.size());
  for (as::MessageId message : outcome.requeue) counting_.forget(static_cast<db::MessageId>(message));
  store_.requeue(spid_, std::vector<db::MessageId>(outcome.requeue.begin(), outcome.requeue.end()));
  store_.flush();  // the re-sent rows read `sent` on their survivors first
  links_.release();
  host_.wakeDelivery(spid_);
}

bool ProviderCore::abort(db::AssociationId id, const std::string& reason) { return links_.abort(id, reason); }

std::size_t ProviderCore::abortAll(const std::string& reason) {
  std::vector<db::AssociationId> ids;
  for (const auto& [id, entry] : links_.all()) ids.push_back(id);
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
  for (const auto& [id, entry] : links_.all()) {
    entry.link->setReleaseReason(release_reason);
    egress_->startRelease(static_cast<as::AssociationId>(id));
  }
  const std::size_t count = links_.all().size();
  releaseReady();
  return count;
}

void ProviderCore::releaseReady(bool force) {
  std::vector<db::AssociationId> ids;
  if (force) {
    for (const auto& [id, entry] : links_.all()) ids.push_back(id);
  } else {
    for (as::AssociationId id : egress_->readyToRelease()) ids.push_back(static_cast<db::AssociationId>(id));
  }
  for (db::AssociationId id : ids) {
    auto link = links_.link(id);  // kept alive while it reports
    if (link == nullptr) continue;
    link->requestRelease();
  }
}

void ProviderCore::onReceived(db::AssociationId id) {
  if (links_.all().count(id) != 0) heartbeats_.received(id, clock_.now());
}

void ProviderCore::onAnswer(db::AssociationId id, const cmip::RoseApdu& apdu) {
  bool error = false;
  const std::optional<std::int32_t> answered = answeredId(apdu, &error);
  if (!answered) return;  // a Reject of something undecodable names no invoke id
  if (const std::optional<double> rtt = heartbeats_.answered(id, *answered, clock_.now())) {
    // The heartbeat of this association (NANC 404), and nothing else.
    counting_.heartbeatRtt(*rtt);
    egress_->outstanding().releaseInvokeId(*answered);
    return;
  }
  const as::TimePoint now = clock_.now();
  std::optional<as::TimePoint> sent_at;
  if (counting_.on()) {
    if (auto request = egress_->outstanding().find(*answered)) sent_at = request->sent_at;
  }
  auto message = egress_->onResponse(*answered, static_cast<as::AssociationId>(id), now);
  if (message) {
    throttle_.onAnswered(now, egress_->outstanding().size());
    if (counting_.on()) {
      // From the latest send: a retransmission's round trip is its own (X.880 gives a
      // request one invoke id, so the answer cannot say which send it answers).
      if (sent_at) counting_.responseRtt(std::chrono::duration<double>(now - *sent_at).count());
      counting_.answered(static_cast<db::MessageId>(*message),
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

bool ProviderCore::onProviderAction(db::AssociationId id, const cmip::CmipInvoke& invoke) {
  return recovery_.onAction(id, invoke);
}

void ProviderCore::onWritten(db::AssociationId id, std::int64_t tag) {
  (void)id;
  links_.written(static_cast<db::MessageId>(tag));
}

void ProviderCore::onSubmitted(const std::vector<db::MessageId>& ids) {
  store_.noteSubmitted(spid_, ids);
  // A provider in recovery holds new messages (they stay queued until it completes).
  if (!egress_->recovery().mayPush()) {
    for (db::MessageId id : ids) egress_->recovery().onNewMessage(static_cast<as::MessageId>(id));
  }
  host_.wakeDelivery(spid_);
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
  for (const as::Transmission& t : outcome.retries) links_.move(t);
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
    if (Status changed = egress_->logical().changePolicy(policy); !changed.isOk()) {
      spdlog::error("SPID {}: egress_policy {} refused ({}); the current policy stays", spid_, policy.name,
                    changed.message());
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
  for (const auto& t : outcome.retransmissions) links_.move(t);
  for (as::MessageId message : outcome.requeue) counting_.forget(static_cast<db::MessageId>(message));
  store_.requeue(spid_, std::vector<db::MessageId>(outcome.requeue.begin(), outcome.requeue.end()));
  spdlog::info("SPID {}: SRR turned off, {} association(s) to release", spid_, outcome.plan.size());
  for (const auto& planned : outcome.plan) {
    if (auto link = links_.link(static_cast<db::AssociationId>(planned.release))) {
      link->setReleaseReason(kReleaseSrrOff);
    }
  }
  releaseReady();
  host_.wakeDelivery(spid_);
}

void ProviderCore::setCounting(bool on) { counting_.setCounting(on); }

ProviderView ProviderCore::view() {
  return ProviderView({spid_, clock_, store_, host_, *egress_, links_, heartbeats_, throttle_, counting_});
}

}  // namespace npac::npacd
