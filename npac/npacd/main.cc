// npacd — the NPAC SMS association manager: accepts providers' associations (RFC 1006 /
// OSI upper layers, NPAC bind), delivers the durable outbound queue through each
// provider's logical association, and serves the admin HTTP/JSON API.
//
// Threads: the core io_context (network + AssociationManager) — with --threads N, N of
// them, providers sharded over them (core/core_shards.h) — the admin API's io_context,
// the QueueWriter's writer thread. SIGTERM/SIGINT: graceful shutdown.
// Settings come from the command line and, under it, from --config FILE (command_line.h);
// under systemd npacd tells the manager when it is ready, when it stops, and pings its
// watchdog from the core thread (systemd_notify.h).
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>

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

namespace {

using namespace npac;

// At stop: how long the admin API may take to finish its last writes (kApiDrainTimeout).
constexpr std::chrono::seconds kApiDrainTimeout{2};

std::unique_ptr<db::Database> openOrExit(const std::string& path, const db::OpenOptions& options) {
  auto opened = db::Database::open(path, options);
  if (!opened.isOk()) {
    std::fprintf(stderr, "npacd: cannot open the database: %s\n", opened.status().toString().c_str());
    std::exit(2);
  }
  return std::move(opened).value();
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

}  // namespace

int main(int argc, char** argv) {
  // A server keeps running when whoever read its standard output went away (`npacd |
  // head`, a closed terminal, `make run | tee` ended): a write there fails with EPIPE,
  // which the log sinks ignore, instead of killing npacd before it releases its
  // associations. Sockets are written with MSG_NOSIGNAL or their errors anyway.
  std::signal(SIGPIPE, SIG_IGN);
  npacd::NpacdCommandLine command_line;
  npacd::NpacdConfig& config = command_line.config;
  npacd::LogOptions& log_options = command_line.log;
  const std::string& listen = command_line.listen;
  const std::string& api = command_line.api;
  const std::string& durability = command_line.durability;
  CLI::App app{"npacd: NPAC SMS association manager"};
  app.set_version_flag("--version", npac::versionLine("npacd"));
  // Every option, its range or check, and --config under them (command_line.h).
  npacd::declareNpacdOptions(app, command_line);
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

  // Checked as they were parsed (command_line.h): these conversions cannot fail now.
  (void)npacd::parseDbTimeout(command_line.db_timeout, &config.db_timeout);
  std::string error;
  if (!npacd::parseEndpoint(listen, &config.listen_address, &config.listen_port, &error) ||
      !npacd::parseEndpoint(api, &config.api_address, &config.api_port, &error)) {
    std::fprintf(stderr, "npacd: %s\n", error.c_str());
    return 2;
  }
  if (std::string refused = npacd::checkApiTransport(config); !refused.empty()) {
    std::fprintf(stderr, "npacd: %s\n", refused.c_str());
    return 2;
  }
  if (std::string refused = npacd::checkApiLimits(config); !refused.empty()) {
    std::fprintf(stderr, "npacd: %s\n", refused.c_str());
    return 2;
  }
  if (std::string taken = portTaken(config.listen_address, config.listen_port); !taken.empty()) {
    std::fprintf(stderr,
                 "npacd: associations: cannot listen on %s:%u: %s — choose another --listen host:port, or "
                 "stop the process using it (ss -ltnp 'sport = :%u'); nothing was created or changed\n",
                 config.listen_address.c_str(), static_cast<unsigned>(config.listen_port), taken.c_str(),
                 static_cast<unsigned>(config.listen_port));
    return 2;
  }
  if (std::string taken = portTaken(config.api_address, config.api_port); !taken.empty()) {
    std::fprintf(stderr,
                 "npacd: the admin API cannot start: admin API cannot listen on %s:%u: %s — choose another "
                 "--api host:port, or stop the process using it (ss -ltnp 'sport = :%u'); nothing was created "
                 "or changed\n",
                 config.api_address.c_str(), static_cast<unsigned>(config.api_port), taken.c_str(),
                 static_cast<unsigned>(config.api_port));
    return 2;
  }
  std::shared_ptr<boost::asio::ssl::context> api_tls;
  if (!config.api_cert_file.empty()) {
    auto loaded = npacd::loadServerTlsContext(config.api_cert_file, config.api_key_file);
    if (!loaded.isOk()) {
      std::fprintf(stderr, "npacd: the admin API's TLS: %s\n", loaded.status().message().c_str());
      return 2;
    }
    api_tls = std::move(loaded).value();
  }
  auto parsed_durability = db::parseDurability(durability);
  if (!parsed_durability) {
    std::fprintf(stderr, "npacd: --durability must be full or normal, got '%s'\n", durability.c_str());
    return 2;
  }
  log_options.level = config.log_level;
  if (!npacd::setUpLogging(log_options, &error)) {
    std::fprintf(stderr, "npacd: %s\n", error.c_str());
    return 2;
  }

  std::error_code fs_error;
  const auto parent = std::filesystem::path(config.db_path).parent_path();
  if (!parent.empty() && !db::isPostgresUrl(config.db_path)) std::filesystem::create_directories(parent, fs_error);
  const std::string token_file = npacd::tokenFilePath(config.db_path, config.token_file);
  const auto token_parent = std::filesystem::path(token_file).parent_path();
  if (!token_parent.empty()) std::filesystem::create_directories(token_parent, fs_error);
  // One npacd per database (db/instance_lock.h): taken before anything reads or changes
  // the file, so a second npacd leaves the live one's messages in flight alone. Held
  // until exit; the kernel releases it at any death.
  if (config.node.empty()) config.node = npacd::defaultNodeName();
  // Every component reads time from this one source (common/time_source.h).
  const common::TimeSource& time_source = common::realTimeSource();
  auto instance_lock = db::InstanceLock::acquire(config.db_path, time_source.wallMs(), config.node);
  if (!instance_lock.isOk()) {
    std::fprintf(stderr, "npacd: %s\n", instance_lock.status().toString().c_str());
    return 2;
  }
  if (std::string damaged = npacd::checkDatabaseAtStart(config.db_path, *npacd::parseStartupCheck(command_line.check_db),
                                                              time_source);
      !damaged.empty()) {
    std::fprintf(stderr, "npacd: %s\n", damaged.c_str());
    return 2;
  }
  db::OpenOptions open_options;
  open_options.durability = *parsed_durability;
  open_options.initialize_existing_blank = config.init_database;
  open_options.answer_timeout = config.db_timeout;
  // Types the rows an older schema queued (db/migrations.h, version 4).
  open_options.migration.classify_queued_pdu = npacd::classifyQueuedPdu;
  // SQLite: WAL checkpoints on a thread of their own (db/wal_checkpointer.h), never inside
  // a commit of the core thread or the queue writer. Opened first (its connection brings
  // the schema up to date) so that every connection below reports to it; destroyed last.
  std::unique_ptr<db::WalCheckpointer> checkpointer;
  if (!db::isPostgresUrl(config.db_path)) {
    auto opened = db::WalCheckpointer::open(config.db_path, open_options);
    if (!opened.isOk()) {
      std::fprintf(stderr, "npacd: cannot open the database: %s\n", opened.status().toString().c_str());
      return 2;
    }
    checkpointer = std::move(opened).value();
    open_options.checkpointer = checkpointer.get();
    checkpointer->start();
  }
  // One connection per user thread (db/database.h): core, API, registry; the QueueWriter
  // opens its own. --durability governs what is accepted or decided: the QueueWriter's
  // submissions (messages, answers to providers), the operator's changes, and on the core
  // thread the binds (replay sequence numbers, the association log). The core's second
  // connection records only delivery progress (sent, acknowledged, failed) and always
  // commits with synchronous=NORMAL: in WAL mode that survives kill -9, and what a power
  // loss can take back is the latest progress, never an accepted message — such a
  // message is delivered again after the restart (docs/DATABASE.md "Durability").
  auto core_db = openOrExit(config.db_path, open_options);
  db::OpenOptions progress_options = open_options;
  progress_options.durability = db::Durability::kNormal;
  auto progress_db = openOrExit(config.db_path, progress_options);
  auto api_db = openOrExit(config.db_path, open_options);
  auto registry_db = openOrExit(config.db_path, open_options);
  db::Clock clock = db::clockOf(time_source);

  std::unique_ptr<tunables::TunableRegistry> registry;
  tunables::Status opened = tunables::TunableRegistry::open(*registry_db, clock, &registry);
  if (!opened.isOk()) {
    std::fprintf(stderr, "npacd: cannot load the tunables: %s\n", opened.toString().c_str());
    return 2;
  }
  for (const std::string& ignored : registry->ignoredAtLoad()) spdlog::warn("tunables: {}", ignored);

  db::QueueWriter::Options writer_options;
  writer_options.node = config.node;
  auto writer = db::QueueWriter::start(config.db_path, open_options, clock, writer_options);
  if (!writer.isOk()) {
    std::fprintf(stderr, "npacd: cannot start the queue writer: %s\n", writer.status().toString().c_str());
    return 2;
  }

  // Every accepting AARE is signed with an NPAC key (docs/OPERATIONS.md "NPAC keys").
  auto npac_key = npacd::ensureNpacKey(*core_db, clock(), registry->get(tunables::kKeyLifetime).count());
  if (!npac_key.isOk()) {
    std::fprintf(stderr, "npacd: no NPAC signing key: %s\n", npac_key.status().toString().c_str());
    return 2;
  }

  boost::asio::io_context core_io;
  boost::asio::io_context api_io;
  auto manager = std::make_unique<npacd::AssociationManager>(core_io, *core_db, *progress_db, **writer, *registry, time_source);
  manager->setCounting(command_line.metrics == "on");
  manager->setNode(config.node);
  db::Status recovered = manager->recoverInterrupted();
  if (!recovered.isOk()) {
    std::fprintf(stderr, "npacd: cannot requeue interrupted messages: %s\n", recovered.toString().c_str());
    return 2;
  }
  // Provisioned egress throttle groups (docs/OPERATIONS.md "Egress throttling"): read, and
  // counts exchanged with the other nodes, through the database on a thread of its own.
  npacd::ThrottleGroups throttle_groups(time_source, config.node);
  auto exchange = npacd::ThrottleExchange::start(openOrExit(config.db_path, open_options), throttle_groups);
  if (!exchange.isOk()) {
    std::fprintf(stderr, "npacd: cannot read the throttle groups: %s\n", exchange.status().toString().c_str());
    return 2;
  }
  manager->setThrottleGroups(&throttle_groups);
  // --threads N: core threads 1..N-1, each with its own io_context, connections and
  // AssociationManager; thread 0 (this one) keeps the listener (core/core_shards.h).
  struct ExtraCore {
    boost::asio::io_context io;
    std::unique_ptr<db::Database> db, progress_db;
    std::unique_ptr<npacd::AssociationManager> manager;
    std::thread thread;
  };
  std::vector<std::unique_ptr<ExtraCore>> extra_cores;
  std::unique_ptr<npacd::CoreShards> shards;
  if (config.core_threads > 1) {
    std::vector<npacd::AssociationManager*> managers{manager.get()};
    for (std::size_t i = 1; i < config.core_threads; ++i) {
      auto extra = std::make_unique<ExtraCore>();
      extra->db = openOrExit(config.db_path, open_options);
      extra->progress_db = openOrExit(config.db_path, progress_options);
      extra->manager = std::make_unique<npacd::AssociationManager>(extra->io, *extra->db, *extra->progress_db,
                                                                   **writer, *registry, time_source);
      extra->manager->setCounting(command_line.metrics == "on");
      extra->manager->setNode(config.node);
      extra->manager->setThrottleGroups(&throttle_groups);
      managers.push_back(extra->manager.get());
      extra_cores.push_back(std::move(extra));
    }
    shards = std::make_unique<npacd::CoreShards>(std::move(managers), **writer, manager->lastAssociationId());
    for (auto& extra : extra_cores) extra->manager->startTimer();
  }
  boost::system::error_code ec;
  auto listen_address = boost::asio::ip::make_address(config.listen_address, ec);
  if (ec) {
    std::fprintf(stderr, "npacd: bad --listen address '%s'\n", config.listen_address.c_str());
    return 2;
  }
  if (!manager->listen({listen_address, config.listen_port}, &error)) {
    std::fprintf(stderr,
                 "npacd: associations: %s — choose another --listen host:port, or stop the "
                 "process using it (ss -ltnp 'sport = :%u')\n",
                 error.c_str(), static_cast<unsigned>(config.listen_port));
    return 2;
  }

  // The admin API takes bearer tokens only; the first start writes an operator token
  // to <db>.token or --token-file (npac/npacd/initial_token.h).
  auto initial_token = npacd::ensureInitialToken(*api_db, token_file, clock());
  if (!initial_token.isOk()) {
    std::fprintf(stderr, "npacd: cannot set up the admin API token: %s\n", initial_token.status().toString().c_str());
    return 2;
  }
  if (!initial_token->warning.empty()) spdlog::warn("admin API: {}", initial_token->warning);
  if (!initial_token->name.empty()) {
    spdlog::info("admin API: operator token '{}' is in {}{}", initial_token->name, initial_token->file,
                 initial_token->created ? " (created now, mode 0600)" : "");
  }
  npacd::AdminApi::Options api_options;
  api_options.http.address = config.api_address;
  api_options.http.port = config.api_port;
  api_options.http.tls = api_tls;
  api_options.http.max_connections = config.api_max_connections;
  api_options.http.operator_reserve = config.api_operator_reserve;
  api_options.http.max_per_client = config.api_max_per_client;
  api_options.http.max_per_credential = config.api_max_per_token;
  auto admin = npacd::AdminApi::start(api_io, api_options, *api_db, *registry, clock);
  if (!admin.isOk()) {
    // Not a database error: the Status only carries the listener's reason (its category
    // would read "cannot open database"), so the message is built from the flag's view.
    std::fprintf(stderr,
                 "npacd: the admin API cannot start: %s — choose another --api host:port, or "
                 "stop the process using it (ss -ltnp 'sport = :%u')\n",
                 admin.status().message().c_str(), static_cast<unsigned>(config.api_port));
    return 2;
  }
  if (shards) {
    (*admin)->attachCore(shards.get());
  } else {
    (*admin)->attachCore(manager.get());
  }
  (*admin)->attachQueueWriter(writer.value().get());
  (*admin)->attachCheckpointer(checkpointer.get());
  (*admin)->attachThrottleGroups(&throttle_groups);

  // Two sites (node_notifications.h): a message submitted on another node, or an
  // operator's change made there, reaches this node through PostgreSQL's NOTIFY.
  std::unique_ptr<npacd::NodeNotifications> notifications;
  if (core_db->backend() == db::Backend::kPostgres) {
    auto ownerOf = [&manager, &shards](const std::string& spid) -> npacd::AssociationManager& {
      return shards ? shards->shard(shards->shardOf(spid)) : *manager;
    };
    npacd::NodeNotifications::Actions actions;
    actions.wake_all = [&manager, &shards] {
      if (shards) {
        for (std::size_t i = 0; i < shards->size(); ++i) shards->shard(i).postWakeAll();
      } else {
        manager->postWakeAll();
      }
    };
    actions.wake = [ownerOf](const std::string& spid) { ownerOf(spid).postSubmittedElsewhere(spid); };
    actions.provider_changed = [ownerOf](const std::string& spid) { ownerOf(spid).postProviderChanged(spid); };
    auto started =
        npacd::NodeNotifications::start(config.db_path, *registry, std::move(actions), config.db_timeout, config.node);
    if (!started.isOk()) {
      std::fprintf(stderr, "npacd: cannot listen for the other nodes' notifications: %s\n",
                   started.status().toString().c_str());
      return 2;
    }
    notifications = std::move(started).value();
  }

  // SIGTERM is caught from here on (asio holds it until the core runs): a test or script
  // that stops npacd as soon as the line below appears gets the graceful stop, not death
  // by the signal.
  boost::asio::signal_set signals(core_io, SIGTERM, SIGINT);
  signals.async_wait([&](boost::system::error_code signal_ec, int signal) {
    if (signal_ec) return;
    spdlog::info("signal {}: releasing associations and stopping", signal);
    npacd::SystemdNotifier::stopping("draining: releasing associations");
    if (shards) {
      shards->shutdown([&] {
        for (auto& extra : extra_cores) extra->io.stop();
        core_io.stop();
      });
    } else {
      manager->shutdown([&] { core_io.stop(); });
    }
  });
  // Said once everything above is in force: a test or a supervisor that waits for this
  // line finds the node listening to the others too.
  spdlog::info("npacd listening for associations on {}:{}, admin API on {}:{}{}, database {} ({})",
               config.listen_address, manager->port(), config.api_address, (*admin)->port(),
               api_tls ? " (HTTPS)" : "", core_db->path(), durability);  // a URL's password hidden
  if (shards) spdlog::info("core: {} threads, providers sharded over them by SPID", config.core_threads);
  if (core_db->backend() == db::Backend::kPostgres) {
    spdlog::info("node '{}': provider leases shared with the nodes on this database (provider_lease_timeout {} "
                 "ms, --db-timeout {} ms)",
                 config.node, registry->get(tunables::kProviderLeaseTimeout).count(), config.db_timeout.count());
  }

  auto api_work = boost::asio::make_work_guard(api_io);
  std::promise<void> api_ran_out;
  std::future<void> api_finished = api_ran_out.get_future();
  std::thread api_thread([&] {
    api_io.run();
    api_ran_out.set_value();
  });

  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> extra_work;
  for (auto& extra : extra_cores) {
    extra_work.push_back(boost::asio::make_work_guard(extra->io));
    extra->thread = std::thread([&io = extra->io] { io.run(); });
  }
  auto core_work = boost::asio::make_work_guard(core_io);
  // Both listeners accept and SIGTERM is handled now: systemd may start what depends on
  // npacd, and stop it at any moment from here on (a SIGTERM before the handler would kill
  // npacd without its drain).
  npacd::SystemdNotifier notifier;
  npacd::SystemdNotifier::ready("associations on " + config.listen_address + ":" +
                                std::to_string(manager->port()) + ", admin API on " + config.api_address +
                                ":" + std::to_string((*admin)->port()));
  notifier.startWatchdog(core_io);
  core_io.run();
  notifier.stopWatchdog();
  if (notifications) notifications->stop();
  (*exchange)->stop();  // this node's counts leave the other nodes' lists
  extra_work.clear();
  for (auto& extra : extra_cores) {
    extra->io.stop();
    extra->thread.join();
  }

  boost::asio::post(api_io, [&] { (*admin)->stop(); });
  api_work.reset();
  // The API's io_context runs out of work by itself once stop() has sent each event
  // stream's end event and closed the sessions; stopping it at once could cut those
  // writes off. Bounded: a client that does not read cannot hold npacd's exit.
  if (api_finished.wait_for(kApiDrainTimeout) != std::future_status::ready) api_io.stop();
  api_thread.join();
  (*writer)->stop();
  spdlog::info("npacd stopped");
  return 0;
}
