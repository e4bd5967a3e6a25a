#include "npac/npacd/core/session.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace npac::npacd {
namespace {

cmip::UpperLayersConfig responderConfig() {
  cmip::UpperLayersConfig config;
  config.role = cmip::UpperLayersRole::kResponder;
  return config;
}

}  // namespace

Session::Session(boost::asio::ip::tcp::socket socket, associations::Nsap nsap, std::string peer,
                 SessionOwner& owner, std::unique_ptr<common::Timer> release_timer,
                 std::unique_ptr<cmip::UpperLayers> upper)
    : socket_(std::move(socket)),
      nsap_(nsap),
      peer_(std::move(peer)),
      owner_(owner),
      upper_(upper ? std::move(upper) : std::make_unique<cmip::UpperLayers>(responderConfig())),
      timer_(std::move(release_timer)),
      reader_(socket_, SessionReader::Hooks{
          .keep_alive = [this] { return std::shared_ptr<void>(shared_from_this()); },
          .ended = [this] { return closed_; },
          // Not once the session ended, is leaving for another thread or awaits a decision.
          .may_read = [this] { return !closed_ && !close_after_write_ && !handing_off_ && !deciding_; },
          .received =
              [this](cmip::Bytes octets) {
                std::vector<cmip::UpperLayersEvent> events;
                std::vector<std::uint8_t> out;
                upper_->receive(octets, events, out);
                if (!out.empty()) writer_.enqueue(std::move(out));
                handle(events);
              },
          .lost = [this](const std::string& reason) { finish(reason, false); },
      }),
      writer_(socket_, SessionWriter::Hooks{
          .keep_alive = [this] { return std::shared_ptr<void>(shared_from_this()); },
          .written = [this](std::int64_t tag) { if (bound()) owner_.onWritten(shared_from_this(), tag); },
          .over_limit =
              [this](std::size_t queued) {
                spdlog::warn("association from {} (SPID {}): peer not reading, {} bytes queued: aborted",
                             peer_, spid.empty() ? "-" : spid, queued);
                finish("write queue over its limit", false);
                close("write queue over its limit");
              },
          .failed =
              [this](const boost::system::error_code& ec) {
                finish("write failed: " + ec.message(), false);
                boost::system::error_code ignored;
                socket_.close(ignored);
              },
          .drained =
              [this] {
                if (!closed_ && !close_after_write_) return;
                boost::system::error_code ignored;
                timer_->cancel();
                socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
                socket_.close(ignored);
              },
      }) {}

Session::Session(boost::asio::ip::tcp::socket socket, Handoff handoff, SessionOwner& owner,
                 std::unique_ptr<common::Timer> release_timer)
    : Session(std::move(socket), handoff.nsap, std::move(handoff.peer), owner, std::move(release_timer),
              std::move(handoff.upper)) {
  traffic_.received = handoff.received;
  writer_.adopt(std::move(handoff.frames));
  resume_events_ = std::move(handoff.events);
}

void Session::resume() {
  boost::system::error_code ignored;
  socket_.non_blocking(true, ignored);
  writer_.flush();
  std::vector<cmip::UpperLayersEvent> events = std::move(resume_events_);
  resume_events_.clear();
  handle(events);
  reader_.readOn();
}

void Session::decideLater() {
  if (bound_ || closed_ || handing_off_) return;
  deciding_ = true;
}

void Session::resumeAfterDecision() {
  if (!deciding_) return;
  deciding_ = false;
  if (closed_ || close_after_write_) {
    held_events_.clear();
    return;
  }
  // Posted: the owner is still deciding other binds in the handler that accepted this one.
  boost::asio::post(socket_.get_executor(), [self = shared_from_this()] {
    std::vector<cmip::UpperLayersEvent> events = std::move(self->held_events_);
    self->held_events_.clear();
    self->handle(events);
    self->reader_.readOn();
  });
}

void Session::handOff(std::function<void(Handoff)> to) {
  if (bound_ || closed_ || handing_off_) return;
  handing_off_ = true;
  handoff_to_ = std::move(to);
  unbound_end_ = nullptr;  // the owner has forgotten it already; the new session carries on
}

// The session leaves this thread: everything it knows goes into the Handoff, the socket's
// descriptor is released (basic_socket::release: outstanding operations end with
// operation_aborted, and the descriptor stays open for the new owner) and this object is
// finished without a word to anybody. Only between frames: never while a write is under
// way, so no frame is cut.
void Session::completeHandOff(std::vector<cmip::UpperLayersEvent> rest) {
  Handoff handoff(nsap_, peer_);
  handoff.upper = std::move(upper_);
  handoff.received = traffic_.received;
  handoff.events = std::move(rest);
  handoff.frames = writer_.takeFrames();
  closed_ = true;
  timer_->cancel();
  boost::system::error_code ec;
  handoff.protocol_v6 = socket_.local_endpoint(ec).address().is_v6();
  handoff.fd = ec ? -1 : socket_.release(ec);
  if (ec) {
    spdlog::warn("association from {} (NSAP {}): could not be handed to its provider's core "
                 "thread ({}): closed", peer_, nsap_.toHex(), ec.message());
    socket_.close(ec);
    return;
  }
  auto to = std::move(handoff_to_);
  handoff_to_ = nullptr;
  to(std::move(handoff));
}

void Session::start() {
  boost::system::error_code ignored;
  socket_.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  socket_.non_blocking(true, ignored);
  reader_.start();
}

void Session::handle(std::vector<cmip::UpperLayersEvent>& events) {
  auto self = shared_from_this();
  for (std::size_t i = 0; i < events.size(); ++i) {
    cmip::UpperLayersEvent& event = events[i];
    if (closed_ || close_after_write_) return;
    if (auto* connect = std::get_if<cmip::ConnectIndication>(&event)) {
      owner_.onConnectIndication(self, *connect);
      if (handing_off_) {
        // The owner hands the connection to another core thread (--threads): the
        // indication and whatever followed it are handled there, in order.
        pending_handoff_.assign(std::make_move_iterator(events.begin() + static_cast<std::ptrdiff_t>(i)),
                                std::make_move_iterator(events.end()));
        // Between frames: at once, or once the write under way has completed.
        writer_.stopBetweenFrames([this] { if (!closed_) completeHandOff(std::move(pending_handoff_)); });
        return;
      }
      if (deciding_) {
        held_events_.assign(std::make_move_iterator(events.begin() + static_cast<std::ptrdiff_t>(i) + 1),
                            std::make_move_iterator(events.end()));
        return;  // handled once the owner has answered (resumeAfterDecision)
      }
    } else if (auto* data = std::get_if<cmip::DataIndication>(&event)) {
      ++traffic_.received;
      if (bound_) owner_.onRose(self, std::move(data->apdu));
    } else if (std::get_if<cmip::ReleaseIndication>(&event)) {
      std::vector<std::uint8_t> out;
      (void)upper_->respondRelease(cmip::Rlre{cmip::ReleaseResponseReason::kNormal, {}}, out);
      writer_.enqueue(std::move(out));
      close_after_write_ = true;
      finish(kReleasedByPeer, true);
    } else if (std::get_if<cmip::ReleaseConfirm>(&event)) {
      finish(release_reason_.empty() ? kReleased : release_reason_, true);
    } else if (auto* abort = std::get_if<cmip::AbortIndication>(&event)) {
      // A bound association's end is logged by its core; one that never bound would end
      // without a trace (a COTP ER or DR, an ABRT, before or instead of the bind).
      if (!bound_) {
        spdlog::warn("connection from {} (NSAP {}) ended by the peer before a bind: {}", peer_, nsap_.toHex(),
                     abort->detail.toString());
      }
      finish("aborted by peer: " + abort->detail.toString(), false);
    } else if (auto* error = std::get_if<cmip::ProtocolError>(&event)) {
      std::vector<std::uint8_t> out;
      (void)upper_->respondToError(*error, out);
      if (!out.empty()) writer_.enqueue(std::move(out));
      if (error->response == cmip::ErrorResponse::kRoseReject) continue;
      spdlog::warn("association from {} (NSAP {}, SPID {}) aborted: protocol error: {}", peer_,
                   nsap_.toHex(), spid.empty() ? "-" : spid, error->status.toString());
      close_after_write_ = true;
      finish("protocol error: " + error->status.toString(), false);
    }
  }
  if (upper_->state() == cmip::UpperLayers::State::kClosed && !closed_) {
    close_after_write_ = true;
    finish("closed by the stack", false);
  }
}

void Session::accept(std::int64_t association_id, const cmip::Aare& aare) {
  std::vector<std::uint8_t> out;
  cmip::Status status = upper_->acceptAssociation(aare, out);
  if (!status.isOk()) {
    close("accept failed: " + status.toString());
    return;
  }
  association_id_ = association_id;
  bound_ = true;
  unbound_end_ = nullptr;  // bound: the owner hears of its end through onClosed()
  timer_->cancel();
  writer_.enqueue(std::move(out));
  resumeAfterDecision();
}

void Session::reject(const cmip::Aare& refusal) {
  std::vector<std::uint8_t> out;
  (void)upper_->rejectAssociation(refusal, out);
  timer_->cancel();
  writer_.enqueue(std::move(out));
  close_after_write_ = true;
  resumeAfterDecision();  // drops what waited: the association is refused
  if (!writer_.writing()) close("rejected");
}

bool Session::sendRoseEncoded(const std::vector<std::uint8_t>& apdu, std::int64_t tag) {
  if (!bound() || close_after_write_) return false;
  std::vector<std::uint8_t> out;
  cmip::Status status = upper_->sendRoseEncoded(cmip::Bytes(apdu.data(), apdu.size()), out);
  if (!status.isOk()) return false;
  ++traffic_.sent;
  writer_.enqueue(std::move(out), tag);
  return !closed_;
}

void Session::requestRelease() {
  if (!bound() || releasing_) return;
  releasing_ = true;
  std::vector<std::uint8_t> out;
  if (!upper_->requestRelease(cmip::Rlrq{cmip::ReleaseRequestReason::kNormal, {}}, out).isOk()) {
    close("release refused by the stack");
    return;
  }
  writer_.enqueue(std::move(out));
  timer_->after(kReleaseTimeout, [self = shared_from_this()] {
    if (self->closed_) return;
    const std::string& why = self->release_reason_.empty() ? kReleased : self->release_reason_;
    self->close(why + ": no RLRE within the release timeout");
  });
}

void Session::abort(const std::string& reason) {
  if (closed_) return;
  std::vector<std::uint8_t> out;
  (void)upper_->abort(cmip::Abrt{cmip::AbortSource::kServiceUser, std::nullopt, {}}, out);
  if (!out.empty()) writer_.enqueue(std::move(out));
  close_after_write_ = true;
  finish(reason, false);
  if (!writer_.writing()) close(reason);
}

void Session::close(const std::string& reason) {
  if (!closed_) finish(reason, false);
  boost::system::error_code ignored;
  timer_->cancel();
  socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
}

// Reports the end once; the socket is closed after the queued bytes are written.
void Session::finish(const std::string& reason, bool orderly) {
  if (closed_) return;
  closed_ = true;
  const bool was_bound = bound_;
  bound_ = false;
  if (was_bound) owner_.onClosed(shared_from_this(), reason, orderly);
  if (!was_bound && unbound_end_) {
    auto keep = shared_from_this();  // the handler may drop the last other reference
    auto handler = std::move(unbound_end_);
    unbound_end_ = nullptr;
    handler();
  }
  if (!writer_.writing() && writer_.empty()) {
    boost::system::error_code ignored;
    timer_->cancel();
    socket_.close(ignored);
  }
}

}  // namespace npac::npacd
