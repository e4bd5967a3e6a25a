// Npacd: everything npacd builds while it starts, and the phases that build and run it —
// the command line, the checks made before anything is created, storage, the core, the
// admin API, the other nodes, then serving until the core is drained. main.cc runs them
// in that order behind SIGTERM/SIGINT; tests run the same phases in-process
// (tests/npac/npacd/in_process_npacd.h) with a ManualTimeSource and ManualTimers for the
// core, so what the core does after a minute is seen without waiting a minute.
//
// Each phase either succeeds or returns the refusal npacd prints before exiting 2. What a
// phase builds lives in Npacd, destroyed in the reverse order of its construction.
//
// Threads (docs/ARCHITECTURE.md "Threads" has the whole table): serve()'s caller runs the
// core io_context (the listener, the first AssociationManager); --threads N adds N-1 core
// threads (core/core_shards.h); the admin API runs on its own io_context thread; the
// QueueWriter, the WAL checkpointer, the throttle exchange, the node notifications and
// the storage prober each own one more. The phases run on one thread, before serve().
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/time_source.h"
#include "common/timer.h"
#include "db/clock.h"
#include "db/database.h"
#include "npac/npacd/asio_timers.h"
#include "npac/npacd/command_line.h"
#include "npac/npacd/config.h"

#include <boost/asio/signal_set.hpp>

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace npac::db {
class InstanceLock;
class QueueWriter;
class WalCheckpointer;
}  // namespace npac::db

namespace npac::tunables {
class TunableRegistry;
}  // namespace npac::tunables

namespace npac::npacd {

class AdminApi;
class AssociationManager;
class CoreShards;
class NodeNotifications;
class ThrottleExchange;
class ThrottleGroups;

// What a phase of the start says when npacd must not run: printed as "npacd: <refusal>",
// then npacd exits 2. Empty: the phase succeeded.
using Refusal = std::string;

// A core thread of --threads N beyond the first: its own io_context, connections and
// AssociationManager (core/core_shards.h).
struct ExtraCore {
  ExtraCore();
  ~ExtraCore();
  boost::asio::io_context io;
  std::unique_ptr<db::Database> db, progress_db;
  std::unique_ptr<AssociationManager> manager;
  std::thread thread;
};

// Everything npacd builds while it starts, in construction order: members are destroyed
// in reverse, the core before the connections it uses, the checkpointer last of the
// storage, the instance lock after everything that touches the database.
struct Npacd {
  // `time`: every component reads time from it (common/time_source.h). `core_timers`: the
  // first core's timers (its tick, delivery wakes, release timeouts…); null: AsioTimers
  // on core_io. Both outlive this object.
  explicit Npacd(const common::TimeSource& time = common::realTimeSource(),
                 common::TimerFactory* core_timers = nullptr);
  ~Npacd();
  Npacd(const Npacd&) = delete;
  Npacd& operator=(const Npacd&) = delete;

  NpacdCommandLine command_line;
  NpacdConfig& config = command_line.config;
  std::shared_ptr<boost::asio::ssl::context> api_tls;
  db::Durability durability = db::Durability::kFull;
  std::string token_file;
  const common::TimeSource& time_source;
  common::TimerFactory* core_timer_factory;
  std::unique_ptr<db::InstanceLock> instance_lock;
  db::OpenOptions open_options;
  db::OpenOptions progress_options;
  std::unique_ptr<db::WalCheckpointer> checkpointer;
  std::unique_ptr<db::Database> core_db, progress_db, api_db, registry_db;
  db::Clock clock;
  std::unique_ptr<tunables::TunableRegistry> registry;
  std::unique_ptr<db::QueueWriter> writer;
  boost::asio::io_context core_io;
  AsioTimers core_timers{core_io};  // the systemd watchdog's pings
  boost::asio::io_context api_io;
  std::unique_ptr<AssociationManager> manager;
  std::unique_ptr<ThrottleGroups> throttle_groups;
  std::unique_ptr<ThrottleExchange> exchange;
  std::vector<std::unique_ptr<ExtraCore>> extra_cores;
  std::unique_ptr<CoreShards> shards;
  std::unique_ptr<AdminApi> admin;
  std::unique_ptr<NodeNotifications> notifications;

  // The provider's owner: its shard's manager, or the one manager.
  AssociationManager& ownerOf(const std::string& spid);
};

// Every option, its range or check, and --config under them (command_line.h). Returns the
// exit code when npacd is done already (--help, --version, a bad command line).
std::optional<int> parseCommandLine(Npacd& n, int argc, char** argv);

// The start phases, in this order; each returns its refusal or "".
Refusal checkSettings(Npacd& n);       // before anything is created or changed
Refusal lockDatabase(Npacd& n);        // the instance lock and the startup check
Refusal openStorage(Npacd& n);         // connections, tunables, queue writer, NPAC key
Refusal startCore(Npacd& n);           // the core, its extra threads, the listener
Refusal startApi(Npacd& n);            // the admin API and its first token
Refusal listenToOtherNodes(Npacd& n);  // PostgreSQL: the other nodes' notifications
// All of them in order: the first refusal, or "" when npacd is ready to serve.
Refusal start(Npacd& n);

// The line a supervisor or a test waits for: both listeners and the database.
void announce(const Npacd& n);
// SIGTERM and SIGINT on `signals`: drain — every association released, the core's threads
// stopped (serve() then returns).
void drainOnSignal(Npacd& n, boost::asio::signal_set& signals);
// The same drain, asked from any thread.
void drain(Npacd& n);
// Runs the core on this thread, the API and the extra cores on theirs, until the drain
// stops the core; then stops the rest in order.
void serve(Npacd& n);

}  // namespace npac::npacd
