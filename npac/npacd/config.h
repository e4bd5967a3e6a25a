// NpacdConfig: npacd's command-line settings (CLI11 in main.cc) — database path, the
// association listener, the admin API endpoint, durability, log level and --init.
// Plain data; no threading concerns.
#pragma once

#include <cstdint>
#include <string>

namespace npac::npacd {

// The embedded default; the standard OSI transport port over RFC 1006 is 102.
inline constexpr std::uint16_t kDefaultAssociationPort = 10102;
inline constexpr std::uint16_t kStandardRfc1006Port = 102;

struct NpacdConfig {
  std::string db_path = "var/npacd.db";
  std::string listen_address = "127.0.0.1";
  std::uint16_t listen_port = kDefaultAssociationPort;
  std::string api_address = "127.0.0.1";
  std::uint16_t api_port = 10180;
  bool durability_full = true;
  std::string log_level = "info";
  // --init: an existing file that holds no database is initialised instead of refused.
  bool init_database = false;
};

// Splits "host:port" into its parts. False (and *error says why) on a malformed value.
bool parseEndpoint(const std::string& text, std::string* host, std::uint16_t* port,
                   std::string* error);

// True if `host` is a numeric loopback address (127.0.0.0/8 or ::1). The admin API has
// no authentication, so npacd serves it elsewhere only when told to (--api-allow-remote).
bool isLoopbackAddress(const std::string& host);

}  // namespace npac::npacd
