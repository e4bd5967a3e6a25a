#include "npac/npac-soa-sim/options.h"

#include <charconv>
#include <limits>

#include "common/duration.h"
#include "common/hex.h"
#include "common/vocabulary.h"

namespace npac::soasim {
namespace {

std::optional<uint64_t> parseUnsigned(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// "'text'" — built by appending: g++ 12 warns (-Wrestrict, PR105651) on "'" + string.
std::string quote(std::string_view text) {
  std::string s(1, '\'');
  s.append(text);
  s.push_back('\'');
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// Durations are signed 64-bit milliseconds; longer ones would overflow (about 292
// million years, far beyond any value a run can use).
constexpr int64_t kMaxDurationMillis = std::numeric_limits<int64_t>::max();
constexpr std::string_view kTooLong = " is too long";

Result<Millis> tooLong(std::string_view text) { return Status::badOption(quote(text).append(kTooLong)); }

}  // namespace

Result<Millis> parseDuration(std::string_view text) {
  // A bare number is milliseconds here (scripts pass "--response-delay 50"); everything
  // else is the one duration grammar of common/duration.h.
  if (auto n = parseUnsigned(text)) {
    if (*n > static_cast<uint64_t>(kMaxDurationMillis)) return tooLong(text);
    return Millis(static_cast<int64_t>(*n));
  }
  const Result<common::Millis> d = common::parseDuration(text);
  if (d.status().code() == StatusCode::kOutOfRange) return tooLong(text);
  if (!d.isOk()) return Status::badOption(quote(text) + " is not a duration (e.g. 50ms, 2s, 1m, 1h30m)");
  return d.value();
}

Result<Millis> parseSignedDuration(std::string_view text) {
  const bool negative = text.starts_with('-');
  std::string_view magnitude = negative || text.starts_with('+') ? text.substr(1) : text;
  auto d = parseDuration(magnitude);
  if (!d.isOk() && d.status().message().ends_with(kTooLong)) return tooLong(text);
  if (!d.isOk()) return Status::badOption(quote(text) + " is not a signed duration (e.g. -10m, +2h, 30s)");
  return negative ? -d.value() : d.value();
}

Result<std::pair<size_t, std::string>> parseIndexed(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) return std::pair<size_t, std::string>{0, std::string(text)};
  auto index = parseUnsigned(text.substr(0, eq));
  if (!index || *index == 0) {
    return Status::badOption(
        quote(text) + ": the association index before '=' must be 1, 2, ... (the order of --from)");
  }
  return std::pair<size_t, std::string>{static_cast<size_t>(*index), std::string(text.substr(eq + 1))};
}

Result<cmip::AssociationFunctionMask> parseFunctions(std::string_view text) {
  cmip::AssociationFunctionMask mask;
  size_t start = 0;
  while (start <= text.size()) {
    // ',' as typed on a command line, '|' as the admin API prints an association's functions.
    size_t separator = text.find_first_of(",|", start);
    std::string name = trim(text.substr(start, separator == std::string_view::npos ? std::string_view::npos : separator - start));
    for (char& c : name) c = c == '_' ? '-' : c;
    std::optional<cmip::AssociationFunction> f = common::parseAssociationFunction(name);
    if (!f) {
      return Status::badOption("unknown association function " + quote(name) + " (" +
                               common::associationFunctionNames() + ")");
    }
    mask.add(*f);
    if (separator == std::string_view::npos) break;
    start = separator + 1;
  }
  return mask;
}

Result<cmip::SystemType> parseSystemType(std::string_view text) {
  std::optional<cmip::SystemType> type = common::parseSystemType(text);
  // A provider never binds as the NPAC: offering npac would only test a typo.
  if (!type || *type == cmip::SystemType::kNpac) {
    return Status::badOption("unknown system type " + quote(text) + " (soa, lsms, soa-and-lsms)");
  }
  return *type;
}

Result<cmip::GeneralizedTime> parseTime(std::string_view text, int64_t now_millis) {
  if (text == "now") return cmip::GeneralizedTime::fromUnixMillis(now_millis / 1000 * 1000);
  if (text.starts_with("now-")) {
    auto d = parseDuration(text.substr(4));
    if (!d.isOk()) return d.status();
    return cmip::GeneralizedTime::fromUnixMillis((now_millis - d->count()) / 1000 * 1000);
  }
  auto t = cmip::GeneralizedTime::parse(text);
  if (!t.isOk() || !t->utc) {
    return Status::badOption(quote(text) + " is not a UTC GeneralizedTime (YYYYMMDDHHMMSSZ), 'now' or 'now-10m'");
  }
  return *t;
}

Result<std::pair<std::string, uint16_t>> parseHostPort(std::string_view text) {
  const std::string example = " (e.g. 127.0.0.1:10102)";
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Status::badOption(quote(text) + " has no port: host:port" + example);
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.empty()) return Status::badOption(quote(text) + " has no host: host:port" + example);
  auto port = parseUnsigned(port_text);
  if (!port || *port == 0 || *port > 65535) {
    return Status::badOption(quote(text) + ": the port must be a number 1-65535, not " + quote(port_text));
  }
  // IPv4 addresses and names only: the NPAC NSAP encoding (RFC 1277) has no IPv6 form.
  if (host.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") !=
      std::string_view::npos) {
    return Status::badOption(quote(text) + ": " + quote(host) + " is not a host name or IPv4 address" + example);
  }
  return std::pair<std::string, uint16_t>{std::string(host), static_cast<uint16_t>(*port)};
}

Result<std::vector<uint8_t>> parseHex(std::string_view text) {
  Result<std::vector<uint8_t>> decoded = common::decodeHex(text, common::HexSeparators::kBetweenOctets);
  if (!decoded.isOk()) return Status::badOption(decoded.status().message());
  if (decoded->empty()) return Status::badOption("no octets");
  return decoded;
}

}  // namespace npac::soasim
