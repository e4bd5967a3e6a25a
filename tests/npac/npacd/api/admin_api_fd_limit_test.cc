// The admin API out of file descriptors (http_server.h: "Descriptor exhaustion at accept
// (EMFILE, ENFILE) closes the longest-idle session, or backs off 50 ms doubling to 2 s,
// instead of spinning"). Real HttpServer on loopback in this test process, whose own
// RLIMIT_NOFILE the test lowers until exactly one more descriptor can be opened: the
// client's socket takes it, so the server's accept(2) fails with EMFILE. Each Catch2 case
// runs in its own process (CTest), so the limit never reaches another test.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "tests/npac/npacd/api/http_server_fixture.h"

namespace npac::npacd {
namespace {

using namespace testing;

// Lowers the soft descriptor limit so that exactly one descriptor number is free below
// it: every free number below the highest open descriptor is filled with /dev/null first
// (a descriptor the server frees must be one it can use again), the limit set just past
// the next one. Restores the limit it found, and closes the fillers, at destruction (or
// at restore()).
class OneFreeDescriptor {
 public:
  OneFreeDescriptor() {
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
    int highest = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
      highest = std::max(highest, std::stoi(entry.path().filename().string()));
    }
    while (true) {
      const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // the lowest free number
      REQUIRE(fd >= 0);
      if (fd > highest) {
        ::close(fd);
        break;
      }
      fillers_.push_back(fd);
    }
    rlimit lowered = saved_;
    lowered.rlim_cur = static_cast<rlim_t>(highest + 2);  // highest + 1 is the one free
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
    lowered_ = true;
  }
  ~OneFreeDescriptor() { restore(); }
  void restore() {
    if (lowered_) ::setrlimit(RLIMIT_NOFILE, &saved_);
    lowered_ = false;
    for (int fd : fillers_) ::close(fd);
    fillers_.clear();
  }
  OneFreeDescriptor(const OneFreeDescriptor&) = delete;
  OneFreeDescriptor& operator=(const OneFreeDescriptor&) = delete;

 private:
  rlimit saved_{};
  bool lowered_ = false;
  std::vector<int> fillers_;
};

std::string client(int n) { return "127.0.0." + std::to_string(n); }

// A client that costs exactly one descriptor (a Connection's io_context needs more): a
// blocking socket from 127.0.0.9 with a 5 s receive timeout, one GET, its status.
class OneDescriptorClient {
 public:
  explicit OneDescriptorClient(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(0x7f000009);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) == 0);
    timeval timeout{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(0x7f000001);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0);
  }
  ~OneDescriptorClient() { ::close(fd_); }
  OneDescriptorClient(const OneDescriptorClient&) = delete;
  OneDescriptorClient& operator=(const OneDescriptorClient&) = delete;

  void send() {
    const std::string request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    REQUIRE(::write(fd_, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  }
  // The status of the answer ("HTTP/1.1 200 OK" → 200), 0 if none came in 5 s.
  int status() {
    std::string got;
    char buffer[512];
    while (got.find("\r\n") == std::string::npos) {
      const ssize_t n = ::read(fd_, buffer, sizeof buffer);
      if (n <= 0) return 0;
      got.append(buffer, static_cast<std::size_t>(n));
    }
    return got.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(got.c_str() + 9) : 0;
  }

 private:
  int fd_;
};

}  // namespace

TEST_CASE("Out of descriptors the admin API closes its longest-idle connection and serves the new one") {
  TestServer server(HttpServer::Options{});
  std::vector<std::unique_ptr<Connection>> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(std::make_unique<Connection>(client(2 + i), server.port()));
    REQUIRE(answered200(idle.back()->get("/")));
  }
  OneFreeDescriptor limit;
  OneDescriptorClient newcomer(server.port());  // takes the last free descriptor
  newcomer.send();
  CHECK(newcomer.status() == 200);
  limit.restore();
  const HttpServerCounters counters = server.counters();
  INFO("accept errors " << counters.accept_errors << ", sessions " << counters.sessions);
  CHECK(counters.accept_errors >= 1);
  CHECK(counters.closed_idle_for_room == 1);
  CHECK_FALSE(idle[0]->get("/"));  // idle the longest: closed to give its descriptor back
  CHECK(answered200(idle[1]->get("/")));
}

TEST_CASE("Out of descriptors with no idle connection the admin API backs off instead of spinning and serves the waiting client once descriptors are back") {
  TestServer server(HttpServer::Options{});
  Connection a(client(2), server.port()), b(client(3), server.port());
  a.send("/hold");
  b.send("/hold");
  REQUIRE(server.waitForHeld(2));  // both in their handlers: no session is idle
  OneFreeDescriptor limit;
  OneDescriptorClient newcomer(server.port());
  newcomer.send();
  // Retries at 50, 100, 200 ms... after the first failure: three failures take 150 ms.
  REQUIRE(server.waitFor([](const HttpServerCounters& c) { return c.accept_errors >= 3; }));
  // A retry loop without back-off fails accept(2) thousands of times in that time.
  CHECK(server.counters().accept_errors < 10);
  CHECK(server.counters().closed_idle_for_room == 0);
  limit.restore();
  CHECK(newcomer.status() == 200);  // within the 2 s back-off cap
}

}  // namespace npac::npacd
