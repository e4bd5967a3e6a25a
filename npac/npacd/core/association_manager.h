// AssociationManager: the running core of npacd — every live association, one
// ProviderEgress per provider, the durable outbound queue, and the CoreService the admin
// API calls. It is the SessionOwner of every Session: binds are admitted here (cmip_bind →
// provisioning → BindGate with the live tunables and associations), outbound messages are
// pulled from the OutboundQueue for providers with bound associations and placed one PDU
// per association by ProviderEgress (round robin by default, NANC 353), responses from
// any association of the provider acknowledge them, a lost association's in-flight
// requests go to the survivors or back to the queue (nothing lost).
//
// Threading: single strand. Every method except the CoreService ones runs on the core
// io_context thread, which also runs every Session; no locks. The CoreService methods are
// called from the admin API's thread and only post onto the core io_context. The
// QueueWriter completes on its own thread; its completions are posted back as well.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include "associations/bind_gate.h"
#include "associations/provider_egress.h"
#include "cmip/cmip_operations.h"
#include "db/association_log_store.h"
#include "db/database.h"
#include "db/outbound_queue.h"
#include "db/queue_writer.h"
#include "npac/npacd/core/core_service.h"
#include "npac/npacd/core/session.h"
#include "tunables/registry.h"

namespace npac::npacd {

// Messages pulled from the queue per provider per delivery round.
inline constexpr std::size_t kDeliveryBatch = 256;
// Queue priority of an answer to a provider's request: above every priority the API
// accepts (0..9, api_json.cc), so answers leave before the provider's queued messages.
inline constexpr int kResponsePriority = 10;
// TCP keepalive on every association (NANC 301: "TCP keepalive is on as well").
inline constexpr std::chrono::seconds kKeepaliveIdle{60};
inline constexpr std::chrono::seconds kKeepaliveInterval{10};
inline constexpr int kKeepaliveProbes = 5;
// Period of the response-timeout / retry scan.
inline constexpr std::chrono::milliseconds kTimerPeriod{500};
// Graceful shutdown: how long associations may keep answering what is outstanding
// before they are released anyway.
inline constexpr std::chrono::seconds kDrainTimeout{2};

// The association function a queued message is routed by: the lowest one it needs (the
// queue only hands out messages whose every function the association has, NANC 111).
associations::AssociationFunction routingFunction(std::uint32_t mask);

class AssociationManager : public CoreService, public SessionOwner {
 public:
  // `db` and `progress_db` are the core's own connections (core thread only): `db` for
  // decisions that must be as durable as --durability (bind sequence numbers, the
  // association log), `progress_db` for the outbound queue's delivery progress (sent,
  // acknowledged, failed), which may run with synchronous=NORMAL: losing progress only
  // repeats a delivery. Both may be the same connection.
  AssociationManager(boost::asio::io_context& io, db::Database& db, db::Database& progress_db,
                     db::QueueWriter& writer,
                     tunables::TunableRegistry& registry, db::Clock clock);
  ~AssociationManager() override;

  // Listens for associations on `endpoint`; false (and `*error`) if it cannot bind.
  bool listen(const boost::asio::ip::tcp::endpoint& endpoint, std::string* error);
  std::uint16_t port() const;
  // Startup: messages left "sent" by a previous run go back to queued (nothing lost
  // across kill -9). Call before io runs.
  db::Status recoverInterrupted();
  // Graceful shutdown: stop accepting, release every association after draining
  // (bounded), then `done` on the core thread.
  void shutdown(std::function<void()> done);

  // CoreService (API thread; posts onto the core).
  void submit(std::vector<OutboundMessage> messages, SubmitDone done) override;
  void pollInbound(InboundPoll poll, PollDone done) override;
  void respond(InboundRequestId id, InboundResponse response, RespondDone done) override;
  void listAssociations(ListDone done) override;
  void queueView(std::string spid, QueueViewDone done) override;
  void abortAssociation(db::AssociationId id, std::string actor, StatusDone done) override;
  void releaseProvider(std::string spid, std::string reason, CountDone done) override;

  // SessionOwner (core thread).
  void onConnectIndication(const std::shared_ptr<Session>& session,
                           const cmip::ConnectIndication& indication) override;
  void onRose(const std::shared_ptr<Session>& session, cmip::RoseApdu apdu) override;
  void onClosed(const std::shared_ptr<Session>& session, const std::string& reason,
                bool orderly) override;
  // An unconfirmed PDU (tag = its message id) is on the wire: that is its acknowledgement.
  void onWritten(const std::shared_ptr<Session>& session, std::int64_t tag) override;

 private:
  struct Provider {
    std::unique_ptr<associations::ProviderEgress> egress;
    std::map<std::int64_t, std::shared_ptr<Session>> sessions;  // bound, by association id
    associations::InvokeId next_unconfirmed_id = 0x40000000;
  };
  struct Heartbeat {
    std::int32_t invoke_id = 0;
    std::chrono::steady_clock::time_point sent_at;
  };
  struct PendingPoll {
    InboundPoll poll;
    PollDone done;
    std::shared_ptr<boost::asio::steady_timer> timer;
  };

  void acceptLoop();
  // congestion_window, response_timeout, retry_attempts, egress_policy changed for `spid`
  // ("" = globally): applied to the bound providers concerned.
  void applyTunables(const std::string& spid);
  // association_manager_recovery.cc: lnpRecoveryRequest / lnpRecoveryComplete; false if
  // `invoke` is not one of them.
  bool handleProviderAction(const std::shared_ptr<Session>& session, const cmip::CmipInvoke& invoke);
  // A provider's Invoke that does not decode (cmip::fromRose refused it with `why`): ROSE
  // Reject on its association, one log line; it is not forwarded to the application.
  void rejectInvoke(Session& session, const cmip::RoseInvoke& invoke, const cmip::Status& why);
  // association_manager_heartbeat.cc (NANC 404): send heartbeats after
  // heartbeat_interval of silence, abort at heartbeat_timeout; true if `invoke_id` was a
  // heartbeat's answer on the provider.
  void heartbeats(Provider& provider, const std::string& spid);
  bool heartbeatAnswered(std::int32_t invoke_id);
  void rejectBind(const std::shared_ptr<Session>& session, const cmip::ConnectIndication& ind,
                  const std::string& spid, std::uint32_t mask, bool recovery,
                  const std::string& code, const std::string& reason, std::int32_t diagnostic,
                  cmip::AssociateResult result = cmip::AssociateResult::kRejectedPermanent);
  void rejectStorageUnavailable(const std::shared_ptr<Session>& session,
                                const cmip::ConnectIndication& ind,
                                const associations::BindRequest& request,
                                const db::Status& status);
  Provider* providerFor(const std::string& spid, bool create);
  void deliver(const std::string& spid);
  void scheduleDelivery(const std::string& spid);
  // Writes a queued PDU on the association `t` names: an Invoke gets its invoke id (the
  // transmission's, or a fresh one for an unconfirmed operation); a `response` (an
  // answer to the provider's own request) leaves as stored. Unconfirmed PDUs are tagged
  // with their message id so onWritten() acknowledges them.
  bool writeTransmission(Provider& provider, const associations::Transmission& t,
                         const std::vector<std::uint8_t>& queued_pdu, bool response = false);
  void lose(Provider& provider, const std::string& spid, std::int64_t association);
  // Writes a request that moved (SRR off, a retry elsewhere) and points its queue row at
  // the association it now waits on.
  void move(Provider& provider, const associations::Transmission& t);
  // Messages the egress could not place go back to queued (by id).
  void requeue(const std::string& spid, const std::vector<associations::MessageId>& ids);
  void queueAck(db::MessageId id);  // acknowledged in the next flushAcks()
  void flushAcks();
  void onTimer();
  void answerPolls();
  // At stop: a warning per provider whose requests the application never answered.
  void reportUnanswered() const;
  void logEvent(db::AssociationEventKind kind, const Session& session, const std::string& reason);
  db::TimeMs nowMs() const { return clock_(); }

  boost::asio::io_context& io_;
  db::Database& db_;
  db::OutboundQueue queue_;
  db::QueueWriter& writer_;
  tunables::TunableRegistry& registry_;
  db::Clock clock_;
  associations::BindGate gate_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer timer_;
  std::map<std::string, Provider> providers_;
  std::set<std::shared_ptr<Session>> unbound_;  // accepted TCP, not yet bound
  std::set<std::string> delivery_scheduled_;
  std::vector<db::MessageId> pending_acks_;
  bool ack_flush_scheduled_ = false;
  std::int64_t next_association_id_;
  std::uint64_t bind_order_ = 0;
  // Inbound requests from providers, for the NPAC application.
  std::map<InboundRequestId, InboundRequest> inbound_waiting_;  // not yet handed out
  std::map<InboundRequestId, InboundRequest> inbound_open_;     // handed out, unanswered
  InboundRequestId next_inbound_id_ = 1;
  std::vector<std::shared_ptr<PendingPoll>> polls_;
  std::map<std::int64_t, Heartbeat> heartbeats_;  // by association: one unanswered at most
  bool stopping_ = false;
  std::vector<tunables::TunableRegistry::Subscription> subscriptions_;
};

}  // namespace npac::npacd
