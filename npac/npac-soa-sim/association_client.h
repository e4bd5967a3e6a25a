// AssociationClient: one association of the simulated SOA/LSMS to the NPAC — the TCP
// socket (bound to a chosen local address before connect, so the NPAC sees that NSAP),
// the initiator half of cmip::UpperLayers, a reader coroutine and a writer coroutine fed
// by a queue.
//
// Life: bind() connects, sends CR → CN+CP+AARQ and waits for the AARE (ConnectConfirm)
// within a timeout; start() then runs the reader and the writer. Everything the NPAC
// sends after the bind reaches the AssociationObserver as ROSE APDUs; the association's
// end (release, peer abort, connection loss, our drop) is reported exactly once.
// Outgoing items may carry a not-before time (a configured answer delay): the queue is
// FIFO, so with one delay per association answers leave in arrival order.
//
// Threading: every member runs on the one io_context thread of the simulation; no
// locking. Owned through shared_ptr so the coroutines keep it alive until they finish.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmip/upper_layers.h"
#include "npac/npac-soa-sim/options.h"

namespace npac::soasim {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class AssociationObserver {
 public:
  virtual ~AssociationObserver() = default;
  virtual void onApdu(size_t index, const cmip::RoseApdu& apdu) = 0;
  // An item queued with a non-zero tag has been written to the socket.
  virtual void onWritten(size_t index, uint64_t tag) = 0;
  virtual void onEnded(size_t index) = 0;
};

struct BindOutcome {
  enum class Kind { kAccepted, kRejected, kConnectFailed, kTimeout, kAborted, kProtocolError };
  Kind kind = Kind::kConnectFailed;
  std::optional<cmip::Aare> aare;
  std::string detail;  // the sentence for stderr
};

class AssociationClient : public std::enable_shared_from_this<AssociationClient> {
 public:
  AssociationClient(asio::any_io_executor executor, size_t index, std::string local_address,
                    AssociationObserver& observer);
  AssociationClient(const AssociationClient&) = delete;
  AssociationClient& operator=(const AssociationClient&) = delete;

  asio::awaitable<BindOutcome> bind(tcp::endpoint npac, cmip::Aarq aarq, Millis timeout);
  // After an accepted bind: runs the reader and the writer; APDUs that arrived with the
  // AARE are delivered first.
  void start();

  // Queue one ROSE APDU; `tag` (non-zero) is reported by onWritten.
  void send(const cmip::RoseApdu& apdu, Millis delay = Millis(0), uint64_t tag = 0);
  // Stop delivering input, and drop the association once what is queued has left.
  void dropAfterQueued(DropMode mode);
  // RLRQ; the end comes with the RLRE (ended() becomes true) or with close().
  void requestRelease();
  // Ends the association now (if it has not ended): `reason` goes in the report.
  void close(const std::string& reason);
  // After an accepted bind the provider will not use (the NPAC did not authenticate
  // itself): sends an ACSE ABRT (source acse-service-user, X.227 §7.3) and closes,
  // before start(). The observer hears nothing: the association never started.
  asio::awaitable<void> refuseAccepted(std::string reason);

  bool up() const { return started_ && !ended_; }
  bool ended() const { return ended_; }
  size_t index() const { return index_; }
  const std::string& localAddress() const { return local_address_; }
  uint16_t localPort() const { return local_port_; }
  const std::string& endReason() const { return end_reason_; }
  const std::string& endDetail() const { return end_detail_; }

 private:
  struct Outgoing {
    std::vector<uint8_t> bytes;
    std::chrono::steady_clock::time_point not_before;
    uint64_t tag = 0;
    std::optional<DropMode> then_drop;  // close after writing (kTcp: with a reset)
  };

  asio::awaitable<void> reader();
  asio::awaitable<void> writer();
  void handle(cmip::UpperLayersEvent& event);
  void enqueue(Outgoing item);
  void end(std::string reason, std::string detail);
  void closeSocket(bool reset);

  asio::any_io_executor executor_;
  size_t index_;
  std::string local_address_;
  uint16_t local_port_ = 0;
  AssociationObserver& observer_;
  tcp::socket socket_;
  cmip::UpperLayers upper_;
  std::deque<Outgoing> queue_;
  asio::steady_timer wake_;  // the writer's condition: cancelled when work arrives
  std::vector<cmip::UpperLayersEvent> pending_;  // arrived with the AARE
  bool started_ = false;
  bool ended_ = false;
  bool input_stopped_ = false;
  bool writer_closing_ = false;
  std::string end_reason_;
  std::string end_detail_;
};

}  // namespace npac::soasim
