// Helpers for the tests of npacd as a service (tests/packaging/): the real npacd binary
// ($NPAC_BIN/npacd) started with a chosen environment (NOTIFY_SOCKET, WATCHDOG_USEC,
// WATCHDOG_PID = the child's own pid) and a chosen command line, its ports read back from
// its start-up line wherever it logs (stdout or --log-file), and a scratch directory.
// Every wait is bounded; a child still running at the end is killed (SIGKILL).
#pragma once

#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/support/program_run.h"

#include <cstdlib>
#include <map>

namespace service_test {

using namespace npacd_test;

// A fresh directory under the system temp dir, removed at the end of the test.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "npacd-service-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~ScratchDir() { fs::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

inline void writeFile(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// fork + exec of `argv` with stdout/stderr appended to `log`, `env` added to the
// environment and, when `watchdog_pid_self`, WATCHDOG_PID set to the child's own pid (as
// systemd sets it for the main process).
inline pid_t spawnWithEnv(const std::vector<std::string>& argv, const fs::path& log,
                          const std::map<std::string, std::string>& env, bool watchdog_pid_self = false) {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = std::fopen(log.c_str(), "a");
    if (out != nullptr) {
      dup2(fileno(out), 1);
      dup2(fileno(out), 2);
    }
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    if (watchdog_pid_self) setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// A command's exit code and its stdout (the command redirects stderr itself):
// tests/support/program_run.h.
using Run = npac::testing::ProgramRun;
using npac::testing::runCommand;

// An npacd (or an npacd at `program`) started by the test, killed at the end if running.
class ServiceProcess {
 public:
  struct Options {
    std::vector<std::string> args;            // the whole command line after the program
    std::map<std::string, std::string> env;   // added to the environment
    bool watchdog_pid_self = false;
    fs::path log_file;                        // where the start-up line appears ("" = stdout)
    std::string program;                      // default $NPAC_BIN/npacd
  };
  ServiceProcess(const fs::path& dir, Options options) : options_(std::move(options)) {
    stdout_ = dir / "npacd.stdout";
    std::vector<std::string> argv{options_.program.empty() ? binDir() + "/npacd" : options_.program};
    argv.insert(argv.end(), options_.args.begin(), options_.args.end());
    pid_ = spawnWithEnv(argv, stdout_, options_.env, options_.watchdog_pid_self);
  }
  ~ServiceProcess() { kill9(); }
  ServiceProcess(const ServiceProcess&) = delete;
  ServiceProcess& operator=(const ServiceProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string output() const { return slurp(stdout_); }
  std::string log() const { return slurp(options_.log_file.empty() ? stdout_ : options_.log_file); }

  // Waits (bounded) for the start-up line and reads the ports; false if npacd exited first
  // or did not log it in time.
  bool waitListening(std::chrono::milliseconds limit = 10s) {
    const std::regex ready(R"(listening for associations on 127\.0\.0\.1:(\d+), admin API on 127\.0\.0\.1:(\d+))");
    std::string text;
    std::smatch m;
    bool exited = false;
    const bool logged = eventually(
        [&] {
          text = log();
          if (std::regex_search(text, m, ready)) return true;
          int status = 0;
          exited = pid_ > 0 && waitpid(pid_, &status, WNOHANG) == pid_;
          return exited;
        },
        limit);
    if (exited) {
      pid_ = -1;
      return false;
    }
    if (!logged) return false;
    port_ = static_cast<std::uint16_t>(std::stoi(m[1]));
    api_port_ = static_cast<std::uint16_t>(std::stoi(m[2]));
    return true;
  }
  std::uint16_t port() const { return port_; }
  std::uint16_t apiPort() const { return api_port_; }

  // Exit code within `limit` (SIGKILL past it): for a run that must end on its own.
  int wait(std::chrono::milliseconds limit = 10s) {
    const int code = pid_ > 0 ? waitFor(pid_, limit) : -1;
    pid_ = -1;
    return code;
  }
  int terminate(std::chrono::milliseconds limit = 10s) {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    return wait(limit);
  }
  void kill9() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  Options options_;
  fs::path stdout_;
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::uint16_t api_port_ = 0;
};

// True if something accepts TCP connections on 127.0.0.1:`port`.
inline bool accepts(std::uint16_t port) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return !ec;
}

}  // namespace service_test
