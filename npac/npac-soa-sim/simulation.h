// Simulation: one run of the simulated SOA/LSMS — binds the associations in the order of
// --from (each bind waits for the previous AARE, so "earliest bound" is well defined),
// runs the recovery sequence when asked (optionally holding --recovery-hold between the
// last recovered message and lnpRecoveryComplete), sends its own requests round robin, answers
// the NPAC, drops associations on cue, and stops when its goals are met, at --duration,
// on SIGTERM/SIGINT, or when no association is left; then releases every association
// (RLRQ, RLRE awaited up to --release-timeout) and fills the RunReport.
//
// With several --npac (the NPAC's two sites) or --rebind-attempts, a failed bind or a
// lost association binds that association again at the next address (RebindPolicy,
// simulation_bind.cc); its work continues there.
//
// Goals: --expect N (N NPAC invokes received over all associations, heartbeats not
// counted, and every answer written), --send-requests N (a reply to each),
// --send-raw-invoke (a reply to each), --recovery (the sequence finished). With no goal the run lasts until --duration or a signal.
//
// Exit codes (kExit*): documented in docs/SOA-SIM.md and `npac-soa-sim --help`.
//
// Threading: everything runs on one io_context thread; run() drives it to completion.
#pragma once

#include <utility>

#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "npac/npac-soa-sim/association_client.h"
#include "npac/npac-soa-sim/bind_request.h"
#include "npac/npac-soa-sim/options.h"
#include "npac/npac-soa-sim/report.h"

namespace npac::soasim {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitKey = 3;
inline constexpr int kExitConnect = 4;      // connection refused, local address, no AARE
inline constexpr int kExitBindRejected = 5;  // the AARE said rejected
inline constexpr int kExitGoalsNotMet = 6;   // --duration or a signal came first
inline constexpr int kExitAllLost = 7;       // every association ended before the goals
inline constexpr int kExitRecoveryFailed = 8;
inline constexpr int kExitNpacUnverified = 9;  // the accepting AARE did not authenticate the NPAC
inline constexpr int kExitRebindExhausted = 10;  // --rebind-attempts binds in a row failed

class Simulation : public AssociationObserver {
 public:
  // `npac_keys`: the installed NPAC public keys (empty with --no-npac-verify).
  Simulation(SimOptions options, ProviderKey key, NpacKeyRing npac_keys);
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Runs to the end; returns the exit code (also in report().exit_code).
  int run();
  const RunReport& report() const { return report_; }

  void onApdu(size_t index, const cmip::RoseApdu& apdu) override;
  void onWritten(size_t index, uint64_t tag) override;
  void onEnded(size_t index) override;

 private:
  // kHolding: every recovered message is in; --recovery-hold runs before lnpRecoveryComplete.
  enum class RecoveryPhase { kOff, kRequested, kCounted, kHolding, kCompleting, kDone, kFailed };

  asio::awaitable<void> main();
  // Until `done` or a stop; waitFor ignores stops (the release phase).
  asio::awaitable<void> waitUntil(const std::function<bool()>& done);
  asio::awaitable<void> waitFor(const std::function<bool()>& done);
  enum class BindResult { kBound, kRejected, kConnectFailed, kFatal };  // kFatal: stop() called
  asio::awaitable<bool> bindRange(size_t first, size_t last, bool recovery_first);
  // One bind of association i+1 to --npac address `address_index`, on a fresh client if
  // the index was tried before; `why` says what failed.
  asio::awaitable<BindResult> bindOne(size_t i, bool recovery_mode, size_t address_index, std::string& why);
  // The re-bind policy (RebindPolicy): binds until one is accepted, moving to the next
  // address after each failure, from attempt `attempt` of --rebind-attempts; when they
  // run out, stops the run (kExitRebindExhausted). True when bound.
  asio::awaitable<bool> bindWithRebind(size_t i, bool recovery_mode, uint32_t attempt, size_t address_index);
  // Association `index` was lost: re-binds it to the next address (rebinding_ counts it).
  asio::awaitable<void> rebindLost(size_t index);
  void resendOutstanding(size_t index);
  asio::awaitable<void> pause(Millis delay);  // cancelled by stop()
  asio::awaitable<std::optional<tcp::endpoint>> resolveNpac(const NpacAddress& address, std::string& why);
  asio::awaitable<void> releaseAll();
  void onInvoke(size_t index, const cmip::RoseInvoke& invoke);
  void onReply(size_t index, int32_t invoke_id, const cmip::RoseApdu& apdu);
  // Where the answer to a request that arrived on `index` goes (--answer-on).
  size_t answerIndex(size_t index) const;
  void sendRequest(size_t index, const cmip::RoseInvoke& invoke, const std::string& purpose);
  void maybeCompleteRecovery();
  void sendRecoveryComplete();
  bool inRecovery() const;  // recovery mode on our side: lnpRecoveryComplete not yet sent
  void stop(std::string reason);
  void notify() { progress_.cancel(); }
  bool hasGoals() const;
  bool goalsMet() const;  // true when there are none
  bool anyUp() const;
  bool anyAlive() const;  // up, or being re-bound
  int exitCode() const;
  int64_t nowMillis() const;
  // Now plus --departure-offset, in whole seconds: the bind's departure time.
  cmip::GeneralizedTime departureTime() const;

  SimOptions options_;
  ProviderKey key_;
  NpacKeyRing npac_keys_;
  asio::io_context io_;
  asio::steady_timer progress_;
  asio::steady_timer recovery_hold_;  // --recovery-hold; cancelled by stop()
  std::chrono::steady_clock::time_point started_;
  std::vector<std::shared_ptr<AssociationClient>> clients_;  // index i-1
  RunReport report_;
  uint64_t first_sequence_ = 0;
  uint64_t last_sequence_ = 0;
  std::vector<uint64_t> pending_answers_;  // per association: answers queued, not yet written
  std::vector<bool> bind_tried_;           // per association: its client has been used
  std::vector<size_t> association_npac_;   // per association: the --npac index of its last bind
  size_t npac_index_ = 0;                  // the --npac index of the last accepted bind
  uint64_t binds_sent_ = 0;
  int rebinding_ = 0;                      // re-binds of lost associations under way
  std::set<asio::steady_timer*> pauses_;   // --rebind-delay waits, cancelled by stop()
  std::map<int32_t, cmip::RoseInvoke> sent_invokes_;  // with re-binding: ours, unanswered
  int32_t next_invoke_id_ = 1;
  std::map<int32_t, size_t> outstanding_;              // our invoke id → report_.requests index
  std::map<std::pair<int32_t, std::string>, uint64_t> seen_;  // (invoke id, argument hex) → seq
  uint64_t replies_to_requests_ = 0;
  uint64_t replies_to_raw_ = 0;  // replies to --send-raw-invoke
  RecoveryPhase recovery_ = RecoveryPhase::kOff;
  int32_t recovery_invoke_ = 0;
  bool stopping_ = false;
  bool peer_ended_any_ = false;  // an association ended other than by our own hand
  int bind_failure_exit_ = kExitOk;
};

}  // namespace npac::soasim
