#include "npac/npacd/command_line.h"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/duration.h"
#include "npac/npacd/config_file.h"
#include "npac/npacd/core/core_shards.h"

namespace npac::npacd {

static_assert(numberRangeOf("threads")->min == 1 && numberRangeOf("threads")->max == kMaxCoreThreads,
              "--threads' range is the core's");

namespace {

// "a, b or c": the choices of a message.
std::string choices(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

// A check that the value is one of `names`: "must be full or normal, got 'fast'".
CLI::Validator oneOf(std::vector<std::string> names) {
  std::string description = "{";
  for (const std::string& name : names) description += (description.size() > 1 ? "," : "") + name;
  description += "}";
  return CLI::Validator(
      [names](std::string& value) {
        for (const std::string& name : names) {
          if (value == name) return std::string();
        }
        return "must be " + choices(names) + ", got '" + value + "'";
      },
      description, "one of");
}

// A check that keeps nothing: `check` answers why a value is refused, or "".
CLI::Validator checkedBy(std::string (*check)(const std::string&), std::string description = "") {
  return CLI::Validator([check](std::string& value) { return check(value); }, std::move(description), "check");
}

// Declares number option --`name` with its range from kNumberOptions.
CLI::Option* addNumber(CLI::App& app, std::string_view name, std::size_t& value, const std::string& help) {
  const std::optional<IntegerRange> range = numberRangeOf(name);
  if (!range) throw std::logic_error("npacd: --" + std::string(name) + " is missing from kNumberOptions");
  return app.add_option("--" + std::string(name), value, help)->transform(integerIn(*range))->capture_default_str();
}

}  // namespace

CLI::Validator integerIn(IntegerRange range) {
  return CLI::Validator(
      [range](std::string& value) {
        std::uint64_t parsed = 0;
        std::string why = parseInteger(value, range, &parsed);
        if (why.empty()) value = std::to_string(parsed);
        return why;
      },
      std::to_string(range.min) + ".." + std::to_string(range.max), "integer range");
}

namespace {

// --db, --token-file, --node, --init: where the database is and who this node is.
void declareDatabaseOptions(CLI::App& app, NpacdConfig& config) {
  app.add_option("--db", config.db_path,
                 "SQLite database file (created where no file exists; see --init), or a PostgreSQL "
                 "database as postgresql://user[:password]@host[:port]/dbname")
      ->check(checkedBy(checkDbPath))
      ->capture_default_str();
  app.add_option("--token-file", config.token_file,
                 "where the first operator token is written (default: <db>.token; with a postgresql:// "
                 "--db: var/npacd.db.token)");
  app.add_option("--node", config.node,
                 "this node's name among the npacd nodes sharing one PostgreSQL --db: the owner its "
                 "provider leases name, and what a refused bind tells the provider (default: the host "
                 "name; docs/OPERATIONS.md \"Two sites\")")
      ->check(checkedBy([](const std::string& value) {
        return value.empty() ? std::string() : checkNodeName(value);  // "": the host name
      }));
  app.add_flag("--init", config.init_database,
               "initialise a new, empty database in the --db file when it exists but holds no "
               "database (0 bytes, or SQLite without tables); without --init npacd refuses such "
               "a file, which usually means the database was lost. A file holding other data is "
               "refused either way");
}

// --listen, --api and its TLS and connection limits, --threads.
void declareNetworkOptions(CLI::App& app, NpacdCommandLine& line) {
  NpacdConfig& config = line.config;
  app.add_option("--listen", line.listen, "associations: host:port (the standard RFC 1006 port is 102)")
      ->check(checkedBy(checkEndpoint))
      ->capture_default_str();
  app.add_option("--api", line.api,
                 "admin HTTP/JSON API: host:port (a non-loopback address needs --api-cert and --api-key)")
      ->check(checkedBy(checkEndpoint))
      ->capture_default_str();
  app.add_option("--api-cert", config.api_cert_file,
                 "PEM certificate chain (leaf first): the admin API serves HTTPS only (TLS 1.2+); needs --api-key");
  app.add_option("--api-key", config.api_key_file, "PEM private key of --api-cert (unencrypted)");
  addNumber(app, "api-max-connections", config.api_max_connections,
            "admin API connections with a token at once (the longest-idle non-operator one is closed to make room)");
  addNumber(app, "api-operator-reserve", config.api_operator_reserve,
            "of --api-max-connections, the places kept for operator tokens: readers and applications together "
            "hold at most the total less this (below --api-max-connections)");
  addNumber(app, "api-max-per-client", config.api_max_per_client, "admin API connections from one client IP address");
  addNumber(app, "api-max-per-token", config.api_max_per_token,
            "admin API connections whose requests carry one token");
  addNumber(app, "threads", config.core_threads,
            "core threads: providers are sharded over them, each provider's associations on one "
            "(docs/OPERATIONS.md \"Threads\")");
}

// --durability, --db-timeout, --check-db, --metrics: how the database and the core behave.
void declareStorageOptions(CLI::App& app, NpacdCommandLine& line) {
  app.add_option("--durability", line.durability, "full (fsync every commit) or normal")
      ->check(oneOf({"full", "normal"}))
      ->capture_default_str();
  app.add_option("--db-timeout", line.db_timeout,
                 "PostgreSQL: how long npacd waits for the server to answer one statement or connection "
                 "attempt; past it the server counts as not answering and every database operation is "
                 "refused at once until it answers again (docs/DATABASE.md \"When PostgreSQL does not answer\")")
      ->type_name("DURATION")
      ->check(checkedBy(
          [](const std::string& value) {
            std::chrono::milliseconds ignored{};
            return parseDbTimeout(value, &ignored);
          },
          common::formatDuration(kMinDbTimeout) + ".." + common::formatDuration(kMaxDbTimeout)))
      ->capture_default_str();
  app.add_option("--check-db", line.check_db,
                 "SQLite: check the database file at start and refuse a damaged one: auto (PRAGMA quick_check "
                 "on files up to 1 GiB), quick, full (integrity_check) or off (docs/DATABASE.md \"Checking the "
                 "file at start\")")
      ->check(oneOf({"auto", "quick", "full", "off"}))
      ->capture_default_str();
  app.add_option("--metrics", line.metrics,
                 "on, or off: the core counts nothing for GET /metrics (to measure the cost of counting)")
      ->check(oneOf({"on", "off"}))
      ->capture_default_str();
}

// --log-level, --log-format, --log-target, --log-file and its rotation.
void declareLoggingOptions(CLI::App& app, NpacdCommandLine& line) {
  NpacdConfig& config = line.config;
  app.add_option("--log-level", config.log_level,
                 "trace, debug, info, warn, error, critical, off (changeable at run time: PUT /v1/log-level)")
      ->check(checkedBy([](const std::string& value) {
        return parseLogLevel(value) ? std::string()
                                    : "must be one of " + std::string(logLevelNames()) + ", got '" + value + "'";
      }))
      ->capture_default_str();
  app.add_option("--log-format", line.log.format, "text, or json (one JSON object per line)")
      ->check(oneOf({"text", "json"}))
      ->capture_default_str();
  app.add_option("--log-target", line.log.target, "stdout, or journal (the systemd journal, with each line's priority)")
      ->check(oneOf({"stdout", "journal"}))
      ->capture_default_str();
  app.add_option("--log-file", line.log.file,
                 "write the log to this file, rotated by size, instead of stdout (created mode 0600)");
  addNumber(app, "log-max-size", line.log.max_size, "bytes a --log-file grows to before it rotates");
  addNumber(app, "log-max-files", line.log.max_files,
            "rotated --log-file files kept (FILE.1 ... FILE.N; 0: the file is emptied when full)");
}

}  // namespace

void declareNpacdOptions(CLI::App& app, NpacdCommandLine& line) {
  declareDatabaseOptions(app, line.config);
  declareNetworkOptions(app, line);
  declareStorageOptions(app, line);
  declareLoggingOptions(app, line);
  // Every option above may be set in the file too (name = value, TOML); the command line
  // wins. The file's type and size are checked as --config is parsed, before CLI11 opens
  // it; then it is read line by line (config_file.h).
  CLI::Option* config_option = app.set_config(
      "--config", "", "read settings from this TOML file (packaging/npacd.toml lists them; a regular file of at most 1 MiB)");
  config_option->type_name("FILE")->check(checkedBy(checkConfigFile))->trigger_on_parse();
  app.config_formatter(std::make_shared<CheckedTomlConfig>(app, config_option));
}

}  // namespace npac::npacd
