#include "npac/npacd/asio_timers.h"

#include <utility>

#include <boost/asio/steady_timer.hpp>

namespace npac::npacd {

namespace {

class AsioTimer final : public common::Timer {
 public:
  explicit AsioTimer(boost::asio::io_context& io) : timer_(io) {}
  ~AsioTimer() override { *generation_ = kGone; }

  void after(std::chrono::milliseconds delay, std::function<void()> fn) override {
    // A wait whose deadline passed may already be queued to run: it cannot be aborted,
    // so each handler runs fn only if no after() or cancel() came since it was armed.
    const std::uint64_t mine = ++*generation_;
    armed_ = true;
    timer_.expires_after(delay);
    timer_.async_wait([this, generation = generation_, mine, fn = std::move(fn)](const boost::system::error_code& ec) {
      if (ec || *generation != mine) return;
      armed_ = false;  // `this` is alive: its destruction sets kGone
      fn();
    });
  }
  void cancel() override {
    ++*generation_;
    armed_ = false;
    timer_.cancel();
  }
  bool armed() const override { return armed_; }

 private:
  static constexpr std::uint64_t kGone = ~std::uint64_t{0};
  boost::asio::steady_timer timer_;
  std::shared_ptr<std::uint64_t> generation_ = std::make_shared<std::uint64_t>(0);
  bool armed_ = false;
};

}  // namespace

std::unique_ptr<common::Timer> AsioTimers::makeTimer() { return std::make_unique<AsioTimer>(io_); }

}  // namespace npac::npacd
