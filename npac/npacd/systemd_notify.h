// SystemdNotifier: npacd's side of the service manager's notification protocol
// (sd_notify(3), systemd.service(5) Type=notify): READY=1 once both listeners accept,
// STOPPING=1 when the drain starts, STATUS= lines for `systemctl status`, and WATCHDOG=1
// at half of WatchdogSec= (WATCHDOG_USEC) when the manager asks for it (sd_watchdog_enabled(3)).
// Without NOTIFY_SOCKET (npacd not started by systemd) every call does nothing.
//
// Threading: ready(), stopping() and status() may be called from any thread (each is one
// datagram). The watchdog pings run on the timers given to startWatchdog() — the core's
// io_context's — so a core that stops turning stops the pings and the manager restarts
// npacd. stopWatchdog() and the destructor must run on that thread or after it stopped.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/timer.h"

namespace npac::npacd {

class SystemdNotifier {
 public:
  SystemdNotifier() = default;
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  // True if a service manager listens (NOTIFY_SOCKET is set).
  static bool managed();
  static void ready(const std::string& status);
  static void stopping(const std::string& status);
  static void status(const std::string& status);

  // Starts WATCHDOG=1 pings every half WATCHDOG_USEC on `io` when the manager enabled the
  // watchdog for this process; returns the interval, or zero when it is not enabled.
  std::chrono::microseconds startWatchdog(common::TimerFactory& timers);
  void stopWatchdog();

 private:
  void schedulePing();

  std::unique_ptr<common::Timer> timer_;
  std::chrono::microseconds interval_{0};
};

}  // namespace npac::npacd
