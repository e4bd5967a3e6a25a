// npacd as a newcomer starts it: what its first start says, and what happens when its
// standard output goes away (`npacd | head -2`, `make run | tee` ended by Ctrl-C, a closed
// terminal) — the real binary writing its log to a pipe whose reader closed. A server
// ignores SIGPIPE and keeps running; before, the next log line killed it without
// releasing its associations.
#include "tests/npac/npacd/npacd_fixture.h"

#include <fcntl.h>
#include <poll.h>

#include <csignal>

using namespace npacd_test;

namespace {

// npacd with stdout and stderr on a pipe; returns its pid, the pipe's read end in *reader.
pid_t spawnOnPipe(const std::vector<std::string>& argv, int* reader) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  ::close(fds[1]);
  *reader = fds[0];
  return pid;
}

// Reads from `fd` until `text` has been seen (or 10 s passed); everything read.
std::string readUntil(int fd, const std::string& text) {
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  char buffer[4096];
  while (seen.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 100) <= 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    seen.append(buffer, static_cast<std::size_t>(n));
  }
  return seen;
}

}  // namespace

TEST_CASE("npacd keeps running and stops cleanly after the reader of its standard output went away") {
  const fs::path dir = fs::temp_directory_path() / label("npacd-stdout-test-", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  int reader = -1;
  const pid_t pid = spawnOnPipe({binDir() + "/npacd", "--db", (dir / "npacd.db").string(), "--listen",
                                 "127.0.0.1:0", "--api", "127.0.0.1:0"},
                                &reader);
  const std::string start = readUntil(reader, "npacd listening");
  std::smatch m;
  REQUIRE(std::regex_search(start, m, std::regex(R"(listening for associations on 127\.0\.0\.1:(\d+))")));
  const auto port = static_cast<std::uint16_t>(std::stoi(m[1]));
  ::close(reader);  // `| head -2` has what it wanted
  // Something npacd logs: a connection that sends a COTP ER instead of a CR.
  for (int i = 0; i < 3; ++i) {
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    const std::uint8_t er[] = {0x03, 0x00, 0x00, 0x09, 0x04, 0x70, 0x00, 0x00, 0x02};
    boost::asio::write(socket, boost::asio::buffer(er));
    std::uint8_t byte = 0;
    boost::system::error_code ec;
    socket.read_some(boost::asio::buffer(&byte, 1), ec);  // closed by npacd after logging
  }
  int status = 0;
  CHECK(waitpid(pid, &status, WNOHANG) == 0);  // still running
  kill(pid, SIGTERM);
  CHECK(waitFor(pid, 10s) == 0);  // and its graceful stop still works
  fs::remove_all(dir);
}

TEST_CASE("npacd's first start on SQLite reports the NPAC key it made as information and says nothing of leases") {
  NpacdProcess npacd;
  const std::string log = npacd.log();
  INFO(log);
  const std::size_t key_line = log.find("no usable NPAC key: created NPAC key 1/1");
  REQUIRE(key_line != std::string::npos);
  const std::size_t line_start = log.rfind('\n', key_line);
  const std::string line = log.substr(line_start == std::string::npos ? 0 : line_start + 1,
                                      log.find('\n', key_line) - (line_start == std::string::npos ? 0 : line_start + 1));
  CHECK(line.find("[info]") != std::string::npos);
  CHECK(log.find("[warning]") == std::string::npos);
  CHECK(log.find("provider leases") == std::string::npos);  // one npacd on a file: no leases to explain
}
