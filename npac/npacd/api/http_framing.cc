#include "npac/npacd/api/http_framing.h"

#include <string_view>
#include <vector>

#include "common/text.h"
#include "npac/npacd/api/http_message.h"

namespace npac::npacd {

namespace http = boost::beast::http;

namespace {

// Echoed header values are cut to this many bytes (and shown as printable ASCII).
constexpr std::size_t kEchoedBytes = 64;

std::string echo(std::string_view value) {
  std::string out(1, '\'');
  out += printableAscii(value.substr(0, kEchoedBytes));
  out += value.size() > kEchoedBytes ? "...'" : "'";
  return out;
}

bool isChunked(std::string_view coding) {
  constexpr std::string_view kChunked = "chunked";
  if (coding.size() != kChunked.size()) return false;
  for (std::size_t i = 0; i < coding.size(); ++i) {
    const char c = coding[i] >= 'A' && coding[i] <= 'Z' ? static_cast<char>(coding[i] - 'A' + 'a') : coding[i];
    if (c != kChunked[i]) return false;
  }
  return true;
}

// The transfer codings of every Transfer-Encoding field, in order (RFC 9112 §6.1: a
// list, which may be split over several fields). Empty list elements are skipped, as
// RFC 9110 §5.6.1 asks; a coding's parameters stay on it, so "chunked;x=1" is not chunked.
std::vector<std::string_view> transferCodings(const http::request_header<http::fields>& header) {
  std::vector<std::string_view> codings;
  const auto [first, last] = header.equal_range(http::field::transfer_encoding);
  for (auto it = first; it != last; ++it) {
    std::string_view rest(it->value().data(), it->value().size());
    while (true) {
      const std::size_t comma = rest.find(',');
      const std::string_view element = common::trimBlanks(rest.substr(0, comma));
      if (!element.empty()) codings.push_back(element);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return codings;
}

// RFC 9110 §4.2.3 (uri-host: IP-literal, IPv4address or reg-name) and RFC 3986 §3.2.2,
// with ":" port: unreserved, pct-encoded, sub-delims, ':', '[' and ']'.
bool isHostValue(std::string_view value) {
  for (char c : value) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum || std::string_view("-._~%!$&'()*+,;=:[]").find(c) != std::string_view::npos) continue;
    return false;
  }
  return true;
}

FramingRefusal refusal(http::status status, std::string code, std::string message) {
  return FramingRefusal{status, std::move(code), std::move(message)};
}

std::optional<FramingRefusal> checkTransferEncoding(const http::request_header<http::fields>& header) {
  if (header.find(http::field::transfer_encoding) == header.end()) return std::nullopt;
  std::string shown;  // every Transfer-Encoding value, as sent
  const auto [first, last] = header.equal_range(http::field::transfer_encoding);
  for (auto it = first; it != last; ++it) {
    shown += (shown.empty() ? "" : ", ") + std::string(it->value());
  }
  const std::string what = "Transfer-Encoding " + echo(shown);
  if (header.version() < 11) {
    return refusal(http::status::bad_request, "bad_transfer_encoding",
                   what + " in an HTTP/1.0 request: its framing cannot be trusted (RFC 9112 section 6.1)");
  }
  if (header.find(http::field::content_length) != header.end()) {
    return refusal(http::status::bad_request, "bad_transfer_encoding",
                   what + " together with Content-Length: send one of them (RFC 9112 section 6.3)");
  }
  const std::vector<std::string_view> codings = transferCodings(header);
  if (codings.empty() || !isChunked(codings.back())) {
    return refusal(http::status::bad_request, "bad_transfer_encoding",
                   what + ": the last transfer coding of a request must be chunked, or the body's length "
                          "is unknown (RFC 9112 section 6.3); send Content-Length or "
                          "'Transfer-Encoding: chunked'");
  }
  for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
    if (isChunked(codings[i])) {
      return refusal(http::status::bad_request, "bad_transfer_encoding",
                     what + ": chunked may be applied once only (RFC 9112 section 6.1)");
    }
  }
  if (codings.size() > 1) {
    return refusal(http::status::not_implemented, "unsupported_transfer_encoding",
                   what + ": npacd decodes no transfer coding but chunked (RFC 9112 section 6.1); send "
                          "the body as it is, with Content-Length or 'Transfer-Encoding: chunked'");
  }
  return std::nullopt;
}

}  // namespace

std::optional<FramingRefusal> checkRequestFraming(const http::request_header<http::fields>& header) {
  if (std::optional<FramingRefusal> refused = checkTransferEncoding(header)) return refused;
  const std::size_t hosts = header.count(http::field::host);
  if (hosts == 0 && header.version() >= 11) {
    return refusal(http::status::bad_request, "missing_host",
                   "an HTTP/1.1 request must carry a Host header (RFC 9112 section 3.2)");
  }
  if (hosts > 1) {
    return refusal(http::status::bad_request, "bad_host",
                   std::to_string(hosts) + " Host headers: a request carries one (RFC 9112 section 3.2)");
  }
  if (auto host = header.find(http::field::host); host != header.end()) {
    const std::string_view value(host->value().data(), host->value().size());
    if (!isHostValue(value)) {
      return refusal(http::status::bad_request, "bad_host",
                     "Host " + echo(value) + " is not a host name or address with an optional port "
                                             "(RFC 9112 section 3.2)");
    }
  }
  if (const std::size_t n = header.count(http::field::authorization); n > 1) {
    return refusal(http::status::bad_request, "duplicate_authorization",
                   std::to_string(n) + " Authorization headers: send one, 'Authorization: Bearer <token>'");
  }
  return std::nullopt;
}

}  // namespace npac::npacd
