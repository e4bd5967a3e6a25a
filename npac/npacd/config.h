// NpacdConfig: npacd's command-line settings (CLI11 in main.cc) — database path, the
// association listener, the admin API endpoint, its TLS files and connection limits,
// durability, log level and --init.
// Plain data; no threading concerns.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

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

// --db-timeout's range: long enough for a loaded server's commit, short enough that a
// server that stopped answering is noticed while associations and the API still wait.
inline constexpr std::chrono::milliseconds kMinDbTimeout{100};
inline constexpr std::chrono::milliseconds kMaxDbTimeout{600000};
// Why `text` is not a --db-timeout ("" when it is: *value set), e.g. "-1", "5", "20m".
std::string parseDbTimeout(const std::string& text, std::chrono::milliseconds* value);

// Splits "host:port" into its parts. False (and *error says why) on a malformed value.
bool parseEndpoint(const std::string& text, std::string* host, std::uint16_t* port,
                   std::string* error);

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

// Why the admin API's connection limits in `config` cannot work ("" when they can): a
// limit of 0, or an operator reserve that leaves no connection for anyone else.
std::string checkApiLimits(const NpacdConfig& config);

}  // namespace npac::npacd
