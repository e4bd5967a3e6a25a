#include "npac/npacd/core/listener.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <spdlog/spdlog.h>

#include "npac/npacd/accept_errors.h"
#include "tunables/catalogue.h"

namespace npac::npacd {
namespace {

namespace asio = boost::asio;

bool isMemoryError(const boost::system::error_code& ec) {
  return ec == asio::error::no_buffer_space || ec == asio::error::no_memory;  // ENOBUFS, ENOMEM
}

// A connection that went away between the SYN and accept(2) (accept(2): "ECONNABORTED",
// and the network errors Linux passes on, EPROTO among them): the next one may be fine.
bool isConnectionError(const boost::system::error_code& ec) {
  return ec == asio::error::connection_aborted || ec == asio::error::connection_reset ||
         (ec.category() == boost::system::system_category() &&
          (ec.value() == EPROTO || ec.value() == EPERM || ec.value() == ENETDOWN ||
           ec.value() == EHOSTUNREACH || ec.value() == ENETUNREACH));
}

}  // namespace

bool Listener::LogLimiter::due(associations::TimePoint now, std::uint64_t* skipped) {
  if (last && now - *last < kAcceptLogInterval) {
    ++suppressed;
    return false;
  }
  last = now;
  *skipped = suppressed;
  suppressed = 0;
  return true;
}

Listener::Listener(asio::io_context& io, common::TimerFactory& timers, const tunables::TunableRegistry& registry,
                   const common::TimeSource& clock, SessionFactory factory)
    : io_(io),
      registry_(registry),
      clock_(clock),
      factory_(std::move(factory)),
      acceptor_(io),
      backoff_timer_(timers.makeTimer()) {}

Listener::~Listener() {
  *alive_ = false;
  stop("npacd shutting down");
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
}

Status Listener::listen(const asio::ip::tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  // shedOne() accepts synchronously: it must never block.
  if (!ec) acceptor_.non_blocking(true, ec);
  if (ec) {
    return Status::error(StatusCode::kCannotListen, "cannot listen on " + endpoint.address().to_string() + ":" +
                                                        std::to_string(endpoint.port()) + ": " + ec.message());
  }
  openReserve();
  stopped_ = false;
  acceptNext();
  return Status();
}

std::uint16_t Listener::port() const {
  boost::system::error_code ec;
  auto endpoint = acceptor_.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void Listener::stop(const std::string& reason) {
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  backoff_timer_->cancel();
  while (!unbound_.empty()) closeOldest(reason);
}

void Listener::openReserve() {
  if (reserve_fd_ < 0) reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void Listener::acceptNext() {
  if (stopped_) return;
  acceptor_.async_accept([this, alive = alive_](boost::system::error_code ec,
                                                asio::ip::tcp::socket socket) {
    if (!*alive || stopped_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      onAcceptError(ec);
      return;
    }
    backoff_ = std::chrono::milliseconds(0);
    openReserve();  // a descriptor may be free again after an earlier failure
    onAccepted(std::move(socket));
    acceptNext();
  });
}

void Listener::onAccepted(asio::ip::tcp::socket socket) {
  boost::system::error_code peer_ec;
  auto peer = socket.remote_endpoint(peer_ec);
  auto nsap = associations::Nsap::fromAddressString(peer.address().to_string());
  std::string peer_text = peer.address().to_string() + ":" + std::to_string(peer.port());
  if (peer_ec || !nsap.isOk()) {
    spdlog::warn("connection from {} refused: no NSAP for that address", peer_text);
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  ++counters_.accepted;
  std::shared_ptr<Session> session = factory_(std::move(socket), nsap.value(), peer_text);
  unbound_.push_back(Unbound{session, clock_.now()});
  index_[session.get()] = std::prev(unbound_.end());
  session->setUnboundEndHandler([this, alive = alive_, raw = session.get()] {
    if (*alive) forget(*raw);
  });
  session->start();
  // max_unbound_connections, live; below it, the cap learnt at the descriptor limit. The
  // newest connection is never the one dropped: it may be the provider re-binding.
  const auto configured = registry_.get(tunables::kMaxUnboundConnections);
  const std::size_t cap = std::max<std::size_t>(
      1, std::min(fd_cap_, static_cast<std::size_t>(std::max<std::int64_t>(1, configured))));
  std::size_t dropped = 0;
  while (unbound_.size() > cap) {
    closeOldest("over max_unbound_connections");
    ++dropped;
  }
  if (dropped == 0) return;
  const bool by_tunable = cap == static_cast<std::size_t>(configured);
  (by_tunable ? counters_.dropped_over_cap : counters_.dropped_at_fd_limit) += dropped;
  std::uint64_t skipped = 0;
  if (over_cap_log_.due(clock_.now(), &skipped)) {
    spdlog::warn("{} unbound connections, the most allowed by {}: the oldest is dropped for "
                 "each new one{}; dropped so far: {} by max_unbound_connections, {} at the "
                 "descriptor limit",
                 cap, by_tunable ? "max_unbound_connections" : "the descriptor limit",
                 suppressedNote(skipped), counters_.dropped_over_cap,
                 counters_.dropped_at_fd_limit);
  }
}

void Listener::onAcceptError(const boost::system::error_code& ec) {
  ++counters_.accept_errors;
  if (isConnectionError(ec)) {
    acceptNext();  // that connection is gone; the next one is unaffected
    return;
  }
  if (isDescriptorError(ec) && makeRoom(ec)) {
    acceptNext();  // descriptors were freed: the backlog is served at once
    return;
  }
  // Anything else (EMFILE with nothing to give up, ENFILE, ENOBUFS, ENOMEM, the
  // unexpected) lasts a while: retrying at once would only spin.
  backoff_ = std::max(kAcceptBackoffFirst, std::min(backoff_ * 2, kAcceptBackoffMax));
  std::uint64_t skipped = 0;
  if (error_log_.due(clock_.now(), &skipped)) {
    spdlog::error("accepting associations failed: {}{}; accepting again in {} ms{}",
                  ec.message(),
                  isDescriptorError(ec) ? " with no unbound connection to give up" : "",
                  backoff_.count(), suppressedNote(skipped));
  }
  if (isDescriptorError(ec) && !isMemoryError(ec)) shedOne();
  backOff();
}

bool Listener::makeRoom(const boost::system::error_code& ec) {
  if (unbound_.empty()) return false;
  // Keep kFdHeadroom descriptors free below the level that failed, and stay there: what
  // is left of the unbound set is the most the process can hold beside the rest.
  fd_cap_ = unbound_.size() > kFdHeadroom ? unbound_.size() - kFdHeadroom : 1;
  std::size_t dropped = 0;
  while (unbound_.size() > fd_cap_ || (dropped == 0 && !unbound_.empty())) {
    closeOldest("descriptor limit reached");
    ++dropped;
  }
  counters_.dropped_at_fd_limit += dropped;
  std::uint64_t skipped = 0;
  if (fd_limit_log_.due(clock_.now(), &skipped)) {
    spdlog::warn("descriptor limit reached accepting associations ({}): dropped the {} oldest "
                 "unbound connection(s); at most {} unbound connection(s) until none is left{}",
                 ec.message(), dropped, fd_cap_, suppressedNote(skipped));
  }
  return true;
}

void Listener::shedOne() {
  if (reserve_fd_ < 0) return;
  ::close(reserve_fd_);
  reserve_fd_ = -1;
  boost::system::error_code ec;
  asio::ip::tcp::socket refused(io_);
  acceptor_.accept(refused, ec);
  if (!ec) {
    ++counters_.shed_at_fd_limit;
    refused.close(ec);
  }
  openReserve();
}

void Listener::backOff() {
  backoff_timer_->after(backoff_, [this, alive = alive_] {
    if (!*alive || stopped_) return;
    acceptNext();
  });
}

void Listener::tick(associations::TimePoint now) {
  const auto timeout = registry_.get(tunables::kBindTimeout);
  std::size_t dropped = 0;
  std::string last_peer;
  while (!unbound_.empty() && now - unbound_.front().accepted_at >= timeout) {
    last_peer = unbound_.front().session->peer();
    closeOldest("bind timeout");
    ++dropped;
  }
  if (dropped == 0) return;
  counters_.bind_timeouts += dropped;
  if (unbound_.empty()) fd_cap_ = std::numeric_limits<std::size_t>::max();
  std::uint64_t skipped = 0;
  if (timeout_log_.due(now, &skipped)) {
    spdlog::warn("{} connection(s) not bound within bind_timeout: dropped (the last from {}){}",
                 dropped, last_peer, suppressedNote(skipped));
  }
}

void Listener::forget(const Session& session) {
  auto it = index_.find(&session);
  if (it == index_.end()) return;
  unbound_.erase(it->second);
  index_.erase(it);
  // The flood is over: the descriptor limit's cap no longer applies.
  if (unbound_.empty()) fd_cap_ = std::numeric_limits<std::size_t>::max();
}

void Listener::closeOldest(const std::string& reason) {
  std::shared_ptr<Session> session = std::move(unbound_.front().session);
  index_.erase(session.get());
  unbound_.pop_front();
  session->close(reason);
}

}  // namespace npac::npacd
