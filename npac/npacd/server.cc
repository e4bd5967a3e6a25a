// npacd's start phases and its run (server.h).
#include "npac/npacd/server.h"

#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "db/database.h"
#include "db/instance_lock.h"
#include "db/postgres_connection.h"
#include "db/queue_writer.h"
#include "db/wal_checkpointer.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/asio_timers.h"
#include "npac/npacd/api/tls_context.h"
#include "npac/npacd/core/association_manager.h"
#include "npac/npacd/core/core_shards.h"
#include "npac/npacd/command_line.h"
#include "npac/npacd/config.h"
#include "npac/npacd/logging.h"
#include "npac/npacd/node_notifications.h"
#include "npac/npacd/systemd_notify.h"
#include "npac/npacd/core/throttle_exchange.h"
#include "npac/version.h"
#include "npac/npacd/initial_token.h"
#include "npac/npacd/npac_keys.h"
#include "npac/npacd/queued_pdu_facts.h"
#include "npac/npacd/startup_check.h"
#include "tunables/registry.h"

namespace npac::npacd {

namespace {

// At stop: how long the admin API may take to finish its last writes (kApiDrainTimeout).
constexpr std::chrono::seconds kApiDrainTimeout{2};

// Opens one more connection to the database, or says why it cannot.
Refusal openConnection(const Npacd& n, const db::OpenOptions& options, std::unique_ptr<db::Database>* out) {
  auto opened = db::Database::open(n.config.db_path, options);
  if (!opened.isOk()) return "cannot open the database: " + opened.status().toString();
  *out = std::move(opened).value();
  return {};
}

// Whether host:port can be listened on now ("" when it can, else why): tried before
// npacd creates or changes anything, so a second npacd on busy ports leaves no database,
// key or token behind (the real listeners bind again, moments later). Port 0 is always free.
std::string portTaken(const std::string& host, std::uint16_t port) {
  if (port == 0) return "";
  boost::asio::io_context io;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  if (ec) return "";  // the real listener names a bad address
  boost::asio::ip::tcp::acceptor probe(io);
  const boost::asio::ip::tcp::endpoint endpoint(address, port);
  probe.open(endpoint.protocol(), ec);
  if (!ec) probe.set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) probe.bind(endpoint, ec);
  if (!ec) probe.listen(boost::asio::socket_base::max_listen_connections, ec);
  return ec ? ec.message() : "";
}

// "<what> cannot listen on host:port: <why> — choose another <flag> host:port, or stop the
// process using it (ss …)<tail>".
Refusal portRefusal(const std::string& what, const std::string& flag, const std::string& host, std::uint16_t port,
                    const std::string& why, const std::string& tail) {
  const std::string p = std::to_string(port);
  return what + " cannot listen on " + host + ":" + p + ": " + why + " — choose another " + flag +
         " host:port, or stop the process using it (ss -ltnp 'sport = :" + p + "')" + tail;
}


}  // namespace

ExtraCore::ExtraCore() = default;
ExtraCore::~ExtraCore() = default;

Npacd::Npacd(const common::TimeSource& time, common::TimerFactory* core_timers)
    : time_source(time), core_timer_factory(core_timers) {}
Npacd::~Npacd() = default;

AssociationManager& Npacd::ownerOf(const std::string& spid) {
  return shards ? shards->shard(shards->shardOf(spid)) : *manager;
}

// exit code when npacd is done already (--help, --version, a bad command line).
std::optional<int> parseCommandLine(Npacd& n, int argc, char** argv) {
  CLI::App app{"npacd: NPAC SMS association manager"};
  app.set_version_flag("--version", npac::versionLine("npacd"));
  declareNpacdOptions(app, n.command_line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A bad command line or configuration file: exit 2 like every other refusal at start.
    std::fprintf(stderr, "npacd: %s\n", e.what());
    return 2;
  }
  return std::nullopt;
}

// What can be refused before anything is created or changed: the endpoints, the API's
// transport and limits, the ports, the TLS files, --durability, the log target.
Refusal checkSettings(Npacd& n) {
  NpacdConfig& config = n.config;
  // Checked as they were parsed (command_line.h): these conversions cannot fail now.
  (void)parseDbTimeout(n.command_line.db_timeout, &config.db_timeout);
  Result<Endpoint> listen = parseEndpoint(n.command_line.listen);
  if (!listen.isOk()) return listen.status().message();
  Result<Endpoint> api = parseEndpoint(n.command_line.api);
  if (!api.isOk()) return api.status().message();
  config.listen_address = listen->host;
  config.listen_port = listen->port;
  config.api_address = api->host;
  config.api_port = api->port;
  if (Refusal refused = checkApiTransport(config); !refused.empty()) return refused;
  if (Refusal refused = checkApiLimits(config); !refused.empty()) return refused;
  if (std::string taken = portTaken(config.listen_address, config.listen_port); !taken.empty()) {
    return portRefusal("associations:", "--listen", config.listen_address, config.listen_port, taken,
                       "; nothing was created or changed");
  }
  if (std::string taken = portTaken(config.api_address, config.api_port); !taken.empty()) {
    return portRefusal("the admin API cannot start: admin API", "--api", config.api_address, config.api_port,
                       taken, "; nothing was created or changed");
  }
  if (!config.api_cert_file.empty()) {
    auto loaded = loadServerTlsContext(config.api_cert_file, config.api_key_file);
    if (!loaded.isOk()) return "the admin API's TLS: " + loaded.status().message();
    n.api_tls = std::move(loaded).value();
  }
  auto durability = db::parseDurability(n.command_line.durability);
  if (!durability) return "--durability must be full or normal, got '" + n.command_line.durability + "'";
  n.durability = *durability;
  n.command_line.log.level = config.log_level;
  if (Status logging = setUpLogging(n.command_line.log); !logging.isOk()) return logging.message();
  return {};
}

// The database's directory and the token file's, this node's name, and the instance lock:
// one npacd per database (db/instance_lock.h), taken before anything reads or changes the
// file, so a second npacd leaves the live one's messages in flight alone. Held until
// exit; the kernel releases it at any death. Then the startup check (--check-db).
Refusal lockDatabase(Npacd& n) {
  NpacdConfig& config = n.config;
  std::error_code fs_error;
  const auto parent = std::filesystem::path(config.db_path).parent_path();
  if (!parent.empty() && !db::isPostgresUrl(config.db_path)) std::filesystem::create_directories(parent, fs_error);
  n.token_file = tokenFilePath(config.db_path, config.token_file);
  const auto token_parent = std::filesystem::path(n.token_file).parent_path();
  if (!token_parent.empty()) std::filesystem::create_directories(token_parent, fs_error);
  if (config.node.empty()) config.node = defaultNodeName();
  auto lock = db::InstanceLock::acquire(config.db_path, n.time_source.wallMs(), config.node);
  if (!lock.isOk()) return lock.status().toString();
  n.instance_lock = std::move(lock).value();
  return checkDatabaseAtStart(config.db_path, *parseStartupCheck(n.command_line.check_db),
                                     n.time_source);
}

// One connection per user thread (db/database.h): core, API, registry; the QueueWriter
// opens its own. --durability governs what is accepted or decided: the QueueWriter's
// submissions (messages, answers to providers), the operator's changes, and on the core
// thread the binds (replay sequence numbers, the association log). The core's second
// connection records only delivery progress (sent, acknowledged, failed) and always
// commits with synchronous=NORMAL: in WAL mode that survives kill -9, and what a power
// loss can take back is the latest progress, never an accepted message — such a
// message is delivered again after the restart (docs/DATABASE.md "Durability").
Refusal openStorage(Npacd& n) {
  n.open_options.durability = n.durability;
  n.open_options.initialize_existing_blank = n.config.init_database;
  n.open_options.answer_timeout = n.config.db_timeout;
  // Types the rows an older schema queued (db/migrations.h, version 4).
  n.open_options.migration.classify_queued_pdu = classifyQueuedPdu;
  // SQLite: WAL checkpoints on a thread of their own (db/wal_checkpointer.h), never inside
  // a commit of the core thread or the queue writer. Opened first (its connection brings
  // the schema up to date) so that every connection below reports to it; destroyed last.
  if (!db::isPostgresUrl(n.config.db_path)) {
    auto opened = db::WalCheckpointer::open(n.config.db_path, n.open_options);
    if (!opened.isOk()) return "cannot open the database: " + opened.status().toString();
    n.checkpointer = std::move(opened).value();
    n.open_options.checkpointer = n.checkpointer.get();
    n.checkpointer->start();
  }
  n.progress_options = n.open_options;
  n.progress_options.durability = db::Durability::kNormal;
  const std::pair<const db::OpenOptions*, std::unique_ptr<db::Database>*> connections[] = {
      {&n.open_options, &n.core_db}, {&n.progress_options, &n.progress_db}, {&n.open_options, &n.api_db},
      {&n.open_options, &n.registry_db}};
  for (const auto& [options, connection] : connections) {
    if (Refusal refused = openConnection(n, *options, connection); !refused.empty()) return refused;
  }
  n.clock = db::clockOf(n.time_source);
  tunables::Status opened = tunables::TunableRegistry::open(*n.registry_db, n.clock, &n.registry);
  if (!opened.isOk()) return "cannot load the tunables: " + opened.toString();
  for (const std::string& ignored : n.registry->ignoredAtLoad()) spdlog::warn("tunables: {}", ignored);
  db::QueueWriter::Options writer_options;
  writer_options.node = n.config.node;
  auto writer = db::QueueWriter::start(n.config.db_path, n.open_options, n.clock, writer_options);
  if (!writer.isOk()) return "cannot start the queue writer: " + writer.status().toString();
  n.writer = std::move(writer).value();
  // Every accepting AARE is signed with an NPAC key (docs/OPERATIONS.md "NPAC keys").
  auto npac_key = ensureNpacKey(*n.core_db, n.clock(), n.registry->get(tunables::kKeyLifetime).count());
  if (!npac_key.isOk()) return "no NPAC signing key: " + npac_key.status().toString();
  return {};
}

namespace {

// An AssociationManager on `io` with its two connections, counting and node set.
std::unique_ptr<AssociationManager> makeManager(Npacd& n, boost::asio::io_context& io, db::Database& core_db,
                                                db::Database& progress_db, common::TimerFactory* timers) {
  auto manager =
      std::make_unique<AssociationManager>(io, core_db, progress_db, *n.writer, *n.registry, n.time_source, timers);
  manager->setCounting(n.command_line.metrics == "on");
  manager->setNode(n.config.node);
  return manager;
}

// --threads N: core threads 1..N-1, each with its own io_context, connections and
// AssociationManager; thread 0 (this one) keeps the listener (core/core_shards.h).
Refusal startExtraCores(Npacd& n) {
  if (n.config.core_threads <= 1) return {};
  std::vector<AssociationManager*> managers{n.manager.get()};
  for (std::size_t i = 1; i < n.config.core_threads; ++i) {
    auto extra = std::make_unique<ExtraCore>();
    if (Refusal refused = openConnection(n, n.open_options, &extra->db); !refused.empty()) return refused;
    if (Refusal refused = openConnection(n, n.progress_options, &extra->progress_db); !refused.empty()) return refused;
    extra->manager = makeManager(n, extra->io, *extra->db, *extra->progress_db, nullptr);
    extra->manager->setThrottleGroups(n.throttle_groups.get());
    managers.push_back(extra->manager.get());
    n.extra_cores.push_back(std::move(extra));
  }
  n.shards = std::make_unique<CoreShards>(std::move(managers), *n.writer, n.manager->lastAssociationId());
  for (auto& extra : n.extra_cores) extra->manager->startTimer();
  return {};
}

}  // namespace

// The core: the interrupted messages requeued, the egress throttle groups, the extra core
// threads, and the associations' listener.
Refusal startCore(Npacd& n) {
  n.manager = makeManager(n, n.core_io, *n.core_db, *n.progress_db, n.core_timer_factory);
  db::Status recovered = n.manager->recoverInterrupted();
  if (!recovered.isOk()) return "cannot requeue interrupted messages: " + recovered.toString();
  // Provisioned egress throttle groups (docs/OPERATIONS.md "Egress throttling"): read, and
  // counts exchanged with the other nodes, through the database on a thread of its own.
  n.throttle_groups = std::make_unique<ThrottleGroups>(n.time_source, n.config.node);
  std::unique_ptr<db::Database> exchange_db;
  if (Refusal refused = openConnection(n, n.open_options, &exchange_db); !refused.empty()) return refused;
  auto exchange = ThrottleExchange::start(std::move(exchange_db), *n.throttle_groups);
  if (!exchange.isOk()) return "cannot read the throttle groups: " + exchange.status().toString();
  n.exchange = std::move(exchange).value();
  n.manager->setThrottleGroups(n.throttle_groups.get());
  if (Refusal refused = startExtraCores(n); !refused.empty()) return refused;
  boost::system::error_code ec;
  auto listen_address = boost::asio::ip::make_address(n.config.listen_address, ec);
  if (ec) return "bad --listen address '" + n.config.listen_address + "'";
  if (Status listening = n.manager->listen({listen_address, n.config.listen_port}); !listening.isOk()) {
    const std::string port = std::to_string(n.config.listen_port);
    return "associations: " + listening.message() + " — choose another --listen host:port, or stop the process using it (ss -ltnp "
           "'sport = :" + port + "')";
  }
  return {};
}

// The admin API takes bearer tokens only; the first start writes an operator token to
// <db>.token or --token-file (npac/npacd/initial_token.h).
Refusal startApi(Npacd& n) {
  auto initial_token = ensureInitialToken(*n.api_db, n.token_file, n.clock());
  if (!initial_token.isOk()) return "cannot set up the admin API token: " + initial_token.status().toString();
  if (!initial_token->warning.empty()) spdlog::warn("admin API: {}", initial_token->warning);
  if (!initial_token->name.empty()) {
    spdlog::info("admin API: operator token '{}' is in {}{}", initial_token->name, initial_token->file,
                 initial_token->created ? " (created now, mode 0600)" : "");
  }
  AdminApi::Options api_options;
  api_options.http.address = n.config.api_address;
  api_options.http.port = n.config.api_port;
  api_options.http.tls = n.api_tls;
  api_options.http.max_connections = n.config.api_max_connections;
  api_options.http.operator_reserve = n.config.api_operator_reserve;
  api_options.http.max_per_client = n.config.api_max_per_client;
  api_options.http.max_per_credential = n.config.api_max_per_token;
  auto admin = AdminApi::start(n.api_io, api_options, *n.api_db, *n.registry, n.clock);
  if (!admin.isOk()) {
    // kCannotListen (or a bad address): the message is built from the flag's view.
    const std::string port = std::to_string(n.config.api_port);
    return "the admin API cannot start: " + admin.status().message() +
           " — choose another --api host:port, or stop the process using it (ss -ltnp 'sport = :" + port + "')";
  }
  n.admin = std::move(admin).value();
  if (n.shards) {
    n.admin->attachCore(n.shards.get());
  } else {
    n.admin->attachCore(&n.manager->service());
  }
  n.admin->attachQueueWriter(n.writer.get());
  n.admin->attachCheckpointer(n.checkpointer.get());
  n.admin->attachThrottleGroups(n.throttle_groups.get());
  return {};
}

// Two sites (node_notifications.h): a message submitted on another node, or an operator's
// change made there, reaches this node through PostgreSQL's NOTIFY.
Refusal listenToOtherNodes(Npacd& n) {
  if (n.core_db->backend() != db::Backend::kPostgres) return {};
  NodeNotifications::Actions actions;
  actions.wake_all = [&n] {
    if (n.shards) {
      for (std::size_t i = 0; i < n.shards->size(); ++i) n.shards->shard(i).inbox().postWakeAll();
    } else {
      n.manager->inbox().postWakeAll();
    }
  };
  actions.wake = [&n](const std::string& spid) { n.ownerOf(spid).inbox().postSubmittedElsewhere(spid); };
  actions.provider_changed = [&n](const std::string& spid) { n.ownerOf(spid).inbox().postProviderChanged(spid); };
  auto started = NodeNotifications::start(n.config.db_path, *n.registry, std::move(actions),
                                                 n.config.db_timeout, n.config.node);
  if (!started.isOk()) return "cannot listen for the other nodes' notifications: " + started.status().toString();
  n.notifications = std::move(started).value();
  return {};
}

Refusal start(Npacd& n) {
  for (Refusal (*phase)(Npacd&) :
       {checkSettings, lockDatabase, openStorage, startCore, startApi, listenToOtherNodes}) {
    if (Refusal refused = phase(n); !refused.empty()) return refused;
  }
  return {};
}

// Said once everything is in force: a test or a supervisor that waits for the first line
// finds the node listening to the others too.
void announce(const Npacd& n) {
  const NpacdConfig& config = n.config;
  spdlog::info("npacd listening for associations on {}:{}, admin API on {}:{}{}, database {} ({})",
               config.listen_address, n.manager->port(), config.api_address, n.admin->port(),
               n.api_tls ? " (HTTPS)" : "", n.core_db->path(), n.command_line.durability);  // a URL's password hidden
  if (n.shards) spdlog::info("core: {} threads, providers sharded over them by SPID", config.core_threads);
  if (n.core_db->backend() == db::Backend::kPostgres) {
    spdlog::info("node '{}': provider leases shared with the nodes on this database (provider_lease_timeout {} "
                 "ms, --db-timeout {} ms)",
                 config.node, n.registry->get(tunables::kProviderLeaseTimeout).count(), config.db_timeout.count());
  }
}

// SIGTERM and SIGINT: drain — every association released, the core's threads stopped.
// Caught from the moment this is called (asio holds a signal until the core runs): a test
// or script that stops npacd as soon as announce()'s line appears gets the graceful stop,
// not death by the signal.
void drainOnSignal(Npacd& n, boost::asio::signal_set& signals) {
  signals.async_wait([&n](boost::system::error_code signal_ec, int signal) {
    if (signal_ec) return;
    spdlog::info("signal {}: releasing associations and stopping", signal);
    drain(n);
  });
}

void drain(Npacd& n) {
  boost::asio::post(n.core_io, [&n] {
    SystemdNotifier::stopping("draining: releasing associations");
    if (n.shards) {
      n.shards->shutdown([&n] {
        for (auto& extra : n.extra_cores) extra->io.stop();
        n.core_io.stop();
      });
    } else {
      n.manager->shutdown([&n] { n.core_io.stop(); });
    }
  });
}

// Runs the core on this thread, the API and the extra cores on theirs, until the drain
// stops the core; then stops the rest in order. Both listeners accept and SIGTERM is
// handled before systemd hears READY: it may start what depends on npacd, and stop it at
// any moment from then on.
void serve(Npacd& n) {
  auto api_work = boost::asio::make_work_guard(n.api_io);
  std::promise<void> api_ran_out;
  std::future<void> api_finished = api_ran_out.get_future();
  std::thread api_thread([&] {
    n.api_io.run();
    api_ran_out.set_value();
  });
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> extra_work;
  for (auto& extra : n.extra_cores) {
    extra_work.push_back(boost::asio::make_work_guard(extra->io));
    extra->thread = std::thread([&io = extra->io] { io.run(); });
  }
  auto core_work = boost::asio::make_work_guard(n.core_io);
  SystemdNotifier notifier;
  SystemdNotifier::ready("associations on " + n.config.listen_address + ":" + std::to_string(n.manager->port()) +
                                ", admin API on " + n.config.api_address + ":" + std::to_string(n.admin->port()));
  notifier.startWatchdog(n.core_timers);
  n.core_io.run();
  notifier.stopWatchdog();
  if (n.notifications) n.notifications->stop();
  n.exchange->stop();  // this node's counts leave the other nodes' lists
  extra_work.clear();
  for (auto& extra : n.extra_cores) {
    extra->io.stop();
    extra->thread.join();
  }
  boost::asio::post(n.api_io, [&n] { n.admin->stop(); });
  api_work.reset();
  // The API's io_context runs out of work by itself once stop() has sent each event
  // stream's end event and closed the sessions; stopping it at once could cut those
  // writes off. Bounded: a client that does not read cannot hold npacd's exit.
  if (api_finished.wait_for(kApiDrainTimeout) != std::future_status::ready) n.api_io.stop();
  api_thread.join();
  n.writer->stop();
}

}  // namespace npac::npacd
