// AsioTimers: npacd's timers (common/timer.h) on an io_context — a steady_timer each, the
// only ones in the server. main() makes one per event loop (each core thread's, the admin
// API's) and hands it to what runs there; tests hand common::ManualTimers instead.
//
// Threading: makeTimer() and every Timer call on the io_context's thread; fn runs there. A
// Timer may be destroyed with a wait pending: the wait then completes without running fn.
#pragma once

#include <memory>

#include <boost/asio/io_context.hpp>

#include "common/timer.h"

namespace npac::npacd {

class AsioTimers final : public common::TimerFactory {
 public:
  explicit AsioTimers(boost::asio::io_context& io) : io_(io) {}
  std::unique_ptr<common::Timer> makeTimer() override;

 private:
  boost::asio::io_context& io_;
};

}  // namespace npac::npacd
