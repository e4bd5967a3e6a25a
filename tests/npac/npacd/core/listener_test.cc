// Listener in-process: real loopback TCP, a TunableRegistry on a real SQLite file, and a
// ManualTimeSource, so bind_timeout is exercised by advancing the clock (no sleeps). The
// sessions' owner is a stand-in for the AssociationManager that never answers an AARQ:
// every connection here stays unbound.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "common/time_source.h"
#include "db/database.h"
#include "npac/npacd/asio_timers.h"
#include "npac/npacd/core/listener.h"
#include "tunables/catalogue.h"
#include "tunables/registry.h"

namespace {

namespace asio = boost::asio;
using npac::npacd::Listener;
using npac::common::ManualTimeSource;
using npac::npacd::Session;
using namespace std::chrono_literals;

// Never answers: what a connection that sends nothing (or only garbage) looks like.
class SilentOwner : public npac::npacd::SessionOwner {
 public:
  void onConnectIndication(const std::shared_ptr<Session>&, const npac::cmip::ConnectIndication&) override {}
  void onRose(const std::shared_ptr<Session>&, npac::cmip::RoseApdu) override {}
  void onClosed(const std::shared_ptr<Session>&, const std::string&, bool) override {}
  void onWritten(const std::shared_ptr<Session>&, std::int64_t) override {}
};

class ListenerFixture {
 public:
  ListenerFixture() {
    std::string pattern = (std::filesystem::temp_directory_path() / "npac-listener-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
    auto opened = npac::db::Database::open(dir_ + "/npacd.db");
    REQUIRE(opened.isOk());
    db_ = std::move(opened).value();
    REQUIRE(npac::tunables::TunableRegistry::open(*db_, [] { return npac::db::TimeMs{0}; }, &registry)
                .isOk());
    listener = std::make_unique<Listener>(
        io, timers, *registry, clock,
        [this](asio::ip::tcp::socket socket, npac::associations::Nsap nsap, std::string peer) {
          return std::make_shared<Session>(std::move(socket), nsap, std::move(peer), owner_, timers.makeTimer());
        });
    const npac::Status listening = listener->listen({asio::ip::make_address("127.0.0.1"), 0});
    INFO(listening.toString());
    REQUIRE(listening.isOk());
  }
  ~ListenerFixture() {
    listener.reset();
    io.restart();
    io.poll();  // handlers still holding sessions run and let go
    registry.reset();
    db_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ListenerFixture(const ListenerFixture&) = delete;
  ListenerFixture& operator=(const ListenerFixture&) = delete;

  void setTunable(const std::string& name, const std::string& value) {
    auto status = registry->set(name, "", value, "listener-test");
    INFO(status.toString());
    REQUIRE(status.isOk());
  }

  // An idle client connection to the listener (connected by the kernel's backlog).
  std::unique_ptr<asio::ip::tcp::socket> connect() {
    auto socket = std::make_unique<asio::ip::tcp::socket>(client_io_);
    socket->connect({asio::ip::make_address("127.0.0.1"), listener->port()});
    socket->non_blocking(true);
    return socket;
  }

  // Runs the listener's io_context until `done` holds; false after 5 s.
  bool runUntil(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io.restart();
      io.run_for(2ms);
    }
    return true;
  }

  asio::io_context io;
  ManualTimeSource clock;
  // Real timers: the accept back-off runs while runUntil() turns the io_context; the
  // manual clock drives bind_timeout through tick() alone.
  npac::npacd::AsioTimers timers{io};
  std::unique_ptr<npac::tunables::TunableRegistry> registry;
  std::unique_ptr<Listener> listener;

 private:
  std::string dir_;
  std::unique_ptr<npac::db::Database> db_;
  SilentOwner owner_;
  asio::io_context client_io_;
};

// The listener closed this client's connection (EOF or reset), without blocking.
bool closedByServer(asio::ip::tcp::socket& socket) {
  char byte = 0;
  boost::system::error_code ec;
  socket.read_some(asio::buffer(&byte, 1), ec);
  return ec && ec != asio::error::would_block && ec != asio::error::try_again;
}

// spdlog's default logger writes into `text` while it lives.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("listener-test", sink));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::size_t count(const std::string& needle) const {
    const std::string all = text_.str();
    std::size_t n = 0;
    for (auto at = all.find(needle); at != std::string::npos; at = all.find(needle, at + 1)) ++n;
    return n;
  }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace

TEST_CASE("an unbound connection is closed at the first tick bind_timeout after it was accepted") {
  ListenerFixture f;
  f.setTunable("bind_timeout", "5s");
  auto client = f.connect();
  REQUIRE(f.runUntil([&] { return f.listener->unboundCount() == 1; }));
  f.clock.advance(5s - 1ms);
  f.listener->tick(f.clock.now());
  CHECK(f.listener->unboundCount() == 1);
  CHECK_FALSE(closedByServer(*client));
  f.clock.advance(1ms);
  f.listener->tick(f.clock.now());
  CHECK(f.listener->unboundCount() == 0);
  CHECK(f.listener->counters().bind_timeouts == 1);
  CHECK(f.runUntil([&] { return closedByServer(*client); }));
}

TEST_CASE("a connection beyond max_unbound_connections closes the oldest unbound one") {
  ListenerFixture f;
  f.setTunable("max_unbound_connections", "2");
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> clients;
  for (std::uint64_t i = 1; i <= 3; ++i) {
    clients.push_back(f.connect());
    REQUIRE(f.runUntil([&] { return f.listener->counters().accepted == i; }));
  }
  CHECK(f.listener->unboundCount() == 2);
  CHECK(f.listener->counters().dropped_over_cap == 1);
  CHECK(f.runUntil([&] { return closedByServer(*clients[0]); }));
  CHECK_FALSE(closedByServer(*clients[1]));
  CHECK_FALSE(closedByServer(*clients[2]));
}

TEST_CASE("a lowered max_unbound_connections applies from the next accepted connection") {
  ListenerFixture f;
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> clients;
  for (std::uint64_t i = 1; i <= 4; ++i) {
    clients.push_back(f.connect());
    REQUIRE(f.runUntil([&] { return f.listener->counters().accepted == i; }));
  }
  f.setTunable("max_unbound_connections", "2");
  clients.push_back(f.connect());
  REQUIRE(f.runUntil([&] { return f.listener->counters().accepted == 5; }));
  CHECK(f.listener->unboundCount() == 2);
  CHECK(f.listener->counters().dropped_over_cap == 3);
  for (int i = 0; i < 3; ++i) CHECK(f.runUntil([&] { return closedByServer(*clients[i]); }));
  CHECK_FALSE(closedByServer(*clients[3]));
  CHECK_FALSE(closedByServer(*clients[4]));
}

TEST_CASE("an unbound connection its peer closes leaves the unbound set at once") {
  ListenerFixture f;
  auto client = f.connect();
  REQUIRE(f.runUntil([&] { return f.listener->unboundCount() == 1; }));
  client->close();
  CHECK(f.runUntil([&] { return f.listener->unboundCount() == 0; }));
  f.clock.advance(1h);
  f.listener->tick(f.clock.now());
  CHECK(f.listener->counters().bind_timeouts == 0);
}

TEST_CASE("drops over max_unbound_connections are logged once per ten seconds with the count not logged") {
  CapturedLog log;
  ListenerFixture f;
  f.setTunable("max_unbound_connections", "1");
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> clients;
  for (std::uint64_t i = 1; i <= 5; ++i) {
    clients.push_back(f.connect());
    REQUIRE(f.runUntil([&] { return f.listener->counters().accepted == i; }));
  }
  CHECK(f.listener->counters().dropped_over_cap == 4);
  CHECK(log.count("the oldest is dropped") == 1);
  f.clock.advance(10s);
  clients.push_back(f.connect());
  REQUIRE(f.runUntil([&] { return f.listener->counters().accepted == 6; }));
  CHECK(log.count("the oldest is dropped") == 2);
  CHECK(log.count("(3 more since the last such line)") == 1);
}

TEST_CASE("stop closes every unbound connection and accepts no more") {
  ListenerFixture f;
  auto first = f.connect();
  auto second = f.connect();
  REQUIRE(f.runUntil([&] { return f.listener->unboundCount() == 2; }));
  f.listener->stop("stopping");
  CHECK(f.listener->unboundCount() == 0);
  CHECK(f.runUntil([&] { return closedByServer(*first) && closedByServer(*second); }));
}

TEST_CASE("listening on an address another listener holds answers kCannotListen with the address and the system's reason") {
  ListenerFixture f;
  Listener second(f.io, f.timers, *f.registry, f.clock,
                  [](asio::ip::tcp::socket, npac::associations::Nsap, std::string) { return std::shared_ptr<Session>(); });
  const npac::Status refused = second.listen({asio::ip::make_address("127.0.0.1"), f.listener->port()});
  REQUIRE_FALSE(refused.isOk());
  CHECK(refused.code() == npac::StatusCode::kCannotListen);
  CHECK_THAT(refused.message(), Catch::StartsWith("cannot listen on 127.0.0.1:" + std::to_string(f.listener->port()) + ": ") &&
                                    Catch::Contains("in use"));
}

// The descriptor limit, in this process: its soft RLIMIT_NOFILE is lowered to what is open
// plus a few, and restored at the end of the test.
class LowDescriptorLimit {
 public:
  explicit LowDescriptorLimit(rlim_t spare) {
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
    rlimit lowered = saved_;
    lowered.rlim_cur = openDescriptors() + spare;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  }
  ~LowDescriptorLimit() {
    for (int fd : filler_) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  LowDescriptorLimit(const LowDescriptorLimit&) = delete;
  LowDescriptorLimit& operator=(const LowDescriptorLimit&) = delete;
  // Opens /dev/null until the limit is reached: the next accept(2) fails with EMFILE.
  void exhaust() {
    while (true) {
      int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) break;
      filler_.push_back(fd);
    }
  }
  static rlim_t openDescriptors() {
    rlim_t n = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  }

 private:
  rlimit saved_{};
  std::vector<int> filler_;
};

TEST_CASE("at the descriptor limit the oldest unbound connections make room and the newest is served") {
  ListenerFixture f;
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> clients;
  {
    // Clients connect first (their descriptors count too); the listener then meets EMFILE
    // part way through its backlog.
    LowDescriptorLimit limit(60);
    for (int i = 0; i < 40; ++i) clients.push_back(f.connect());
    REQUIRE(f.runUntil([&] { return f.listener->counters().accepted == 40; }));
    CHECK(f.listener->counters().dropped_at_fd_limit > 0);
    CHECK(f.listener->descriptorCap() < 40);
    CHECK(f.listener->unboundCount() <= f.listener->descriptorCap());
    CHECK_FALSE(closedByServer(*clients.back()));
    CHECK(f.runUntil([&] { return closedByServer(*clients.front()); }));
  }
  // The flood over (every unbound connection gone), the learnt cap no longer applies.
  f.clock.advance(1h);
  f.listener->tick(f.clock.now());
  CHECK(f.listener->descriptorCap() == std::numeric_limits<std::size_t>::max());
}

TEST_CASE("at the descriptor limit with no unbound connection a pending one is closed at once on the reserve descriptor") {
  CapturedLog log;
  ListenerFixture f;
  LowDescriptorLimit limit(8);
  auto first = f.connect();
  auto second = f.connect();
  limit.exhaust();
  REQUIRE(f.runUntil([&] { return closedByServer(*first) && closedByServer(*second); }));
  CHECK(f.listener->counters().shed_at_fd_limit == 2);
  CHECK(f.listener->counters().accepted == 0);
  // Both failures were logged as one line: the second within kAcceptLogInterval.
  CHECK(log.count("accepting associations failed") == 1);
  // Accepting went on after a back-off, not in a loop: one failure per pending connection.
  CHECK(f.listener->counters().accept_errors == 2);
}
