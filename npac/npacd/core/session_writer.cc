#include "npac/npacd/core/session_writer.h"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

namespace npac::npacd {

void SessionWriter::enqueue(std::vector<std::uint8_t> bytes, std::int64_t tag) {
  if (bytes.empty() || !socket_.is_open()) return;
  queued_bytes_ += bytes.size();
  queue_.push_back(Frame{std::move(bytes), tag});
  if (queued_bytes_ > kMaxQueuedWriteBytes) {
    const std::size_t queued = queued_bytes_;
    queue_.clear();
    queued_bytes_ = 0;
    hooks_.over_limit(queued);
    return;
  }
  flush();
}

void SessionWriter::adopt(std::vector<Frame> frames) {
  for (Frame& frame : frames) {
    queued_bytes_ += frame.bytes.size();
    queue_.push_back(std::move(frame));
  }
}

void SessionWriter::flush() {
  if (writing_ || queue_.empty()) return;
  writing_ = true;
  boost::asio::post(socket_.get_executor(), [this, keep = hooks_.keep_alive()] { writeNext(); });
}

void SessionWriter::stopBetweenFrames(std::function<void()> then) {
  stopped_ = true;
  if (writing_frames_ == 0) {
    then();
    return;
  }
  on_stopped_ = std::move(then);  // once the write under way has completed (writeNext)
}

std::vector<SessionWriter::Frame> SessionWriter::takeFrames() {
  std::vector<Frame> frames;
  frames.reserve(queue_.size());
  for (Frame& frame : queue_) frames.push_back(std::move(frame));
  queue_.clear();
  queued_bytes_ = 0;
  return frames;
}

void SessionWriter::writeNext() {
  if (stopped_) {
    writing_ = false;
    if (auto then = std::exchange(on_stopped_, nullptr)) then();
    return;
  }
  if (queue_.empty() || !socket_.is_open()) {
    writing_ = false;
    hooks_.drained();
    return;
  }
  writing_ = true;
  writing_frames_ = std::min(queue_.size(), kMaxGatheredFrames);
  std::vector<boost::asio::const_buffer> buffers;
  buffers.reserve(writing_frames_);
  for (std::size_t i = 0; i < writing_frames_; ++i) buffers.push_back(boost::asio::buffer(queue_[i].bytes));
  boost::asio::async_write(
      socket_, buffers, [this, keep = hooks_.keep_alive()](boost::system::error_code ec, std::size_t) {
        if (ec) {
          queue_.clear();
          queued_bytes_ = 0;
          writing_frames_ = 0;
          writing_ = false;
          hooks_.failed(ec);
          return;
        }
        const std::size_t done = std::min(writing_frames_, queue_.size());
        writing_frames_ = 0;
        for (std::size_t i = 0; i < done; ++i) {
          queued_bytes_ -= queue_.front().bytes.size();
          const std::int64_t tag = queue_.front().tag;
          queue_.pop_front();
          if (tag != 0) hooks_.written(tag);
        }
        writeNext();
      });
}

}  // namespace npac::npacd
