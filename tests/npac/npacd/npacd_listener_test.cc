// npacd end to end under connection floods: a real npacd at a low descriptor limit with
// more idle TCP connections than the limit still answers its admin API, does not spin, logs
// a bounded number of lines and lets a provider bind; max_unbound_connections closes the
// oldest idle connections; an idle unbound connection costs little memory. Real binary,
// SQLite, loopback, npac-soa-sim.
#include "tests/npac/npacd/npacd_fixture.h"

#include <sys/resource.h>

#include <memory>
#include <set>

using namespace npacd_test;

namespace {

namespace asio = boost::asio;

// Lowers this process's soft RLIMIT_NOFILE while it lives; a child started meanwhile (the
// npacd under test) keeps the lowered limit.
class SoftDescriptorLimit {
 public:
  explicit SoftDescriptorLimit(rlim_t limit) {
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
    rlimit lowered = saved_;
    lowered.rlim_cur = limit;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  }
  ~SoftDescriptorLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  SoftDescriptorLimit(const SoftDescriptorLimit&) = delete;
  SoftDescriptorLimit& operator=(const SoftDescriptorLimit&) = delete;

 private:
  rlimit saved_{};
};

// The pid of the npacd serving `npacd`'s database (its command line names the file).
pid_t pidOf(const NpacdProcess& npacd) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = slurp(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find("/npacd ") != std::string::npos &&
        cmdline.find(" " + npacd.db().string() + " ") != std::string::npos) {
      return static_cast<pid_t>(std::stol(name));
    }
  }
  FAIL("no npacd process for " << npacd.db());
  return -1;
}

// CPU time (user + system) `pid` has used.
std::chrono::milliseconds cpuTime(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  // Fields after the command (which may hold spaces) start past its ')'; utime and stime
  // are fields 14 and 15 (proc(5)), the 12th and 13th after it.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) stime = std::stoll(field);
  }
  const long ticks = ::sysconf(_SC_CLK_TCK);
  return std::chrono::milliseconds((utime + stime) * 1000 / ticks);
}

// Connections npacd has accepted on its association port `port`: descriptors of `pid` that
// are sockets whose /proc/<pid>/net/tcp{,6} row has local port `port` and is not the listener
// (state 0A). Counting every descriptor instead races with the admin API's own connections
// and SQLite's files, which open and close on their own schedule.
std::size_t acceptedConnections(pid_t pid, std::uint16_t port) {
  std::set<std::string> inodes;
  for (const char* family : {"tcp", "tcp6"}) {
    std::istringstream table(slurp("/proc/" + std::to_string(pid) + "/net/" + family));
    std::string line;
    std::getline(table, line);  // header
    while (std::getline(table, line)) {
      std::istringstream row(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      row >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      const auto colon = local.rfind(':');
      if (colon == std::string::npos) continue;
      if (std::stoul(local.substr(colon + 1), nullptr, 16) != port || state == "0A") continue;
      inodes.insert("socket:[" + inode + "]");
    }
  }
  std::size_t n = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code link_ec;
    const auto target = fs::read_symlink(it->path(), link_ec);
    if (!link_ec && inodes.count(target.string()) != 0) ++n;
  }
  return n;
}

long residentKiB(pid_t pid) {
  std::istringstream status(slurp("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

std::size_t countOf(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Idle client connections: TCP up, nothing sent.
class IdleConnections {
 public:
  void open(std::uint16_t port, std::size_t count) {
    for (std::size_t i = 0; i < count; ++i) {
      auto socket = std::make_unique<asio::ip::tcp::socket>(io_);
      socket->connect({asio::ip::make_address("127.0.0.1"), port});
      socket->non_blocking(true);
      sockets_.push_back(std::move(socket));
    }
  }
  // npacd closed connection `i` (EOF or reset), without blocking.
  bool closedByNpacd(std::size_t i) {
    char byte = 0;
    boost::system::error_code ec;
    sockets_.at(i)->read_some(asio::buffer(&byte, 1), ec);
    return ec && ec != asio::error::would_block && ec != asio::error::try_again;
  }

 private:
  asio::io_context io_;
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> sockets_;
};

}  // namespace

TEST_CASE("npacd at its descriptor limit under idle connections keeps its admin API and a bind working without spinning") {
  std::unique_ptr<NpacdProcess> npacd;
  {
    SoftDescriptorLimit limit(128);
    npacd = std::make_unique<NpacdProcess>();
  }
  const pid_t pid = pidOf(*npacd);
  auto key = npacd->provision("0001");
  IdleConnections idle;
  idle.open(npacd->port(), 300);  // far more than npacd may hold
  // npacd reaches its limit, says so once, and makes room by closing the oldest idle ones.
  CHECK(eventually([&] { return npacd->log().find("descriptor limit reached") != std::string::npos; }, 5s, 10ms));
  CHECK(eventually([&] { return idle.closedByNpacd(0); }, 5s, 10ms));
  // An accept loop retrying EMFILE at once burns a whole core.
  const auto cpu_before = cpuTime(pid);
  std::this_thread::sleep_for(1s);
  CHECK(cpuTime(pid) - cpu_before < 200ms);
  CHECK(npacd->call(http::verb::get, "/v1/associations").status == 200);
  auto sim = npacd->sim("0001", key, {"--from", "127.0.0.2", "--expect", "1", "--duration", "15s"});
  REQUIRE(npacd->waitForAssociations(1));
  npacd->submit("0001", "flood", 1);
  CHECK(sim->wait() == 0);
  const std::string log = npacd->log();
  INFO(log.substr(0, 4000));
  // One line per kind of event per 10 s, not one per failed accept(2).
  CHECK(countOf(log, "descriptor limit reached") + countOf(log, "accepting associations failed") <= 4);
  CHECK(countOf(log, "unbound connections, the most allowed") <= 2);
}

TEST_CASE("with max_unbound_connections 5 npacd closes the three oldest of eight idle connections") {
  NpacdProcess npacd;
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/max_unbound_connections", Json{{"value", 5}}).status == 200);
  IdleConnections idle;
  idle.open(npacd.port(), 8);
  CHECK(eventually([&] { return idle.closedByNpacd(0) && idle.closedByNpacd(1) && idle.closedByNpacd(2); }, 10s, 10ms));
  for (std::size_t i = 3; i < 8; ++i) CHECK_FALSE(idle.closedByNpacd(i));
  CHECK(npacd.log().find("5 unbound connections, the most allowed by max_unbound_connections") !=
        std::string::npos);
}

TEST_CASE("an idle unbound connection costs npacd less than 16 KiB of resident memory") {
  NpacdProcess npacd;
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/max_unbound_connections", Json{{"value", 2000}}).status == 200);
  const pid_t pid = pidOf(npacd);
  IdleConnections warmup;  // the allocator's and the reactor's first growth are not per connection
  warmup.open(npacd.port(), 50);
  REQUIRE(eventually([&] { return acceptedConnections(pid, npacd.port()) >= 50; }, 10s, 10ms));
  const long before = residentKiB(pid);
  IdleConnections idle;
  idle.open(npacd.port(), 1000);
  REQUIRE(eventually([&] { return acceptedConnections(pid, npacd.port()) >= 1050; }, 10s, 10ms));
  const long after = residentKiB(pid);
  const double per_connection = static_cast<double>(after - before) / 1000.0;
  INFO("RSS " << before << " KiB before, " << after << " KiB after 1000 idle connections: "
              << per_connection << " KiB each");
  CHECK(per_connection < 16.0);
  WARN("resident memory per idle unbound connection: " << per_connection << " KiB");
}
