// Simulation's binding half: one bind (bindOne: sign, connect, AARQ/AARE, verify the
// NPAC), the associations of a run in order (bindRange), and the re-bind policy of
// RebindPolicy (bindWithRebind, rebindLost): the next --npac address after a failed bind
// or a lost association, --rebind-attempts in a row at most, --rebind-delay between them.
// Threading: the simulation's one io_context thread, like the rest of Simulation.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "cmip/npac_bind_refusal.h"
#include "npac/npac-soa-sim/simulation.h"

namespace npac::soasim {
namespace {

using asio::awaitable;
using asio::redirect_error;
using asio::use_awaitable;

std::string userDiagnosticName(int32_t v) {
  static const char* kNames[] = {"null",
                                 "no-reason-given",
                                 "application-context-name-not-supported",
                                 "calling-AP-title-not-recognized",
                                 "calling-AP-invocation-identifier-not-recognized",
                                 "calling-AE-qualifier-not-recognized",
                                 "calling-AE-invocation-identifier-not-recognized",
                                 "called-AP-title-not-recognized",
                                 "called-AP-invocation-identifier-not-recognized",
                                 "called-AE-qualifier-not-recognized",
                                 "called-AE-invocation-identifier-not-recognized",
                                 "authentication-mechanism-name-not-recognized",
                                 "authentication-mechanism-name-required",
                                 "authentication-failure",
                                 "authentication-required"};
  return v >= 0 && v <= cmip::user_diagnostic::kMax ? kNames[v] : "unknown(" + std::to_string(v) + ")";
}

std::string providerDiagnosticName(int32_t v) {
  static const char* kNames[] = {"null", "no-reason-given", "no-common-acse-version"};
  return v >= 0 && v <= cmip::provider_diagnostic::kMax ? kNames[v] : "unknown(" + std::to_string(v) + ")";
}

const char* outcomeName(BindOutcome::Kind k) {
  switch (k) {
    case BindOutcome::Kind::kAccepted: return "accepted";
    case BindOutcome::Kind::kRejected: return "rejected";
    case BindOutcome::Kind::kConnectFailed: return "connect-failed";
    case BindOutcome::Kind::kTimeout: return "timeout";
    case BindOutcome::Kind::kAborted: return "aborted";
    case BindOutcome::Kind::kProtocolError: return "protocol-error";
  }
  return "?";
}

}  // namespace

awaitable<std::optional<tcp::endpoint>> Simulation::resolveNpac(const NpacAddress& address, std::string& why) {
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(address.host, ec);
  if (!ec) co_return tcp::endpoint(ip, address.port);
  tcp::resolver resolver(io_);
  auto results = co_await resolver.async_resolve(address.host, std::to_string(address.port),
                                                 redirect_error(use_awaitable, ec));
  if (ec || results.empty()) {
    why = "cannot resolve '" + address.host + "': " + (ec ? ec.message() : std::string("no address"));
    co_return std::nullopt;
  }
  co_return *results.begin();
}

awaitable<Simulation::BindResult> Simulation::bindOne(size_t i, bool recovery_mode, size_t address_index,
                                                      std::string& why) {
  const NpacAddress& address = options_.npac_addresses[address_index];
  if (bind_tried_[i]) {
    // An association client is one TCP connection and one upper-layer state machine: a
    // re-bind gets a fresh one under the same index.
    clients_[i] = std::make_shared<AssociationClient>(io_.get_executor(), i + 1,
                                                      options_.associations[i].local_address, *this);
  }
  bind_tried_[i] = true;
  AssociationRecord& rec = report_.associations[i];
  rec.npac = address.text();
  association_npac_[i] = address_index;
  const uint64_t sequence = binds_sent_++ == 0 ? first_sequence_ : last_sequence_ + 1;
  BindParameters p{options_.spid,     options_.system_type, options_.user_id,
                   options_.key_list, options_.key_id,      options_.functions,
                   recovery_mode,     sequence,             departureTime()};
  last_sequence_ = std::max(last_sequence_, p.sequence_number);
  rec.sequence_number = p.sequence_number;
  rec.departure_time = p.departure_time.toString();
  rec.recovery_mode = p.recovery_mode;
  rec.bind = BindRecord{};
  rec.bind.attempted = true;
  auto recordAttempt = [&] {
    BindAttemptRecord a;
    a.npac = rec.npac;
    a.outcome = rec.bind.outcome;
    a.detail = rec.bind.detail;
    a.at_ms = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - started_).count();
    rec.binds.push_back(std::move(a));
  };
  auto ac = signedAccessControl(p, key_);
  if (!ac.isOk()) {
    report_.errors.push_back("association " + std::to_string(i + 1) + ": " + ac.status().message());
    rec.bind.outcome = "not-sent";
    rec.bind.detail = ac.status().message();
    recordAttempt();
    bind_failure_exit_ = kExitUsage;
    stop("bind-failed");
    co_return BindResult::kFatal;
  }
  std::optional<tcp::endpoint> npac = co_await resolveNpac(address, why);
  if (!npac) {
    rec.bind.outcome = "connect-failed";
    rec.bind.detail = why;
    recordAttempt();
    co_return BindResult::kConnectFailed;
  }
  BindOutcome outcome = co_await clients_[i]->bind(*npac, makeAarq(ac.value()), options_.bind_timeout);
  rec.local_port = clients_[i]->localPort();
  rec.bind.outcome = outcomeName(outcome.kind);
  rec.bind.accepted = outcome.kind == BindOutcome::Kind::kAccepted;
  rec.bind.detail = outcome.detail;
  if (outcome.aare) {
    const cmip::Aare& aare = *outcome.aare;
    rec.bind.result = static_cast<int32_t>(aare.result);
    bool user = aare.diagnostic.source == cmip::DiagnosticSource::kServiceUser;
    rec.bind.diagnostic_source = user ? "acse-service-user" : "acse-service-provider";
    rec.bind.diagnostic = aare.diagnostic.value;
    rec.bind.diagnostic_name =
        user ? userDiagnosticName(aare.diagnostic.value) : providerDiagnosticName(aare.diagnostic.value);
    auto refusal = cmip::bindRefusalFrom(aare);
    if (!refusal.isOk()) {
      report_.errors.push_back("association " + std::to_string(i + 1) +
                               ": the AARE's bind refusal does not decode: " + refusal.status().toString());
    } else if (refusal->has_value()) {
      rec.bind.refusal_reason = (*refusal)->reason;
      rec.bind.refusal_text = (*refusal)->text;
    }
  }
  if (rec.bind.accepted && !options_.no_npac_verify) {
    // Mutual authentication: a provider does not use an association the NPAC did not
    // sign for (docs/SOA-SIM.md "Verifying the NPAC").
    auto verified = verifyNpacAnswer(*outcome.aare, npac_keys_);
    rec.bind.npac_verified = verified.isOk();
    if (verified.isOk()) {
      rec.bind.npac_system_id = verified.value().systemId;
      rec.bind.npac_key_list = verified.value().listId;
      rec.bind.npac_key_id = verified.value().keyId;
      rec.bind.npac_sequence = verified.value().sequenceNumber;
    } else {
      rec.bind.npac_reason = verified.status().message();
      rec.bind.accepted = false;
      rec.bind.outcome = "npac-unverified";
      rec.bind.detail = "the NPAC is not authenticated: " + verified.status().message() + "; association aborted";
      recordAttempt();
      co_await clients_[i]->refuseAccepted("npac-unverified");
      report_.errors.push_back("association " + std::to_string(i + 1) + " from " + rec.local_address + ": " +
                               rec.bind.detail);
      bind_failure_exit_ = kExitNpacUnverified;
      stop("npac-unverified");
      co_return BindResult::kFatal;
    }
  }
  recordAttempt();
  if (rec.bind.accepted) {
    spdlog::info("association {} from {}:{} bound to {} (sequence {}, recovery mode {})", i + 1, rec.local_address,
                 rec.local_port, rec.npac, p.sequence_number, p.recovery_mode ? "on" : "off");
    if (std::find(report_.bound_to.begin(), report_.bound_to.end(), rec.npac) == report_.bound_to.end()) {
      report_.bound_to.push_back(rec.npac);
    }
    npac_index_ = address_index;
    clients_[i]->start();
    co_return BindResult::kBound;
  }
  if (outcome.kind == BindOutcome::Kind::kRejected) {
    why = "bind rejected by the NPAC: result " + std::to_string(*rec.bind.result) + " (" +
          (*rec.bind.result == 1 ? "rejected-permanent" : "rejected-transient") + "), " +
          rec.bind.diagnostic_source + " diagnostic " + std::to_string(*rec.bind.diagnostic) + " (" +
          rec.bind.diagnostic_name + ")";
    if (!rec.bind.refusal_reason.empty()) {
      why += ": " + rec.bind.refusal_reason;
      if (!rec.bind.refusal_text.empty()) why += " — " + rec.bind.refusal_text;
    }
    rec.bind.detail = why;
    rec.binds.back().detail = why;
    co_return BindResult::kRejected;
  }
  why = outcome.detail;
  co_return BindResult::kConnectFailed;
}

awaitable<bool> Simulation::bindRange(size_t first, size_t last, bool recovery_first) {
  bool any = anyUp();
  for (size_t i = first; i < last && !stopping_; ++i) {
    const bool recovery_mode = recovery_first && i == first;
    if (options_.rebind.enabled) {
      // New associations go where the last bind succeeded (the first address at start).
      if (co_await bindWithRebind(i, recovery_mode, 1, npac_index_)) {
        any = true;
        continue;
      }
      co_return false;
    }
    std::string why;
    BindResult result = co_await bindOne(i, recovery_mode, npac_index_, why);
    if (result == BindResult::kBound) {
      any = true;
      continue;
    }
    if (result == BindResult::kFatal) co_return false;
    const AssociationRecord& rec = report_.associations[i];
    // main() prints report_.errors on stderr when the run ends.
    report_.errors.push_back("association " + std::to_string(i + 1) + " from " + rec.local_address + ": " + why);
    if (!options_.keep_going) {
      bind_failure_exit_ = result == BindResult::kRejected ? kExitBindRejected : kExitConnect;
      stop(result == BindResult::kRejected ? "bind-rejected" : "connect-failed");
      co_return false;
    }
  }
  if (!any && !stopping_) {
    bind_failure_exit_ = kExitConnect;
    stop("no-association-bound");
  }
  co_return any;
}

awaitable<bool> Simulation::bindWithRebind(size_t i, bool recovery_mode, uint32_t attempt, size_t address_index) {
  const size_t n = options_.npac_addresses.size();
  const uint32_t attempts = options_.rebind.attempts;
  while (!stopping_) {
    if (attempt > 1) {
      co_await pause(options_.rebind.delay);
      if (stopping_) break;
    }
    std::string why;
    BindResult result = co_await bindOne(i, recovery_mode, address_index, why);
    if (result == BindResult::kBound) co_return true;
    if (result == BindResult::kFatal) co_return false;
    const std::string failed_at = options_.npac_addresses[address_index].text();
    if (attempt >= attempts) {
      std::string tried;
      for (const NpacAddress& a : options_.npac_addresses) {
        if (!tried.empty()) tried += ", ";
        tried += a.text();
      }
      report_.errors.push_back("association " + std::to_string(i + 1) + " from " +
                               options_.associations[i].local_address + ": re-bind attempts exhausted (" +
                               std::to_string(attempts) + " of " + std::to_string(attempts) + " over " + tried +
                               "); the last, to " + failed_at + ": " + why);
      bind_failure_exit_ = kExitRebindExhausted;
      stop("rebind-attempts-exhausted");
      co_return false;
    }
    address_index = (address_index + 1) % n;
    ++attempt;
    spdlog::warn("association {}: bind to {} failed ({}); re-binding to {}, attempt {} of {}", i + 1, failed_at, why,
                 options_.npac_addresses[address_index].text(), attempt, attempts);
  }
  co_return false;
}

awaitable<void> Simulation::rebindLost(size_t index) {
  const size_t i = index - 1;
  auto lost = clients_[i];
  const std::string lost_at = options_.npac_addresses[association_npac_[i]].text();
  std::string why = lost->endReason();
  if (!lost->endDetail().empty()) why += ": " + lost->endDetail();
  const uint32_t attempts = options_.rebind.attempts;
  const size_t next = (association_npac_[i] + 1) % options_.npac_addresses.size();
  if (attempts < 2) {
    report_.errors.push_back("association " + std::to_string(index) + " to " + lost_at + " lost (" + why +
                             "); re-bind attempts exhausted (--rebind-attempts " + std::to_string(attempts) + ")");
    bind_failure_exit_ = kExitRebindExhausted;
    stop("rebind-attempts-exhausted");
  } else {
    // The bind that was lost counts as attempt 1.
    spdlog::warn("association {} to {} lost ({}); re-binding to {}, attempt 2 of {}", index, lost_at, why,
                 options_.npac_addresses[next].text(), attempts);
    ++report_.associations[i].rebinds;
    co_await bindWithRebind(i, false, 2, next);
    if (clients_[i]->up()) resendOutstanding(index);
  }
  --rebinding_;
  notify();
}

void Simulation::resendOutstanding(size_t index) {
  // Our requests still unanswered on the association that was lost go again on its
  // successor: their replies can no longer come (the NPAC answers on an association
  // that is up, NANC 353 7.b.iv, and the lost one is gone).
  for (auto& [invoke_id, record] : outstanding_) {
    RequestRecord& req = report_.requests[record];
    if (req.sent_on != index || req.purpose == "recovery-request" || req.purpose == "recovery-complete") continue;
    auto it = sent_invokes_.find(invoke_id);
    if (it == sent_invokes_.end()) continue;
    ++req.resent;
    ++report_.associations[index - 1].requests_sent;
    clients_[index - 1]->send(it->second);
  }
}

awaitable<void> Simulation::pause(Millis delay) {
  asio::steady_timer timer(io_, delay);
  pauses_.insert(&timer);
  boost::system::error_code ec;
  co_await timer.async_wait(redirect_error(use_awaitable, ec));
  pauses_.erase(&timer);
}

}  // namespace npac::soasim
