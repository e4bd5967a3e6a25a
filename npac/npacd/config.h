// NpacdConfig: npacd's command-line settings (declared in command_line.h) — database
// path, the association listener, the admin API endpoint, its TLS files and connection
// limits, durability, log level and --init — and the checks of their values: every
// number option's range (kNumberOptions), endpoints, durations, node names.
// Plain data and pure functions; no threading concerns.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace npac::npacd {

// The embedded default; the standard OSI transport port over RFC 1006 is 102.
inline constexpr std::uint16_t kDefaultAssociationPort = 10102;
inline constexpr std::uint16_t kStandardRfc1006Port = 102;

struct NpacdConfig {
  // An SQLite file, or a postgresql:// URL (db/database.h).
  std::string db_path = "var/npacd.db";
  // --token-file: where the first operator token goes (initial_token.h); empty: the default.
  std::string token_file;
  // --node: this npacd's name among the nodes sharing a PostgreSQL database (the owner
  // of its provider leases, db/lease_store.h); empty: the host name.
  std::string node;
  std::string listen_address = "127.0.0.1";
  std::uint16_t listen_port = kDefaultAssociationPort;
  std::string api_address = "127.0.0.1";
  std::uint16_t api_port = 10180;
  // --api-cert / --api-key: PEM files; both set, the admin API serves HTTPS only.
  std::string api_cert_file;
  std::string api_key_file;
  // The admin API's connection limits (docs/API.md "Connection limits";
  // HttpServer::Options has the same defaults).
  std::size_t api_max_connections = 256;
  std::size_t api_operator_reserve = 8;
  std::size_t api_max_per_client = 32;
  std::size_t api_max_per_token = 32;
  bool durability_full = true;
  std::string log_level = "info";
  // --init: an existing file that holds no database is initialised instead of refused.
  bool init_database = false;
  // --threads: core threads, providers sharded over them (core_shards.h), 1..64.
  std::size_t core_threads = 1;
  // --db-timeout: how long a PostgreSQL statement may go unanswered (db::OpenOptions).
  std::chrono::milliseconds db_timeout{5000};
};

// The values a number option accepts, both ends included.
struct IntegerRange {
  std::uint64_t min = 0;
  std::uint64_t max = 0;
};

// Every number option of npacd with its range (docs/OPERATIONS.md "Running npacd"). A
// number an operator types must never wrap into "no limit" (issue 24: -1 or
// 99999999999999999999999 once turned the connection limits off): each one is read as a
// decimal integer and refused outside its range. The upper ends are far above any real
// need and well inside what the consumer can hold; --threads ends at kMaxCoreThreads
// (core/core_shards.h; command_line.cc asserts that they agree).
struct NumberOption {
  std::string_view name;  // the long option without "--"; also its configuration key
  IntegerRange range;
};
inline constexpr std::uint64_t kMaxApiConnections = 65536;  // the unit's LimitNOFILE
inline constexpr NumberOption kNumberOptions[] = {
    {"api-max-connections", {1, kMaxApiConnections}},
    {"api-operator-reserve", {0, kMaxApiConnections - 1}},  // and below --api-max-connections
    {"api-max-per-client", {1, kMaxApiConnections}},
    {"api-max-per-token", {1, kMaxApiConnections}},
    {"threads", {1, 64}},
    {"log-max-size", {1024, std::uint64_t{1} << 40}},  // 1 KiB .. 1 TiB per file
    {"log-max-files", {0, 1000}},                      // 0: the file is emptied when full
};
// The range of number option `name` (without "--"), or nullopt when it is no number option.
constexpr std::optional<IntegerRange> numberRangeOf(std::string_view name) {
  for (const NumberOption& option : kNumberOptions) {
    if (option.name == name) return option.range;
  }
  return std::nullopt;
}

// Why `text` is not a decimal integer within `range` ("" when it is: *value set). Only
// the digits 0-9: no sign, blank, underscore or base prefix (CLI11 alone reads "-1" as
// 18446744073709551615 and "010" as 8). The reason reads after the option's name:
// "must be an integer from 1 to 64, got '-1'".
std::string parseInteger(std::string_view text, IntegerRange range, std::uint64_t* value);

// --db-timeout's range: long enough for a loaded server's commit, short enough that a
// server that stopped answering is noticed while associations and the API still wait.
inline constexpr std::chrono::milliseconds kMinDbTimeout{100};
inline constexpr std::chrono::milliseconds kMaxDbTimeout{600000};
// Why `text` is not a --db-timeout ("" when it is: *value set), e.g. "-1", "5", "20m".
// The reason reads after the option's name: "must be a duration from 100ms to 10m …".
std::string parseDbTimeout(const std::string& text, std::chrono::milliseconds* value);

// "host:port" split into its parts.
struct Endpoint {
  std::string host;
  std::uint16_t port = 0;
};
// The parts of "host:port"; kBadOption saying why on a malformed value.
Result<Endpoint> parseEndpoint(const std::string& text);
// Why `text` cannot be --listen or --api ("" when it can): not host:port, a port outside
// 0..65535, or a host that is not a numeric IP address (the listeners take no names).
std::string checkEndpoint(const std::string& text);

// Why `path` cannot be --db ("" when it can): empty (it would name the current directory's
// ".lock" and a database without a name).
std::string checkDbPath(const std::string& path);

// True if `host` is a numeric loopback address (127.0.0.0/8 or ::1). Bearer tokens cross
// the network in the clear over plain HTTP, so npacd serves the admin API elsewhere only
// over TLS (checkApiTransport).
bool isLoopbackAddress(const std::string& host);

// Why the admin API settings in `config` cannot start ("" when they can): one of
// --api-cert / --api-key without the other, or a non-loopback address without TLS.
std::string checkApiTransport(const NpacdConfig& config);

// Why `node` cannot name an npacd node ("" when it can): 1..64 characters of A-Z a-z 0-9
// and . _ : - (it is logged, stored as a lease's owner and quoted to refused providers).
std::string checkNodeName(const std::string& node);
// The host name (gethostname), or "npacd" when there is none usable.
std::string defaultNodeName();

// Why the admin API's connection limits in `config` cannot work together ("" when they
// can): an operator reserve that leaves no connection for anyone else. (Each limit's own
// range is kNumberOptions', checked as the option is parsed.)
std::string checkApiLimits(const NpacdConfig& config);

}  // namespace npac::npacd
