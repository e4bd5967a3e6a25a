#include "npac/npac-soa-sim/association_client.h"

#include <array>

#include <spdlog/spdlog.h>

namespace npac::soasim {
namespace {

using asio::awaitable;
using asio::redirect_error;
using asio::use_awaitable;

// TSAP, SSAP and PSAP are 4 octets in the NPAC data model (NANC 316); npac-pdu's
// samples use 00000001 for each, and so do we.
const std::vector<uint8_t> kSelector{0, 0, 0, 1};
constexpr size_t kReadChunk = 16 * 1024;

cmip::UpperLayersConfig initiatorConfig(size_t index) {
  cmip::UpperLayersConfig c;
  c.role = cmip::UpperLayersRole::kInitiator;
  c.calling_tsap = c.called_tsap = kSelector;
  c.calling_ssel = c.called_ssel = kSelector;
  c.calling_psel = c.called_psel = kSelector;
  c.local_reference = static_cast<uint16_t>(0x5000 + index);
  return c;
}

std::string abortText(const cmip::AbortIndication& a) {
  std::string s = a.source == cmip::AbortSource::kServiceUser ? "source acse-service-user" : "source acse-service-provider";
  if (a.diagnostic) s += ", diagnostic " + std::to_string(static_cast<int>(*a.diagnostic));
  if (a.presentation_reason) s += ", presentation reason " + std::to_string(*a.presentation_reason);
  if (!a.detail.isOk()) s += " (" + a.detail.toString() + ")";
  return s;
}

}  // namespace

AssociationClient::AssociationClient(asio::any_io_executor executor, size_t index, std::string local_address,
                                     AssociationObserver& observer)
    : executor_(executor),
      index_(index),
      local_address_(std::move(local_address)),
      observer_(observer),
      socket_(executor),
      upper_(initiatorConfig(index)),
      wake_(executor) {}

awaitable<BindOutcome> AssociationClient::bind(tcp::endpoint npac, cmip::Aarq aarq, Millis timeout) {
  auto self = shared_from_this();
  BindOutcome outcome;
  boost::system::error_code ec;
  auto local = asio::ip::make_address(local_address_, ec);
  if (ec) {
    outcome.detail = "'" + local_address_ + "' is not an IP address";
    co_return outcome;
  }
  socket_.open(npac.protocol(), ec);
  if (!ec) socket_.bind(tcp::endpoint(local, 0), ec);
  if (ec) {
    outcome.detail = "cannot bind the local address " + local_address_ + ": " + ec.message();
    co_return outcome;
  }

  // One deadline over connect, CR/CC and AARQ/AARE: it closes the socket.
  // The flags outlive this frame: the handler may already be queued when we cancel.
  struct Deadline {
    bool done = false;
    bool timed_out = false;
  };
  auto flags = std::make_shared<Deadline>();
  asio::steady_timer deadline(executor_, timeout);
  deadline.async_wait([this, self, flags](boost::system::error_code e) {
    if (!e && !flags->done) {
      flags->timed_out = true;
      boost::system::error_code ignored;
      socket_.close(ignored);
    }
  });
  bool& timed_out = flags->timed_out;

  co_await socket_.async_connect(npac, redirect_error(use_awaitable, ec));
  if (ec) {
    flags->done = true;
    deadline.cancel();
    outcome.kind = timed_out ? BindOutcome::Kind::kTimeout : BindOutcome::Kind::kConnectFailed;
    outcome.detail = "cannot connect from " + local_address_ + " to " + npac.address().to_string() + ":" +
                     std::to_string(npac.port()) + ": " + (timed_out ? "timed out" : ec.message());
    co_return outcome;
  }
  local_port_ = socket_.local_endpoint(ec).port();

  std::vector<uint8_t> out;
  cmip::Status st = upper_.connect(aarq, out);
  if (!st.isOk()) {
    flags->done = true;
    deadline.cancel();
    outcome.kind = BindOutcome::Kind::kProtocolError;
    outcome.detail = "cannot encode the bind: " + st.toString();
    co_return outcome;
  }
  std::array<uint8_t, kReadChunk> buf;
  while (true) {
    if (!out.empty()) {
      co_await asio::async_write(socket_, asio::buffer(out), redirect_error(use_awaitable, ec));
      out.clear();
      if (ec) break;
    }
    size_t n = co_await socket_.async_read_some(asio::buffer(buf), redirect_error(use_awaitable, ec));
    if (ec) break;
    std::vector<cmip::UpperLayersEvent> events;
    upper_.receive(cmip::Bytes(buf.data(), n), events, out);
    for (size_t i = 0; i < events.size(); ++i) {
      if (auto* cc = std::get_if<cmip::ConnectConfirm>(&events[i])) {
        flags->done = true;
    deadline.cancel();
        outcome.aare = cc->aare;
        outcome.kind = cc->accepted ? BindOutcome::Kind::kAccepted : BindOutcome::Kind::kRejected;
        if (!out.empty()) co_await asio::async_write(socket_, asio::buffer(out), redirect_error(use_awaitable, ec));
        for (size_t j = i + 1; j < events.size(); ++j) pending_.push_back(std::move(events[j]));
        if (!cc->accepted) closeSocket(false);
        co_return outcome;
      }
      if (auto* ab = std::get_if<cmip::AbortIndication>(&events[i])) {
        flags->done = true;
    deadline.cancel();
        outcome.kind = BindOutcome::Kind::kAborted;
        outcome.detail = "the NPAC aborted the bind: " + abortText(*ab);
        closeSocket(false);
        co_return outcome;
      }
      if (auto* pe = std::get_if<cmip::ProtocolError>(&events[i])) {
        flags->done = true;
    deadline.cancel();
        outcome.kind = BindOutcome::Kind::kProtocolError;
        outcome.detail = "protocol error during the bind: " + pe->status.toString();
        closeSocket(false);
        co_return outcome;
      }
    }
  }
  flags->done = true;
    deadline.cancel();
  outcome.kind = timed_out ? BindOutcome::Kind::kTimeout : BindOutcome::Kind::kConnectFailed;
  outcome.detail = timed_out ? "no AARE within " + std::to_string(timeout.count()) + " ms"
                             : "the NPAC closed the connection during the bind: " + ec.message();
  closeSocket(false);
  co_return outcome;
}

void AssociationClient::start() {
  started_ = true;
  auto self = shared_from_this();
  asio::co_spawn(executor_, [self]() { return self->writer(); }, asio::detached);
  asio::co_spawn(executor_, [self]() { return self->reader(); }, asio::detached);
}

awaitable<void> AssociationClient::reader() {
  auto self = shared_from_this();
  std::vector<cmip::UpperLayersEvent> pending = std::move(pending_);
  for (auto& e : pending) {
    if (ended_) co_return;
    handle(e);
  }
  std::array<uint8_t, kReadChunk> buf;
  while (!ended_) {
    boost::system::error_code ec;
    size_t n = co_await socket_.async_read_some(asio::buffer(buf), redirect_error(use_awaitable, ec));
    if (ended_) break;
    if (ec) {
      end("connection-lost", ec == asio::error::eof ? "the NPAC closed the TCP connection" : ec.message());
      closeSocket(false);
      break;
    }
    std::vector<cmip::UpperLayersEvent> events;
    std::vector<uint8_t> out;
    upper_.receive(cmip::Bytes(buf.data(), n), events, out);
    if (!out.empty()) enqueue(Outgoing{std::move(out), {}, 0, std::nullopt});
    for (auto& e : events) {
      if (ended_) break;
      handle(e);
    }
  }
}

void AssociationClient::handle(cmip::UpperLayersEvent& event) {
  std::vector<uint8_t> out;
  if (auto* d = std::get_if<cmip::DataIndication>(&event)) {
    if (!input_stopped_) observer_.onApdu(index_, d->apdu);
  } else if (std::get_if<cmip::ReleaseIndication>(&event)) {
    input_stopped_ = true;
    (void)upper_.respondRelease(cmip::Rlre{cmip::ReleaseResponseReason::kNormal, {}}, out);
    enqueue(Outgoing{std::move(out), {}, 0, DropMode::kClose});
    end("released-by-peer", "the NPAC sent RLRQ; answered RLRE");
  } else if (std::get_if<cmip::ReleaseConfirm>(&event)) {
    end("released", "RLRQ answered by RLRE");
    closeSocket(false);
  } else if (auto* a = std::get_if<cmip::AbortIndication>(&event)) {
    end("aborted-by-peer", abortText(*a));
    closeSocket(false);
  } else if (auto* pe = std::get_if<cmip::ProtocolError>(&event)) {
    spdlog::warn("association {} ({}): protocol error {}", index_, local_address_, pe->status.toString());
    (void)upper_.respondToError(*pe, out);
    bool continues = pe->response == cmip::ErrorResponse::kRoseReject;
    if (continues) {
      enqueue(Outgoing{std::move(out), {}, 0, std::nullopt});
    } else {
      input_stopped_ = true;
      enqueue(Outgoing{std::move(out), {}, 0, DropMode::kClose});
      end("protocol-error", pe->status.toString());
    }
  }
}

void AssociationClient::send(const cmip::RoseApdu& apdu, Millis delay, uint64_t tag) {
  if (ended_ || writer_closing_) return;
  std::vector<uint8_t> out;
  cmip::Status st = upper_.sendRose(apdu, out);
  if (!st.isOk()) {
    spdlog::warn("association {}: cannot send {}: {}", index_, cmip::roseApduName(apdu), st.toString());
    return;
  }
  enqueue(Outgoing{std::move(out), std::chrono::steady_clock::now() + delay, tag, std::nullopt});
}

void AssociationClient::dropAfterQueued(DropMode mode) {
  if (ended_ || writer_closing_) return;
  input_stopped_ = true;
  std::vector<uint8_t> out;
  if (mode == DropMode::kAbort) (void)upper_.abort(cmip::Abrt{cmip::AbortSource::kServiceUser, std::nullopt, {}}, out);
  // The marker waits behind the last queued item's not-before time.
  auto when = queue_.empty() ? std::chrono::steady_clock::now() : queue_.back().not_before;
  enqueue(Outgoing{std::move(out), when, 0, mode});
}

void AssociationClient::requestRelease() {
  if (!up() || writer_closing_) return;
  std::vector<uint8_t> out;
  if (upper_.requestRelease(cmip::Rlrq{cmip::ReleaseRequestReason::kNormal, {}}, out).isOk()) {
    enqueue(Outgoing{std::move(out), {}, 0, std::nullopt});
  }
}

void AssociationClient::close(const std::string& reason) {
  if (!ended_) end(reason, "");
  closeSocket(false);
}

awaitable<void> AssociationClient::refuseAccepted(std::string reason) {
  auto self = shared_from_this();
  std::vector<uint8_t> out;
  (void)upper_.abort(cmip::Abrt{cmip::AbortSource::kServiceUser, std::nullopt, {}}, out);
  boost::system::error_code ec;
  if (!out.empty() && socket_.is_open()) {
    co_await asio::async_write(socket_, asio::buffer(out), redirect_error(use_awaitable, ec));
  }
  ended_ = true;
  end_reason_ = std::move(reason);
  closeSocket(false);
}

void AssociationClient::enqueue(Outgoing item) {
  if (item.then_drop) writer_closing_ = true;
  queue_.push_back(std::move(item));
  wake_.cancel();
}

awaitable<void> AssociationClient::writer() {
  auto self = shared_from_this();
  while (socket_.is_open()) {
    boost::system::error_code ec;
    if (queue_.empty()) {
      wake_.expires_at(std::chrono::steady_clock::time_point::max());
      co_await wake_.async_wait(redirect_error(use_awaitable, ec));
      continue;
    }
    if (queue_.front().not_before > std::chrono::steady_clock::now()) {
      wake_.expires_at(queue_.front().not_before);
      co_await wake_.async_wait(redirect_error(use_awaitable, ec));
      continue;
    }
    Outgoing item = std::move(queue_.front());
    queue_.pop_front();
    if (!item.bytes.empty()) {
      co_await asio::async_write(socket_, asio::buffer(item.bytes), redirect_error(use_awaitable, ec));
      if (ec) {
        end("connection-lost", "write failed: " + ec.message());
        closeSocket(false);
        break;
      }
    }
    if (item.tag != 0) observer_.onWritten(index_, item.tag);
    if (item.then_drop) {
      if (!ended_) {
        switch (*item.then_drop) {
          case DropMode::kTcp: end("dropped-tcp", "reset the TCP connection without release (RST)"); break;
          case DropMode::kClose: end("dropped-close", "closed the TCP connection without release (FIN)"); break;
          case DropMode::kAbort: end("dropped-abort", "sent ABRT (acse-service-user) and closed"); break;
        }
      }
      closeSocket(*item.then_drop == DropMode::kTcp);
      break;
    }
  }
}

void AssociationClient::end(std::string reason, std::string detail) {
  if (ended_) return;
  ended_ = true;
  end_reason_ = std::move(reason);
  end_detail_ = std::move(detail);
  spdlog::info("association {} ({}): {}{}{}", index_, local_address_, end_reason_, end_detail_.empty() ? "" : ": ",
               end_detail_);
  observer_.onEnded(index_);
}

void AssociationClient::closeSocket(bool reset) {
  boost::system::error_code ec;
  if (socket_.is_open()) {
    if (reset) socket_.set_option(asio::socket_base::linger(true, 0), ec);
    socket_.close(ec);
  }
  wake_.cancel();
}

}  // namespace npac::soasim
