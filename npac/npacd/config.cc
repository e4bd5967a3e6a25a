#include "npac/npacd/config.h"

#include <charconv>

#include <unistd.h>

#include <boost/asio/ip/address.hpp>

#include "common/duration.h"

namespace npac::npacd {

bool parseEndpoint(const std::string& text, std::string* host, std::uint16_t* port,
                   std::string* error) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    *error = "expected host:port, got '" + text + "'";
    return false;
  }
  unsigned value = 0;
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last || value > 65535) {
    *error = "bad port in '" + text + "'";
    return false;
  }
  *host = text.substr(0, colon);
  *port = static_cast<std::uint16_t>(value);
  return true;
}

bool isLoopbackAddress(const std::string& host) {
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

std::string checkApiTransport(const NpacdConfig& config) {
  const bool cert = !config.api_cert_file.empty(), key = !config.api_key_file.empty();
  if (cert != key) {
    return cert ? "--api-cert needs --api-key (the certificate's private key, PEM)"
                : "--api-key needs --api-cert (the certificate, PEM)";
  }
  if (!cert && !isLoopbackAddress(config.api_address)) {
    return "--api " + config.api_address + ":" + std::to_string(config.api_port) +
           " is not a loopback address (127.0.0.0/8, ::1): the admin API's bearer tokens would "
           "cross the network in the clear; give --api-cert and --api-key to serve it over TLS, or "
           "use a loopback address";
  }
  return "";
}

std::string checkApiLimits(const NpacdConfig& config) {
  const struct {
    const char* option;
    std::size_t value;
  } limits[] = {{"--api-max-connections", config.api_max_connections},
                {"--api-max-per-client", config.api_max_per_client},
                {"--api-max-per-token", config.api_max_per_token}};
  for (const auto& limit : limits) {
    if (limit.value == 0) return std::string(limit.option) + " must be at least 1";
  }
  if (config.api_operator_reserve >= config.api_max_connections) {
    return "--api-operator-reserve " + std::to_string(config.api_operator_reserve) +
           " must be below --api-max-connections " + std::to_string(config.api_max_connections) +
           ": the reserve would leave no connection for the NPAC application and readers";
  }
  return "";
}

std::string checkNodeName(const std::string& node) {
  if (node.empty() || node.size() > 64) return "a node name has 1 to 64 characters, not " + std::to_string(node.size());
  for (char ch : node) {
    const bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                    ch == '.' || ch == '_' || ch == ':' || ch == '-';
    if (!ok) return "a node name holds only A-Z a-z 0-9 . _ : - (not '" + std::string(1, ch) + "')";
  }
  return "";
}

std::string defaultNodeName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "npacd";
  std::string host(name);
  if (host.size() > 64) host.resize(64);
  return checkNodeName(host).empty() ? host : "npacd";
}

std::string parseDbTimeout(const std::string& text, std::chrono::milliseconds* value) {
  const common::ParsedDuration parsed = common::parseDuration(text);
  if (!parsed.ok() || parsed.value < kMinDbTimeout || parsed.value > kMaxDbTimeout) {
    return "--db-timeout takes a duration from " + common::formatDuration(kMinDbTimeout) + " to " +
           common::formatDuration(kMaxDbTimeout) + " (e.g. 2s, 500ms), got '" + text + "'";
  }
  *value = parsed.value;
  return "";
}

}  // namespace npac::npacd
