#include "npac/npacd/core/session_reader.h"

#include <cstdint>
#include <vector>

namespace npac::npacd {
namespace {

// The read buffer of every session on this thread: a session reads only once its socket
// is readable and hands the octets to its stack before the next read, so one buffer
// serves them all and an idle connection costs none.
std::vector<std::uint8_t>& threadReadBuffer() {
  thread_local std::vector<std::uint8_t> buffer(kReadChunk);
  return buffer;
}

}  // namespace

void SessionReader::wait() {
  socket_.async_wait(boost::asio::ip::tcp::socket::wait_read,
                     [this, keep = hooks_.keep_alive()](boost::system::error_code ec) {
                       if (hooks_.ended()) return;
                       std::size_t n = 0;
                       std::vector<std::uint8_t>& buffer = threadReadBuffer();
                       if (!ec) n = socket_.read_some(boost::asio::buffer(buffer), ec);
                       if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) {
                         wait();  // woken without data (a spurious readiness)
                         return;
                       }
                       if (ec) {
                         hooks_.lost(ec == boost::asio::error::eof ? "connection closed by peer"
                                                                   : "connection lost: " + ec.message());
                         return;
                       }
                       hooks_.received(cmip::Bytes(buffer.data(), n));
                       readOn();
                     });
}

}  // namespace npac::npacd
