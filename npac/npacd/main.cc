// npacd — the NPAC SMS association manager: accepts providers' associations (RFC 1006 /
// OSI upper layers, NPAC bind), delivers the durable outbound queue through each
// provider's logical association, and serves the admin HTTP/JSON API.
//
// main() reads as npacd's start, phase by phase (server.h): the command line, the checks
// made before anything is created, storage, the core, the admin API, the other nodes,
// then serving until SIGTERM/SIGINT and the graceful stop. A phase's refusal is printed
// as "npacd: <refusal>" and npacd exits 2.
//
// Settings come from the command line and, under it, from --config FILE (command_line.h);
// under systemd npacd tells the manager when it is ready, when it stops, and pings its
// watchdog from the core thread (systemd_notify.h).
#include <csignal>
#include <cstdio>
#include <optional>

#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "npac/npacd/server.h"

int main(int argc, char** argv) {
  using namespace npac::npacd;
  // A server keeps running when whoever read its standard output went away (`npacd |
  // head`, a closed terminal, `make run | tee` ended): a write there fails with EPIPE,
  // which the log sinks ignore, instead of killing npacd before it releases its
  // associations. Sockets are written with MSG_NOSIGNAL or their errors anyway.
  std::signal(SIGPIPE, SIG_IGN);
  Npacd n;
  if (std::optional<int> done = parseCommandLine(n, argc, argv)) return *done;
  if (Refusal refused = start(n); !refused.empty()) {
    std::fprintf(stderr, "npacd: %s\n", refused.c_str());
    return 2;
  }
  boost::asio::signal_set signals(n.core_io, SIGTERM, SIGINT);
  drainOnSignal(n, signals);
  announce(n);
  serve(n);
  spdlog::info("npacd stopped");
  return 0;
}
