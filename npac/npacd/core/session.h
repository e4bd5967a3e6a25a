// Session: one TCP connection to a provider — the socket, its cmip::UpperLayers (responder
// role), and the parts it owns: a SessionReader (session_reader.h: an async read loop
// feeding received bytes to the stack), a SessionWriter (session_writer.h: async gathered
// writes draining a bounded queue of frames) and its SessionTraffic counts. The parts
// decide nothing; the session does, through their hooks. The Asio examples'
// "session" role: it owns the socket, lives as long as a pending handler holds
// shared_from_this(), and reports everything it learns to its SessionOwner (the
// AssociationManager), which decides. tests/npac/npacd/core/session_test.cc drives one
// in-process over loopback.
//
// Life: start() → the owner answers the ConnectIndication with accept()/reject() (the
// Listener closes a session not bound within bind_timeout) → bound: ROSE APDUs both ways
// → release (ours: requestRelease(); theirs: answered at once) or abort (ours, theirs, a
// protocol error, the write queue over its limit, or the connection lost). Whatever the
// end, the owner hears onClosed() exactly once (only for a session it accepted); a session
// that ends before binding calls its unbound-end handler instead (the Listener's).
//
// Memory: an idle connection holds no read buffer. The reader waits for the socket to be
// readable and then reads into one buffer per thread (kReadChunk, a whole TPKT of at most
// 65,535 octets, RFC 1006 §6); the stack keeps only the octets of an unfinished TPKT. The
// writer's queue is bounded (kMaxQueuedWriteBytes).
//
// Hand-off (npacd --threads N, core_shards.h): a connection is accepted on one core
// thread, but its provider's logical association lives on the thread its SPID is sharded
// to. The owner, learning the SPID from the ConnectIndication, calls handOff(): the
// session gives up its descriptor (basic_socket::release) and everything it knows — the
// upper layers' state, the frames not yet written, the indication and any event after it
// — as a Handoff, which the other thread turns back into a Session (the Handoff
// constructor, then resume()). Nothing is sent or lost in between; a write under way is
// completed first (SessionWriter::stopBetweenFrames).
//
// Threading: every method runs on the thread of the io_context its socket belongs to (one
// core thread; a Handoff is the only thing that crosses to another), and so do its parts.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

#include "associations/nsap.h"
#include "cmip/upper_layers.h"
#include "common/timer.h"
#include "npac/npacd/core/session_reader.h"
#include "npac/npacd/core/session_writer.h"

namespace npac::npacd {

class Session;

class SessionOwner {
 public:
  virtual ~SessionOwner() = default;
  // The peer's AARQ. The owner answers with session->accept() or session->reject().
  virtual void onConnectIndication(const std::shared_ptr<Session>& session,
                                   const cmip::ConnectIndication& indication) = 0;
  // A ROSE APDU on a bound association.
  virtual void onRose(const std::shared_ptr<Session>& session, cmip::RoseApdu apdu) = 0;
  // A bound association ended (released, aborted by either side, or connection lost).
  virtual void onClosed(const std::shared_ptr<Session>& session, const std::string& reason,
                        bool orderly) = 0;
  // The frame sent with sendRoseEncoded(apdu, tag) (tag != 0) was written completely to
  // the socket while the association was still up. Not called once it has ended: what
  // was still queued then counts as lost with it.
  virtual void onWritten(const std::shared_ptr<Session>& session, std::int64_t tag) = 0;
};

// Wait for the peer's RLRE after our RLRQ before closing anyway.
inline constexpr std::chrono::seconds kReleaseTimeout{3};

// Why an association was released: the reason onClosed() reports for an orderly end, and
// the association log's `reason` for a release row (docs/OPERATIONS.md "Why an
// association ended"). Ours: whatever set setReleaseReason() before the RLRQ.
inline constexpr const char* kReleasedByPeer = "released-by-peer";     // the provider's RLRQ
inline constexpr const char* kReleaseSrrOff = "srr-off";               // NANC 353: SRR turned off
inline constexpr const char* kReleaseProviderDisabled = "provider-disabled";
inline constexpr const char* kReleaseShutdown = "shutdown";            // npacd stopping
inline constexpr const char* kReleased = "released";                   // ours, no reason given

// What one connection carried: its association's counts in listings (SessionLink::describe).
// A plain part of its Session, on the session's thread.
struct SessionTraffic {
  std::uint64_t sent = 0;      // ROSE APDUs the stack took for sending (sendRoseEncoded)
  std::uint64_t received = 0;  // ROSE APDUs from the provider (a Handoff carries them on)
  // PDUs sent on it that had been sent before (a retry, or moved from another association);
  // counted by the owner.
  std::uint64_t retransmissions = 0;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // An unbound connection on its way to another core thread (handOff()).
  struct Handoff {
    Handoff(associations::Nsap from_nsap, std::string from_peer)
        : nsap(from_nsap), peer(std::move(from_peer)) {}
    int fd = -1;               // the released descriptor, still open
    bool protocol_v6 = false;  // of the socket the descriptor is re-opened as
    associations::Nsap nsap;
    std::string peer;
    std::unique_ptr<cmip::UpperLayers> upper;
    std::vector<cmip::UpperLayersEvent> events;  // the ConnectIndication first
    std::vector<SessionWriter::Frame> frames;    // not written yet, in order
    std::uint64_t received = 0;
  };

  // `release_timer`: the release timeout's (common/timer.h), on `socket`'s thread.
  // `upper`: the stack to go on with (a Handoff's); none: a new one, in the responder role.
  Session(boost::asio::ip::tcp::socket socket, associations::Nsap nsap, std::string peer,
          SessionOwner& owner, std::unique_ptr<common::Timer> release_timer,
          std::unique_ptr<cmip::UpperLayers> upper = nullptr);
  // The session a Handoff continues as, on `socket`'s thread; resume() goes on with it.
  Session(boost::asio::ip::tcp::socket socket, Handoff handoff, SessionOwner& owner,
          std::unique_ptr<common::Timer> release_timer);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts the reader (the writer starts with the first frame queued).
  void start();
  // A handed-off session: writes what was queued, handles the carried events (the owner
  // hears the ConnectIndication again), then reads on.
  void resume();
  // Only from onConnectIndication, before accept()/reject(): once this returns to the
  // session, it passes itself to `to` as a Handoff (at once, or when a write under way
  // has completed) and is finished here; the owner hears nothing more of it.
  void handOff(std::function<void(Handoff)> to);
  // Only from onConnectIndication: the owner answers later, from another handler on this
  // thread (binds are admitted several to one transaction, bind_queue.h). Until accept()
  // or reject(), whatever followed the indication waits and nothing more is read; then it
  // is handled in order. A session that ends meanwhile (closed()) needs no answer.
  void decideLater();
  // Called once if the session ends before it was bound (peer closed, refused, dropped).
  void setUnboundEndHandler(std::function<void()> handler) { unbound_end_ = std::move(handler); }

  // Sends `aare` (result accepted; the owner has put the NPAC's access control in its
  // user information) and the association is bound.
  void accept(std::int64_t association_id, const cmip::Aare& aare);
  void reject(const cmip::Aare& refusal);        // AARE rejected, then close
  // A pre-encoded ROSE APDU; false if the association is not bound (or went away). A
  // non-zero `tag` is reported back through SessionOwner::onWritten once written.
  bool sendRoseEncoded(const std::vector<std::uint8_t>& apdu, std::int64_t tag = 0);
  // Why our RLRQ will be sent (kReleaseSrrOff, …), set when the decision to release is
  // taken; the first reason set stays (a drain that began for SRR off stays srr-off).
  void setReleaseReason(const std::string& reason) {
    if (release_reason_.empty()) release_reason_ = reason;
  }
  void requestRelease();                          // RLRQ normal; close on RLRE or timeout
  void abort(const std::string& reason);          // ABRT (service user), then close
  void close(const std::string& reason);          // TCP close; onClosed if it was bound

  bool bound() const { return bound_ && !closed_; }
  bool releasing() const { return releasing_; }
  bool closed() const { return closed_; }
  std::int64_t associationId() const { return association_id_; }
  const associations::Nsap& nsap() const { return nsap_; }
  const std::string& peer() const { return peer_; }
  // Its counts; the owner adds the retransmissions.
  SessionTraffic& traffic() { return traffic_; }

  // Set by the owner once bound (for listings and logs).
  std::string spid;
  std::uint32_t function_mask = 0;
  bool recovery_mode = false;
  std::int64_t bound_at_ms = 0;

 private:
  void handle(std::vector<cmip::UpperLayersEvent>& events);
  void completeHandOff(std::vector<cmip::UpperLayersEvent> rest);
  // After the owner decided (decideLater): the events that waited, then reading again.
  void resumeAfterDecision();
  void finish(const std::string& reason, bool orderly);

  boost::asio::ip::tcp::socket socket_;
  associations::Nsap nsap_;
  std::string peer_;
  SessionOwner& owner_;
  std::unique_ptr<cmip::UpperLayers> upper_;
  std::unique_ptr<common::Timer> timer_;  // release timeout
  std::function<void()> unbound_end_;
  SessionReader reader_;  // on socket_
  SessionWriter writer_;  // on socket_
  bool close_after_write_ = false;
  bool bound_ = false;
  bool releasing_ = false;
  std::string release_reason_;  // why we release; empty: kReleased
  bool closed_ = false;
  std::int64_t association_id_ = 0;
  SessionTraffic traffic_;
  bool handing_off_ = false;
  std::function<void(Handoff)> handoff_to_;
  std::vector<cmip::UpperLayersEvent> pending_handoff_;  // while a write completes
  std::vector<cmip::UpperLayersEvent> resume_events_;    // a handed-off session's
  bool deciding_ = false;                                // decideLater() until accept/reject
  std::vector<cmip::UpperLayersEvent> held_events_;      // what followed the indication
};

}  // namespace npac::npacd
