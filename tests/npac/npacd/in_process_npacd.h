// InProcessNpacd: npacd run in the test's own process by npacd's own start phases
// (npac/npacd/server.h: the same command line, storage, core, admin API and serve() as the
// binary), on a ManualTimeSource with ManualTimers for the core, and driven through the
// same client as NpacdProcess (NpacdClient: admin API calls, provisioning, simulators).
//
// Time in npacd moves only when the test calls advance(): a heartbeat interval, a timeout
// or a minute of ticks takes as long as the core needs to run them, and nothing happens
// "a little later" by itself. Everything outside npacd — the simulators, the HTTP client,
// the database — runs in real time; a test waits for what they do with eventually(), then
// moves npacd's clock. The wall clock starts at the real time, so the NPAC key npacd
// makes is valid for the simulators, which read the real one.
//
// Threading: the core runs on a thread of its own (serve()), the admin API on another, as
// in npacd. advance() posts the move onto the core thread and waits for it, so every core
// timer still runs on the core thread. The object is used from the test's thread.
#pragma once

#include <chrono>
#include <csignal>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/post.hpp>

#include "common/time_source.h"
#include "common/timer.h"
#include "npac/npacd/core/association_manager.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/server.h"
#include "tests/npac/npacd/npacd_fixture.h"

namespace npacd_test {

class InProcessNpacd : public NpacdClient {
 public:
  // `extra_args`: npacd's flags, as for NpacdProcess.
  explicit InProcessNpacd(std::vector<std::string> extra_args = {})
      : NpacdClient(fs::path{}), time_(realWallMs()), timers_(time_), npacd_(time_, &timers_) {
    std::signal(SIGPIPE, SIG_IGN);  // as npacd's main(): a peer gone mid-write is an error, not a death
    std::vector<std::string> args{"npacd", "--db", db().string(), "--listen", "127.0.0.1:0", "--api",
                                  "127.0.0.1:0", "--durability", "normal", "--log-file",
                                  (dir() / "npacd.log").string()};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    REQUIRE_FALSE(npac::npacd::parseCommandLine(npacd_, static_cast<int>(argv.size()), argv.data()));
    const npac::npacd::Refusal refused = npac::npacd::start(npacd_);
    INFO("npacd log:\n" << log());
    REQUIRE(refused.empty());
    setPorts(npacd_.manager->port(), npacd_.admin->port());
    npac::npacd::announce(npacd_);
    core_ = std::thread([this] { npac::npacd::serve(npacd_); });
  }
  ~InProcessNpacd() { stop(); }
  InProcessNpacd(const InProcessNpacd&) = delete;
  InProcessNpacd& operator=(const InProcessNpacd&) = delete;

  // Moves npacd's clock forward by `by` on the core thread, running every core timer due
  // on the way at its deadline (common::ManualTimers::advance), and returns once done.
  void advance(std::chrono::milliseconds by) { REQUIRE(advanceWithin(by, std::chrono::seconds(30))); }

  // The graceful stop, as SIGTERM gives npacd: every association released, then serve()
  // returns. The release timeouts run on the manual clock, so the clock moves on in
  // 500 ms steps with up to 50 ms of real time between them for the peers to answer, until the
  // core has stopped (at most 600 steps).
  void stop() {
    if (!core_.joinable()) return;
    npac::npacd::drain(npacd_);
    for (int step = 0; step < 600; ++step) {
      if (eventually([&] { return npacd_.core_io.stopped(); }, std::chrono::milliseconds(50), std::chrono::milliseconds(5))) break;
      if (!advanceWithin(std::chrono::milliseconds(500), std::chrono::seconds(1))) break;
    }
    core_.join();
  }

 private:
  static std::int64_t realWallMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // advance(by), waiting at most `limit` for the core thread to run it: false when it did
  // not (the core has stopped, or is stuck).
  bool advanceWithin(std::chrono::milliseconds by, std::chrono::milliseconds limit) {
    auto moved = std::make_shared<std::promise<void>>();
    std::future<void> done = moved->get_future();
    boost::asio::post(npacd_.core_io, [this, by, moved] {
      timers_.advance(by);
      moved->set_value();
    });
    return done.wait_for(limit) == std::future_status::ready;
  }

  npac::common::ManualTimeSource time_;
  npac::common::ManualTimers timers_;
  npac::npacd::Npacd npacd_;
  std::thread core_;
};

}  // namespace npacd_test
