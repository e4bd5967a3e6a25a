// SessionReader: the reader of one Session (session.h) — an async read loop on the
// session's socket handing the octets read to the session (which feeds them to its stack).
// An idle connection holds no read buffer: the reader waits for the socket to be readable
// and then reads into one buffer per thread (kReadChunk, a whole TPKT of at most 65,535
// octets, RFC 1006 §6), which the session has consumed before the next read.
//
// It decides nothing: whether to read on (Hooks::may_read — not once the session ended,
// leaves for another thread or awaits its owner's decision), what the octets mean and what
// a lost connection means are the session's.
//
// Threading: the thread of the io_context its socket belongs to (the session's), like the
// session; the read it leaves pending holds the session alive (Hooks::keep_alive).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/ip/tcp.hpp>

#include "cmip/upper_layers.h"

namespace npac::npacd {

// Octets read at once: one whole TPKT (RFC 1006 §6: a TPKT is at most 65,535 octets).
inline constexpr std::size_t kReadChunk = 65535;

class SessionReader {
 public:
  // What the reader asks and tells its session; all called on the socket's thread.
  struct Hooks {
    // The session, held by the read the reader leaves pending.
    std::function<std::shared_ptr<void>()> keep_alive;
    // The session has ended: a read that completes now is dropped unseen.
    std::function<bool()> ended;
    // Whether to read on after the octets of a read were handled.
    std::function<bool()> may_read;
    // Octets read, valid during the call only.
    std::function<void(cmip::Bytes octets)> received;
    // The connection was closed by the peer or lost (`reason`); nothing more is read.
    std::function<void(const std::string& reason)> lost;
  };

  // `socket` (the session's) outlives it.
  SessionReader(boost::asio::ip::tcp::socket& socket, Hooks hooks) : socket_(socket), hooks_(std::move(hooks)) {}
  SessionReader(const SessionReader&) = delete;
  SessionReader& operator=(const SessionReader&) = delete;

  // Waits for the socket to be readable, then reads; on until the session ends or
  // Hooks::may_read says no.
  void start() { wait(); }
  // Reads on if Hooks::may_read allows (after a pause: a decision, a hand-off's resume).
  void readOn() {
    if (hooks_.may_read()) wait();
  }

 private:
  void wait();

  boost::asio::ip::tcp::socket& socket_;
  Hooks hooks_;
};

}  // namespace npac::npacd
