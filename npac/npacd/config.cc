#include "npac/npacd/config.h"

#include <charconv>

#include <unistd.h>

#include <boost/asio/ip/address.hpp>

#include "common/duration.h"

namespace npac::npacd {

Result<Endpoint> parseEndpoint(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    return Status::badOption("expected host:port, got '" + text + "'");
  }
  std::uint64_t value = 0;
  if (!parseInteger(std::string_view(text).substr(colon + 1), {0, 65535}, &value).empty()) {
    return Status::badOption("bad port in '" + text + "' (a port is 0 to 65535)");
  }
  return Endpoint{text.substr(0, colon), static_cast<std::uint16_t>(value)};
}

std::string checkEndpoint(const std::string& text) {
  Result<Endpoint> endpoint = parseEndpoint(text);
  if (!endpoint.isOk()) return endpoint.status().message();
  const std::string& host = endpoint->host;
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(host, ec);
  if (ec) return "'" + host + "' in '" + text + "' is not a numeric IP address (e.g. 127.0.0.1, ::1, 0.0.0.0)";
  return "";
}

std::string checkDbPath(const std::string& path) {
  if (path.empty()) return "must name a SQLite file or a postgresql:// URL, not be empty";
  return "";
}

std::string parseInteger(std::string_view text, IntegerRange range, std::uint64_t* value) {
  // Digits alone: from_chars itself would take a '-' for signed types, strtoull (CLI11's
  // reader) a sign, blanks and 0x / 0 prefixes.
  bool ok = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
  std::uint64_t parsed = 0;
  if (ok) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    ok = ec == std::errc() && end == text.data() + text.size();  // ec: more than 64 bits
  }
  if (!ok || parsed < range.min || parsed > range.max) {
    return "must be an integer from " + std::to_string(range.min) + " to " + std::to_string(range.max) +
           ", got '" + std::string(text) + "'";
  }
  *value = parsed;
  return "";
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
  // Each limit's own range is checked as it is parsed (kNumberOptions); here what two of
  // them must satisfy together.
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
  const Result<common::Millis> parsed = common::parseDuration(text);
  if (!parsed.isOk() || parsed.value() < kMinDbTimeout || parsed.value() > kMaxDbTimeout) {
    return "must be a duration from " + common::formatDuration(kMinDbTimeout) + " to " +
           common::formatDuration(kMaxDbTimeout) + " (e.g. 2s, 500ms), got '" + text + "'";
  }
  *value = parsed.value();
  return "";
}

}  // namespace npac::npacd
