#include "npac/npac-soa-sim/simulation.h"

#include <csignal>
#include <thread>

#include <spdlog/spdlog.h>

#include "associations/nsap.h"
#include "cmip/cmip.h"
#include "common/vocabulary.h"
#include "npac/npac-soa-sim/provider_messages.h"

namespace npac::soasim {
namespace {

using asio::awaitable;
using asio::redirect_error;
using asio::use_awaitable;

std::string functionsText(cmip::AssociationFunctionMask mask) {
  std::string s;
  for (cmip::AssociationFunction f : common::kAssociationFunctions) {
    if (!mask.has(f)) continue;
    if (!s.empty()) s += ",";
    s += common::toString(f);
  }
  return s;
}

bool ownEnd(const std::string& reason) {
  return reason == "released" || reason == "release-timeout" || reason == "dropped-tcp" || reason == "dropped-close" ||
         reason == "dropped-abort" ||
         reason == "stopped";
}

}  // namespace

Simulation::Simulation(SimOptions options, ProviderKey key, NpacKeyRing npac_keys)
    : options_(std::move(options)),
      key_(std::move(key)),
      npac_keys_(std::move(npac_keys)),
      progress_(io_),
      recovery_hold_(io_) {
  report_.npac = options_.npac_addresses.front().text();
  for (const NpacAddress& a : options_.npac_addresses) report_.npac_addresses.push_back(a.text());
  report_.spid = options_.spid;
  report_.system_type = common::toString(options_.system_type);
  report_.functions = functionsText(options_.functions);
  report_.key_algorithm = std::string(associations::toString(key_.algorithm));
  report_.expect = options_.expect;
  report_.send_requests = options_.send_requests;
  for (size_t i = 0; i < options_.associations.size(); ++i) {
    const AssociationPlan& plan = options_.associations[i];
    AssociationRecord r;
    r.index = i + 1;
    r.local_address = plan.local_address;
    auto nsap = associations::Nsap::fromAddressString(plan.local_address);
    if (nsap.isOk()) r.nsap = nsap.value().toHex();
    r.answer_delay_ms = plan.answer_delay.count();
    r.silent = plan.silent;
    r.drop_after = plan.drop_after;
    report_.associations.push_back(r);
    pending_answers_.push_back(0);
    bind_tried_.push_back(false);
    association_npac_.push_back(0);
    clients_.push_back(std::make_shared<AssociationClient>(io_.get_executor(), i + 1, plan.local_address, *this));
  }
  if (options_.recovery.enabled) {
    RecoveryRecord rec;
    rec.range = options_.recovery.all_unacknowledged
                    ? "all-unacknowledged"
                    : options_.recovery.from.toString() + ".." + options_.recovery.to.toString();
    rec.hold_ms = options_.recovery.hold.count();
    report_.recovery = rec;
  }
}

int64_t Simulation::nowMillis() const {
  return std::chrono::duration_cast<Millis>(std::chrono::system_clock::now().time_since_epoch()).count();
}

cmip::GeneralizedTime Simulation::departureTime() const {
  // Whole seconds (the bind profile's GeneralizedTime has no fraction).
  return cmip::GeneralizedTime::fromUnixMillis((nowMillis() + options_.departure_offset.count()) / 1000 * 1000);
}

int Simulation::run() {
  started_ = std::chrono::steady_clock::now();
  report_.started_at_unix_ms = nowMillis();
  first_sequence_ = options_.sequence ? *options_.sequence : timeBasedSequence(nowMillis());
  last_sequence_ = first_sequence_;

  asio::signal_set signals(io_, SIGINT, SIGTERM);
  signals.async_wait([this](boost::system::error_code ec, int sig) {
    if (!ec) {
      spdlog::info("signal {}: releasing every association", sig);
      stop("signal");
    }
  });
  asio::steady_timer duration(io_, options_.duration);
  duration.async_wait([this](boost::system::error_code ec) {
    if (!ec) {
      spdlog::info("--duration reached");
      stop("duration");
    }
  });
  asio::co_spawn(
      io_,
      [this, &signals, &duration]() -> awaitable<void> {
        co_await main();
        boost::system::error_code ignored;
        signals.cancel(ignored);
        duration.cancel();
      },
      [this](std::exception_ptr e) {
        if (e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& ex) {
            report_.errors.push_back(std::string("internal error: ") + ex.what());
            report_.exit_code = kExitInternal;
          }
          io_.stop();
        }
      });
  io_.run();

  // The next run with this key must start above the last number used here.
  if (!options_.sequence) {
    int64_t wait = millisWhenSequencePassed(last_sequence_) - nowMillis();
    if (wait > 0) std::this_thread::sleep_for(Millis(wait));
  }
  return report_.exit_code;
}

awaitable<void> Simulation::waitUntil(const std::function<bool()>& done) {
  co_await waitFor([&] { return stopping_ || done(); });
}

awaitable<void> Simulation::waitFor(const std::function<bool()>& done) {
  while (!done()) {
    boost::system::error_code ec;
    progress_.expires_at(std::chrono::steady_clock::time_point::max());
    co_await progress_.async_wait(redirect_error(use_awaitable, ec));
  }
}

void Simulation::stop(std::string reason) {
  if (stopping_) return;
  stopping_ = true;
  report_.stop_reason = std::move(reason);
  recovery_hold_.cancel();
  for (asio::steady_timer* t : pauses_) t->cancel();
  notify();
}

awaitable<void> Simulation::main() {
  size_t k = clients_.size();
  bool recovery = options_.recovery.enabled;
  // In recovery only the first association binds (recovery mode on): NANC 353 refuses a
  // recovery-mode bind while another association of the provider is up. The others bind
  // normally once lnpRecoveryComplete has been answered.
  bool bound = co_await bindRange(0, recovery ? 1 : k, recovery);
  if (bound && recovery && !stopping_) {
    recovery_ = RecoveryPhase::kRequested;
    report_.recovery->requested = true;
    sendRequest(1, recoveryRequest(next_invoke_id_++, options_.recovery), "recovery-request");
    recovery_invoke_ = next_invoke_id_ - 1;
    // Losing the recovery association ends the sequence: the goals wait below sees it.
    co_await waitUntil([this] {
      return recovery_ == RecoveryPhase::kDone || recovery_ == RecoveryPhase::kFailed || !anyUp();
    });
    recovery_hold_.cancel();
    if (recovery_ == RecoveryPhase::kFailed) stop("recovery-failed");
    if (!stopping_ && recovery_ == RecoveryPhase::kDone && k > 1) bound = co_await bindRange(1, k, false);
  }
  if (bound && !stopping_ && options_.send_requests > 0) {
    std::vector<size_t> up;
    for (auto& c : clients_)
      if (c->up()) up.push_back(c->index());
    for (uint64_t n = 1; n <= options_.send_requests && !up.empty(); ++n) {
      size_t index = up[(n - 1) % up.size()];
      sendRequest(index, providerRequest(options_.request_kind, next_invoke_id_++, n), "request");
    }
  }
  if (bound && !stopping_) {
    // main.cc checked that each decodes as a ROSE Invoke.
    for (const auto& bytes : options_.raw_invokes) {
      auto apdu = cmip::decodeRoseApdu(bytes);
      if (apdu.isOk()) sendRequest(1, std::get<cmip::RoseInvoke>(*apdu), "raw-invoke");
    }
  }
  if (bound && !stopping_) {
    // anyAlive: an association being re-bound still counts (its work continues there).
    co_await waitUntil([this] { return (hasGoals() && goalsMet()) || !anyAlive(); });
    if (!stopping_ && anyAlive() && options_.keep_running) co_await waitUntil([this] { return !anyAlive(); });
    if (!stopping_) stop(anyAlive() ? "goals-met" : "all-associations-down");
  }
  co_await releaseAll();
  report_.goals_met = goalsMet() && bind_failure_exit_ == kExitOk && recovery_ != RecoveryPhase::kFailed;
  report_.exit_code = exitCode();
  for (size_t i = 0; i < clients_.size(); ++i) {
    AssociationRecord& r = report_.associations[i];
    r.local_port = clients_[i]->localPort();
    if (r.bind.accepted) {
      r.end_reason = clients_[i]->endReason();
      r.end_detail = clients_[i]->endDetail();
    }
  }
  io_.stop();
}

awaitable<void> Simulation::releaseAll() {
  // A re-bind under way ends soon after the stop (its pause is cancelled, its bind has
  // --bind-timeout): what it bound is released with the rest.
  co_await waitFor([this] { return rebinding_ == 0; });
  for (auto& c : clients_) c->requestRelease();
  auto timed_out = std::make_shared<bool>(false);  // the handler may run after this frame
  asio::steady_timer deadline(io_, options_.release_timeout);
  deadline.async_wait([this, timed_out](boost::system::error_code ec) {
    if (!ec) {
      *timed_out = true;
      notify();
    }
  });
  co_await waitFor([&] { return *timed_out || !anyUp(); });
  deadline.cancel();
  for (auto& c : clients_) {
    if (c->up()) c->close("release-timeout");
  }
}

void Simulation::onApdu(size_t index, const cmip::RoseApdu& apdu) {
  if (const auto* inv = std::get_if<cmip::RoseInvoke>(&apdu)) {
    onInvoke(index, *inv);
  } else if (const auto* rr = std::get_if<cmip::RoseReturnResult>(&apdu)) {
    onReply(index, rr->invokeId.present.value_or(-1), apdu);
  } else if (const auto* re = std::get_if<cmip::RoseReturnError>(&apdu)) {
    onReply(index, re->invokeId.present.value_or(-1), apdu);
  } else if (const auto* rj = std::get_if<cmip::RoseReject>(&apdu)) {
    onReply(index, rj->invokeId.present.value_or(-1), apdu);
  }
  notify();
}

void Simulation::onInvoke(size_t index, const cmip::RoseInvoke& invoke) {
  AssociationRecord& assoc = report_.associations[index - 1];
  const AssociationPlan& plan = options_.associations[index - 1];
  auto client = clients_[index - 1];
  InvokeDescription d = describeInvoke(invoke);
  auto answer = plan.silent ? std::nullopt
                            : answerFor(invoke, cmip::GeneralizedTime::fromUnixMillis(nowMillis() / 1000 * 1000));
  if (d.heartbeat) {
    ++assoc.heartbeats;
    if (!d.on_npac_sms) {
      // docs/PROTOCOL.md: the heartbeat reports on the NPAC SMS object (CN=NPAC).
      report_.errors.push_back("association " + std::to_string(index) + ": heartbeat invoke " +
                               std::to_string(invoke.invokeId) +
                               " is not on the NPAC SMS object (lnpNpacSms, CN=NPAC)");
    }
    if (answer) client->send(*answer, plan.answer_delay);
    return;
  }
  ReceivedRecord r;
  r.seq = report_.received.size() + 1;
  r.association = index;
  r.local_address = assoc.local_address;
  r.npac = assoc.npac;
  r.invoke_id = invoke.invokeId;
  r.operation = d.operation;
  r.type = d.type;
  r.info_hex = d.info_hex;
  r.decode_error = d.decode_error;
  r.during_recovery = inRecovery();
  r.at_ms = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - started_).count();
  // A retransmission keeps its invoke id (associations/outstanding.h); the same id with
  // the same argument seen before is one.
  std::string key_arg = invoke.argument ? toHex(invoke.argument->bytes) : "";
  auto [it, inserted] = seen_.emplace(std::make_pair(invoke.invokeId, key_arg), r.seq);
  if (!inserted) {
    r.retransmission = true;
    r.duplicate_of = it->second;
  }
  report_.received.push_back(r);
  ++assoc.received;
  if (r.during_recovery && report_.recovery) ++report_.recovery->received_during;
  if (recovery_ == RecoveryPhase::kHolding) ++report_.recovery->received_while_holding;

  if (answer) {
    const size_t on = answerIndex(index);
    ++pending_answers_[on - 1];
    clients_[on - 1]->send(*answer, plan.answer_delay, r.seq);
  }
  if (plan.drop_after && assoc.received >= *plan.drop_after) {
    spdlog::info("association {}: dropping after {} messages", index, assoc.received);
    client->dropAfterQueued(options_.drop_mode);
  }
  if (recovery_ == RecoveryPhase::kCounted || recovery_ == RecoveryPhase::kHolding) maybeCompleteRecovery();
}

bool Simulation::inRecovery() const {
  return recovery_ == RecoveryPhase::kRequested || recovery_ == RecoveryPhase::kCounted ||
         recovery_ == RecoveryPhase::kHolding;
}

size_t Simulation::answerIndex(size_t index) const {
  if (options_.answer_on == AnswerOn::kSame) return index;
  const size_t n = clients_.size();
  for (size_t k = 1; k < n; ++k) {
    const size_t next = (index - 1 + k) % n + 1;
    if (clients_[next - 1]->up()) return next;
  }
  return index;  // no other association is up
}

void Simulation::onReply(size_t index, int32_t invoke_id, const cmip::RoseApdu& apdu) {
  AssociationRecord& assoc = report_.associations[index - 1];
  auto it = outstanding_.find(invoke_id);
  if (it == outstanding_.end()) {
    ++assoc.unmatched_replies;
    spdlog::warn("association {}: {} for invoke id {} that we did not send (or already answered)", index,
                 cmip::roseApduName(apdu), invoke_id);
    return;
  }
  RequestRecord& req = report_.requests[it->second];
  outstanding_.erase(it);
  sent_invokes_.erase(invoke_id);
  req.reply_on = index;
  req.reply = cmip::roseApduName(apdu);
  ++assoc.replies_received;
  if (req.purpose == "request") ++replies_to_requests_;
  if (req.purpose == "raw-invoke") ++replies_to_raw_;
  if (const auto* rj = std::get_if<cmip::RoseReject>(&apdu)) {
    static constexpr const char* kKinds[] = {"general", "invoke", "returnResult", "returnError"};
    req.reject_kind = kKinds[static_cast<size_t>(rj->kind)];
    req.reject_problem = rj->problem;
    req.reject_name = cmip::rejectProblemName(rj->kind, rj->problem);
  } else if (const auto* re = std::get_if<cmip::RoseReturnError>(&apdu)) {
    req.error_code = re->errcode.localValue();
    req.error_name = cmip::cmipErrorName(static_cast<cmip::CmipError>(re->errcode.localValue()));
  }

  if (invoke_id == recovery_invoke_ && recovery_ == RecoveryPhase::kRequested) {
    const auto* rr = std::get_if<cmip::RoseReturnResult>(&apdu);
    RecoveryCount count = rr ? recoveryMessageCount(*rr)
                             : RecoveryCount{std::nullopt, std::string("the NPAC answered the recovery request with ") +
                                                               cmip::roseApduName(apdu)};
    if (!count.count) {
      report_.recovery->error = count.error;
      report_.errors.push_back(count.error);
      recovery_ = RecoveryPhase::kFailed;
      return;
    }
    report_.recovery->message_count = count.count;
    recovery_ = RecoveryPhase::kCounted;
    maybeCompleteRecovery();
  } else if (recovery_ == RecoveryPhase::kCompleting && req.purpose == "recovery-complete") {
    if (std::holds_alternative<cmip::RoseReturnResult>(apdu)) {
      report_.recovery->completed = true;
      recovery_ = RecoveryPhase::kDone;
      spdlog::info("recovery complete");
    } else {
      report_.recovery->error = std::string("the NPAC answered lnpRecoveryComplete with ") + cmip::roseApduName(apdu);
      report_.errors.push_back(report_.recovery->error);
      recovery_ = RecoveryPhase::kFailed;
    }
  }
}

void Simulation::maybeCompleteRecovery() {
  const RecoveryRecord& rec = *report_.recovery;
  int64_t expected = *rec.message_count;
  int64_t got = static_cast<int64_t>(rec.received_during);
  if (got > expected) {
    report_.recovery->error =
        recovery_ == RecoveryPhase::kHolding
            ? "received " + std::to_string(report_.recovery->received_while_holding) +
                  " message(s) during --recovery-hold, after all " + std::to_string(expected) +
                  " recovered ones and before lnpRecoveryComplete: the NPAC should have held them"
            : "received " + std::to_string(got) + " messages during recovery, messageCount said " +
                  std::to_string(expected);
    report_.errors.push_back(report_.recovery->error);
    recovery_ = RecoveryPhase::kFailed;
    recovery_hold_.cancel();
    notify();
    return;
  }
  if (got < expected) return;  // the rest may still be on the way
  if (recovery_ == RecoveryPhase::kHolding) return;  // the timer is already running
  if (options_.recovery.hold.count() <= 0) {
    sendRecoveryComplete();
    return;
  }
  // The provider "processes" what it recovered; the NPAC must push nothing meanwhile
  // (new messages are held until lnpRecoveryComplete). A message that arrives now counts
  // against messageCount and fails the run.
  spdlog::info("recovery: {} messages received, holding {} ms before lnpRecoveryComplete", got,
               options_.recovery.hold.count());
  recovery_ = RecoveryPhase::kHolding;
  recovery_hold_.expires_after(options_.recovery.hold);
  recovery_hold_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopping_ || recovery_ != RecoveryPhase::kHolding) return;
    sendRecoveryComplete();
  });
}

void Simulation::sendRecoveryComplete() {
  spdlog::info("recovery: {} messages received, sending lnpRecoveryComplete", report_.recovery->received_during);
  recovery_ = RecoveryPhase::kCompleting;
  sendRequest(1, recoveryComplete(next_invoke_id_++), "recovery-complete");
}

void Simulation::sendRequest(size_t index, const cmip::RoseInvoke& invoke, const std::string& purpose) {
  RequestRecord r;
  r.invoke_id = invoke.invokeId;
  r.operation = invoke.opcode.isLocal() ? cmip::cmipOpcodeName(static_cast<cmip::CmipOpcode>(invoke.opcode.localValue()))
                                        : "global";
  r.sent_on = index;
  r.purpose = purpose;
  outstanding_[invoke.invokeId] = report_.requests.size();
  if (options_.rebind.enabled) sent_invokes_[invoke.invokeId] = invoke;
  report_.requests.push_back(r);
  ++report_.associations[index - 1].requests_sent;
  clients_[index - 1]->send(invoke);
}

void Simulation::onWritten(size_t index, uint64_t tag) {
  if (tag == 0 || tag > report_.received.size()) return;
  ReceivedRecord& r = report_.received[tag - 1];
  if (!r.answered) {
    r.answered = true;
    r.answered_on = index;
    ++report_.associations[index - 1].answered;
    if (pending_answers_[index - 1] > 0) --pending_answers_[index - 1];
  }
  notify();
}

void Simulation::onEnded(size_t index) {
  const std::string& reason = clients_[index - 1]->endReason();
  if (!ownEnd(reason)) peer_ended_any_ = true;
  // Answers still queued on an association that is gone will never be written.
  pending_answers_[index - 1] = 0;
  // Lost, not ended by us: with two NPAC sites a provider binds to the next one (the NPAC
  // re-sends what was not answered, and those are answered again there). Not during the
  // recovery sequence: NANC 353 ties it to its one association, whose loss ends it.
  if (options_.rebind.enabled && !stopping_ && !ownEnd(reason) && !inRecovery()) {
    ++rebinding_;
    asio::co_spawn(io_, rebindLost(index), asio::detached);
  }
  notify();
}

bool Simulation::anyAlive() const { return anyUp() || rebinding_ > 0; }

bool Simulation::anyUp() const {
  for (const auto& c : clients_)
    if (c->up()) return true;
  return false;
}

bool Simulation::hasGoals() const {
  return options_.expect || options_.send_requests > 0 || !options_.raw_invokes.empty() ||
         options_.recovery.enabled;
}

bool Simulation::goalsMet() const {
  if (options_.expect) {
    if (report_.received.size() < *options_.expect) return false;
    for (uint64_t p : pending_answers_)
      if (p > 0) return false;
  }
  if (options_.send_requests > 0 && replies_to_requests_ < options_.send_requests) return false;
  if (replies_to_raw_ < options_.raw_invokes.size()) return false;
  if (options_.recovery.enabled && recovery_ != RecoveryPhase::kDone) return false;
  return true;
}

int Simulation::exitCode() const {
  if (bind_failure_exit_ != kExitOk) return bind_failure_exit_;
  if (recovery_ == RecoveryPhase::kFailed) return kExitRecoveryFailed;
  // Every association ended by the NPAC (an abort by a replacing bind, a release) and
  // none is left: nothing more can arrive, so the run failed even if its goals had been
  // met before (--keep-running) — a provider whose associations all went must notice.
  if (report_.stop_reason == "all-associations-down" && peer_ended_any_) return kExitAllLost;
  if (hasGoals()) {
    if (goalsMet()) return kExitOk;
    return report_.stop_reason == "all-associations-down" ? kExitAllLost : kExitGoalsNotMet;
  }
  if (report_.stop_reason == "all-associations-down" && peer_ended_any_) return kExitAllLost;
  return kExitOk;
}

}  // namespace npac::soasim
