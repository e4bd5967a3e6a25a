// npacd under a service manager (npac/npacd/systemd_notify.h, sd_notify(3)): the test plays
// systemd — it binds a Unix datagram socket, passes it as NOTIFY_SOCKET (with
// WATCHDOG_USEC and WATCHDOG_PID = npacd's pid) to a real npacd and reads what arrives.
#include <sys/socket.h>
#include <sys/un.h>

#include <poll.h>

#include "service_fixture.h"

using namespace service_test;

namespace {

// The manager's end: an AF_UNIX datagram socket bound to a path in the test's directory.
class NotifySocket {
 public:
  explicit NotifySocket(const fs::path& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.string().size() < sizeof address.sun_path);
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  }
  ~NotifySocket() { ::close(fd_); }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  // The next datagram within `limit`, or "" if none came.
  std::string next(std::chrono::milliseconds limit) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(limit.count())) != 1) return "";
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  }
  // Datagrams until one contains `wanted` (returned) or `limit` passes ("").
  std::string until(const std::string& wanted, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return "";
      std::string d = next(left);
      if (d.find(wanted) != std::string::npos) return d;
    }
  }

 private:
  fs::path path_;
  int fd_ = -1;
};

ServiceProcess::Options managed(const ScratchDir& dir, const fs::path& socket, const std::string& watchdog_usec) {
  ServiceProcess::Options o;
  o.args = {"--db", (dir.path / "npacd.db").string(), "--listen", "127.0.0.1:0", "--api", "127.0.0.1:0",
            "--durability", "normal"};
  o.env["NOTIFY_SOCKET"] = socket.string();
  if (!watchdog_usec.empty()) {
    o.env["WATCHDOG_USEC"] = watchdog_usec;
    o.watchdog_pid_self = true;
  }
  return o;
}

}  // namespace

TEST_CASE("npacd tells the service manager READY=1 with a status once both ports answer") {
  ScratchDir dir;
  NotifySocket manager(dir.path / "notify");
  ServiceProcess npacd(dir.path, managed(dir, dir.path / "notify", ""));
  const std::string ready = manager.until("READY=1", 10s);
  REQUIRE_FALSE(ready.empty());
  CHECK_THAT(ready, Catch::Contains("STATUS=associations on 127.0.0.1:"));
  // READY=1 is sent after the start-up line: both ports accept at this moment.
  REQUIRE(npacd.waitListening(1s));
  CHECK(accepts(npacd.port()));
  CHECK(accepts(npacd.apiPort()));
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("npacd tells the service manager STOPPING=1 when SIGTERM starts the drain") {
  ScratchDir dir;
  NotifySocket manager(dir.path / "notify");
  ServiceProcess npacd(dir.path, managed(dir, dir.path / "notify", ""));
  REQUIRE_FALSE(manager.until("READY=1", 10s).empty());
  CHECK(manager.next(50ms).empty());  // nothing else without a watchdog
  kill(npacd.pid(), SIGTERM);
  const std::string stopping = manager.until("STOPPING=1", 10s);
  CHECK_THAT(stopping, Catch::Contains("STATUS=draining"));
  CHECK(npacd.wait() == 0);
}

TEST_CASE("npacd pings the watchdog at half of WATCHDOG_USEC while it runs") {
  ScratchDir dir;
  NotifySocket manager(dir.path / "notify");
  // 400 ms: a ping every 200 ms.
  ServiceProcess npacd(dir.path, managed(dir, dir.path / "notify", "400000"));
  REQUIRE_FALSE(manager.until("READY=1", 10s).empty());
  const auto first = std::chrono::steady_clock::now();
  int pings = 0;
  while (pings < 5) {
    const std::string d = manager.until("WATCHDOG=1", 2s);
    REQUIRE_FALSE(d.empty());
    ++pings;
  }
  // Five pings at 200 ms apart take about 800 ms (the first comes with READY): neither a
  // flood nor a missed beat.
  const auto took = std::chrono::steady_clock::now() - first;
  CHECK(took >= 500ms);
  CHECK(took < 3s);
  CHECK(npacd.terminate() == 0);
}

TEST_CASE("npacd does not ping the watchdog when WATCHDOG_PID names another process") {
  ScratchDir dir;
  NotifySocket manager(dir.path / "notify");
  ServiceProcess::Options o = managed(dir, dir.path / "notify", "");
  o.env["WATCHDOG_USEC"] = "100000";
  o.env["WATCHDOG_PID"] = std::to_string(getpid());  // the test's pid, not npacd's
  ServiceProcess npacd(dir.path, o);
  REQUIRE_FALSE(manager.until("READY=1", 10s).empty());
  CHECK(manager.until("WATCHDOG=1", 300ms).empty());
  CHECK(npacd.terminate() == 0);
}
