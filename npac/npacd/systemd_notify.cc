#include "npac/npacd/systemd_notify.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

namespace npac::npacd {

namespace {

// sd_notify(3): a newline-separated list of VAR=value; a status line must not carry its
// own newlines or it would be read as further assignments.
std::string oneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

void send(const std::string& state) {
  // unset_environment 0: npacd notifies again later (STOPPING, WATCHDOG).
  const int sent = sd_notify(0, state.c_str());
  if (sent < 0) spdlog::warn("systemd: cannot notify the service manager: {}", std::strerror(-sent));
}

}  // namespace

bool SystemdNotifier::managed() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  return socket != nullptr && *socket != '\0';
}

void SystemdNotifier::ready(const std::string& status) {
  if (managed()) send("READY=1\nSTATUS=" + oneLine(status));
}

void SystemdNotifier::stopping(const std::string& status) {
  if (managed()) send("STOPPING=1\nSTATUS=" + oneLine(status));
}

void SystemdNotifier::status(const std::string& status) {
  if (managed()) send("STATUS=" + oneLine(status));
}

std::chrono::microseconds SystemdNotifier::startWatchdog(common::TimerFactory& timers) {
  std::uint64_t usec = 0;
  // > 0 only when WATCHDOG_USEC is set and WATCHDOG_PID, if set, is this process.
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::chrono::microseconds{0};
  // systemd.service(5) WatchdogSec=: "the daemon should send WATCHDOG=1 ... at least
  // every half of the watchdog time"; half leaves one missed tick of margin.
  interval_ = std::chrono::microseconds{static_cast<std::int64_t>(usec / 2)};
  timer_ = timers.makeTimer();
  send("WATCHDOG=1");
  schedulePing();
  return interval_;
}

void SystemdNotifier::stopWatchdog() {
  if (timer_) timer_->cancel();
}

void SystemdNotifier::schedulePing() {
  timer_->after(std::max(std::chrono::floor<std::chrono::milliseconds>(interval_), std::chrono::milliseconds(1)), [this] {
    send("WATCHDOG=1");
    schedulePing();
  });
}

}  // namespace npac::npacd
