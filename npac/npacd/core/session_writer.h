// SessionWriter: the writer of one Session (session.h) — a bounded queue of frames (each
// the octets its stack produced at once, whole TPKTs, RFC 1006 §6, with the tag the session
// is told of once it is written) drained by async gathered writes on the session's socket,
// at most kMaxGatheredFrames per write. A frame queued while the session handles an event
// leaves from a posted handler, so every frame queued in that handler goes out in one
// gathered write (one syscall, not one per PDU). Beyond kMaxQueuedWriteBytes the peer is
// not reading: the queue is dropped and the session told (Hooks::over_limit), which aborts
// the association rather than growing memory (Asio examples: queue limits).
//
// It decides nothing: what a written tag, a failed write or an empty queue means is the
// session's (its Hooks). For a hand-off (Session::handOff) it stops between frames — never
// while a write is under way, so no frame is cut — and gives up the frames not yet written.
//
// Threading: the thread of the io_context its socket belongs to (the session's), like the
// session; every handler it leaves pending holds the session alive (Hooks::keep_alive).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/system/error_code.hpp>

namespace npac::npacd {

// Bytes queued for writing on one connection, at most; beyond it the peer is not reading
// and the association is aborted rather than growing memory (Asio examples: queue limits).
inline constexpr std::size_t kMaxQueuedWriteBytes = 32 * 1024 * 1024;
// Frames written by one gathered write (sendmsg's iovec stays far below IOV_MAX, 1024).
inline constexpr std::size_t kMaxGatheredFrames = 64;

class SessionWriter {
 public:
  struct Frame {
    std::vector<std::uint8_t> bytes;
    std::int64_t tag = 0;  // reported once written (Hooks::written); 0 = nothing to report
  };
  // What the writer tells its session; all called on the socket's thread.
  struct Hooks {
    // The session, held by every handler the writer leaves pending.
    std::function<std::shared_ptr<void>()> keep_alive;
    // The frame with this non-zero tag was written completely, in the order queued.
    std::function<void(std::int64_t tag)> written;
    // A frame took the queue over kMaxQueuedWriteBytes (`queued` bytes); the queue is
    // empty again and nothing more of it will be written.
    std::function<void(std::size_t queued)> over_limit;
    // A write failed; the queue is empty again and the writer idle.
    std::function<void(const boost::system::error_code& ec)> failed;
    // Nothing left to write (or the socket is closed): the writer is idle.
    std::function<void()> drained;
  };

  // `socket` (the session's) outlives it.
  SessionWriter(boost::asio::ip::tcp::socket& socket, Hooks hooks) : socket_(socket), hooks_(std::move(hooks)) {}
  SessionWriter(const SessionWriter&) = delete;
  SessionWriter& operator=(const SessionWriter&) = delete;

  // Queues a frame (nothing if `bytes` is empty or the socket closed) and starts writing
  // from a posted handler unless a write is scheduled or under way.
  void enqueue(std::vector<std::uint8_t> bytes, std::int64_t tag = 0);
  // A handed-off session's frames, not written yet, queued before anything else; flush()
  // starts writing them.
  void adopt(std::vector<Frame> frames);
  // Starts writing what is queued (from a posted handler) unless it is empty or a write is
  // scheduled or under way.
  void flush();
  // No write starts any more: `then` is called between frames — at once if no write is
  // under way, else once it has completed (its tags reported). Not called if that write
  // fails. For a hand-off, with takeFrames() after it.
  void stopBetweenFrames(std::function<void()> then);
  // The frames not written yet, in order; the queue is empty after it.
  std::vector<Frame> takeFrames();

  // A write is scheduled or under way.
  bool writing() const { return writing_; }
  bool empty() const { return queue_.empty(); }

 private:
  // Writes up to kMaxGatheredFrames queued frames at once; on completion reports their
  // tags and continues with what was queued meanwhile.
  void writeNext();

  boost::asio::ip::tcp::socket& socket_;
  Hooks hooks_;
  std::deque<Frame> queue_;
  std::size_t queued_bytes_ = 0;
  std::size_t writing_frames_ = 0;  // frames at the queue's front being written
  bool writing_ = false;            // a write is scheduled or under way
  bool stopped_ = false;            // stopBetweenFrames(): no write starts any more
  std::function<void()> on_stopped_;
};

}  // namespace npac::npacd
