// npacd --log-target journal (logging.h): each line reaches the systemd journal with its
// priority and identifier, and npacd refuses to start when no journal takes messages
// rather than lose every line unseen. libsystemd's sd_journal_send writes datagrams in the
// journal's native protocol ("KEY=value" lines) to /run/systemd/journal/socket; on a
// machine without systemd-journald (CI, containers) the test binds that socket itself and
// reads what npacd sends. Both cases hold one lock file so that they never meet. Where a
// real journald owns the socket, neither case can arrange its condition: it says so (WARN)
// and checks nothing.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "tests/npac/npacd/npacd_fixture.h"

using namespace npacd_test;

namespace {

const fs::path kJournalSocket = "/run/systemd/journal/socket";

// Holds the test's lock for its lifetime.
struct JournalLock {
  int fd = ::open("/tmp/npacd-journal-test.lock", O_CREAT | O_RDWR, 0600);
  JournalLock() { REQUIRE(::flock(fd, LOCK_EX) == 0); }
  ~JournalLock() { ::close(fd); }
};

// True if a journal listens on the socket path now (a datagram to it is taken).
bool liveJournal() {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, kJournalSocket.c_str(), sizeof address.sun_path - 1);
  const bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return live;
}

// The journal's socket, bound by the test and read on a thread of its own as journald
// would (an unread datagram socket blocks its sender after a few messages); removed at
// destruction.
class FakeJournal {
 public:
  FakeJournal() {
    fs::create_directories(kJournalSocket.parent_path());
    fs::remove(kJournalSocket);  // a stale one: nobody listens (liveJournal() said so)
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, kJournalSocket.c_str(), sizeof address.sun_path - 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    timeval timeout{0, 100'000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    reader_ = std::thread([this] { read(); });
  }
  ~FakeJournal() {
    stop_ = true;
    reader_.join();
    ::close(fd_);
    std::error_code ec;
    fs::remove(kJournalSocket, ec);
  }
  FakeJournal(const FakeJournal&) = delete;
  FakeJournal& operator=(const FakeJournal&) = delete;

  // Waits (at most `limit`) until one entry received satisfies `done`; every entry so far,
  // each as its fields (KEY → value).
  template <class Predicate>
  std::vector<std::map<std::string, std::string>> waitFor(Predicate done, std::chrono::milliseconds limit) {
    eventually(
        [&] {
          std::lock_guard<std::mutex> hold(mutex_);
          return std::any_of(entries_.begin(), entries_.end(), done);
        },
        limit, 10ms);
    std::lock_guard<std::mutex> hold(mutex_);
    return entries_;
  }

 private:
  void read() {
    while (!stop_) {
      char buffer[65536];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) continue;
      std::map<std::string, std::string> entry;
      std::istringstream lines(std::string(buffer, static_cast<std::size_t>(n)));
      std::string line;
      while (std::getline(lines, line)) {
        const std::size_t equals = line.find('=');
        if (equals != std::string::npos) entry[line.substr(0, equals)] = line.substr(equals + 1);
      }
      std::lock_guard<std::mutex> hold(mutex_);
      entries_.push_back(std::move(entry));
    }
  }

  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::map<std::string, std::string>> entries_;
  std::thread reader_;
};

bool contains(const std::map<std::string, std::string>& entry, const std::string& key, const std::string& part) {
  auto it = entry.find(key);
  return it != entry.end() && it->second.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("npacd --log-target journal writes each line to the journal with its priority and identifier") {
  JournalLock lock;
  if (liveJournal()) {
    WARN("a systemd journal owns " << kJournalSocket << ": this test cannot stand in for it here");
    return;
  }
  FakeJournal journal;
  const fs::path dir = fs::temp_directory_path() / label("npacd-journal-test-", getpid());
  fs::create_directories(dir);
  const fs::path log = dir / "npacd.out";
  const pid_t pid = spawn({binDir() + "/npacd", "--db", (dir / "npacd.db").string(), "--listen", "127.0.0.1:0",
                           "--api", "127.0.0.1:0", "--log-target", "journal"},
                          log);
  journal.waitFor([](const auto& e) { return contains(e, "MESSAGE", "npacd listening"); }, 20s);
  ::kill(pid, SIGTERM);
  CHECK(waitFor(pid, 20s) == 0);
  auto entries = journal.waitFor([](const auto& e) { return contains(e, "MESSAGE", "npacd stopped"); }, 5s);
  const auto with = [&](const std::string& part) {
    return std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return contains(e, "MESSAGE", part); });
  };
  const auto listening = with("npacd listening");
  REQUIRE(listening != entries.end());
  CHECK(listening->at("PRIORITY") == "6");  // info (RFC 5424 severity, as the journal keeps it)
  CHECK(listening->at("SYSLOG_IDENTIFIER") == "npacd");
  CHECK(with("npacd stopped") != entries.end());
  // The message alone: the journal keeps its own timestamp and level.
  CHECK(listening->at("MESSAGE").rfind("npacd listening", 0) == 0);
  // Nothing went to stdout instead.
  CHECK(slurp(log).find("npacd listening") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("npacd --log-target journal refuses to start when no journal takes messages") {
  JournalLock lock;
  if (liveJournal()) {
    WARN("a systemd journal owns " << kJournalSocket << ": this test cannot take it away here");
    return;
  }
  std::error_code ec;
  fs::remove(kJournalSocket, ec);  // a stale socket nobody listens on
  const fs::path dir = fs::temp_directory_path() / label("npacd-no-journal-test-", getpid());
  fs::create_directories(dir);
  const fs::path log = dir / "npacd.out";
  const pid_t pid = spawn({binDir() + "/npacd", "--db", (dir / "npacd.db").string(), "--listen", "127.0.0.1:0",
                           "--api", "127.0.0.1:0", "--log-target", "journal"},
                          log);
  CHECK(waitFor(pid, 10s) == 2);
  CHECK_THAT(slurp(log), Catch::Contains("--log-target journal: the systemd journal does not take messages"));
  CHECK_FALSE(fs::exists(dir / "npacd.db"));  // refused before touching anything
  fs::remove_all(dir);
}
