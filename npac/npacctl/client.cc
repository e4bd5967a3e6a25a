#include "npac/npacctl/client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include <CLI/CLI.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace npac::npacctl {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

namespace {

struct Target {
  bool tls = false;
  std::string host, port;
  std::string error;  // set: the address is malformed
};

// `source` names where `api` came from ("--api", "$NPACCTL_API") in the error.
Target parseApi(std::string api, const std::string& source, bool force_tls) {
  Target target;
  target.tls = force_tls;
  if (api.rfind("https://", 0) == 0) {
    target.tls = true;
    api = api.substr(8);
  } else if (api.rfind("http://", 0) == 0) {
    if (force_tls) {
      target.error = source + " '" + api + "' says http:// but --tls asks for TLS: use https://";
      return target;
    }
    api = api.substr(7);
  }
  while (!api.empty() && api.back() == '/') api.pop_back();
  const std::size_t colon = api.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == api.size()) {
    target.error = source + " '" + api + "' must be HOST:PORT or https://HOST:PORT, e.g. " + kDefaultApi;
    return target;
  }
  target.host = api.substr(0, colon);
  target.port = api.substr(colon + 1);
  if (target.host.size() > 2 && target.host.front() == '[' && target.host.back() == ']') {
    target.host = target.host.substr(1, target.host.size() - 2);  // [::1]:10180
  }
  return target;
}

bool isIpAddress(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

// Writes `request` and reads the answer on a connected stream, plain or TLS.
template <class Stream>
beast::error_code exchange(Stream& stream, const http::request<http::string_body>& request,
                           http::response<http::string_body>& response) {
  beast::error_code ec;
  http::write(stream, request, ec);
  beast::flat_buffer buffer;
  if (!ec) http::read(stream, buffer, response, ec);
  return ec;
}

unsigned long sslReason(const beast::error_code& ec) {
  if (ec.category() != boost::asio::error::get_ssl_category()) return 0;
  return ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
}

}  // namespace

ClientTlsOptions& clientTlsOptions() {
  static ClientTlsOptions options;
  return options;
}

namespace {
struct ApiOption {
  std::string value;               // --api as given
  const CLI::Option* option = nullptr;  // set by addConnectionOptions: was it given?
};
ApiOption& apiOption() {
  static ApiOption api;
  return api;
}
}  // namespace

ApiAddress apiAddress() {
  const ApiOption& given = apiOption();
  if (given.option != nullptr && given.option->count() > 0) return ApiAddress{given.value, "--api"};
  if (const char* env = std::getenv("NPACCTL_API"); env != nullptr && *env != '\0') {
    return ApiAddress{env, "$NPACCTL_API"};
  }
  return ApiAddress{kDefaultApi, "the default address"};
}

void addConnectionOptions(CLI::App& app) {
  ClientTlsOptions& options = clientTlsOptions();
  apiOption().option =
      app.add_option("--api", apiOption().value,
                     std::string("npacd admin API address HOST:PORT, or https://HOST:PORT for a TLS admin API "
                                 "(else $NPACCTL_API, else ") + kDefaultApi + ")")
          ->type_name("ADDRESS");
  app.add_flag("--tls", options.tls, "speak HTTPS to npacd (as an --api https://HOST:PORT does)");
  app.add_option("--ca-file", options.ca_file,
                 "PEM file of the certificate(s) to trust for npacd's HTTPS (else the system's CAs)");
}

std::string ApiReply::errorText() const {
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    return body["error"].value("code", std::string("error")) + ": " + body["error"].value("message", std::string());
  }
  return "HTTP " + std::to_string(status);
}

std::string urlEncode(const std::string& text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

namespace {

// Connects to `where` — plain, or TLS checked against `tls` — and runs `talk(stream)`,
// which writes the request and reads the answer on it. "" when talk succeeded; else the
// sentence for the operator (the address unreachable, the certificate untrusted, the
// answer missing…).
template <class Talk>
std::string converse(const Target& where, const std::string& api, const ClientTlsOptions& tls,
                     std::chrono::seconds timeout, Talk&& talk) {
  boost::asio::io_context io;
  tcp::resolver resolver(io);
  beast::error_code ec;
  auto endpoints = resolver.resolve(where.host, where.port, ec);
  if (ec) return "cannot reach npacd at " + api + ": " + ec.message();
  if (!where.tls) {
    beast::tcp_stream stream(io);
    stream.expires_after(timeout);
    stream.connect(endpoints, ec);
    if (ec) return "cannot reach npacd at " + api + ": " + ec.message() + " — is it running?";
    ec = talk(stream);
    if (ec) {
      std::string failure = "npacd at " + api + " did not answer: " + ec.message();
      // A TLS server closes a plain request's connection at its failed handshake.
      if (ec == http::error::end_of_stream || ec == boost::asio::error::eof ||
          ec == boost::asio::error::connection_reset) {
        failure += " (if npacd serves TLS there, use --api https://" + where.host + ":" + where.port + ")";
      }
      return failure;
    }
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return "";
  }
  ssl::context context(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);  // RFC 8996
  context.set_verify_mode(ssl::verify_peer);
  if (!tls.ca_file.empty()) {
    if (std::FILE* file = std::fopen(tls.ca_file.c_str(), "rb")) {
      std::fclose(file);
    } else {
      return "--ca-file " + tls.ca_file + ": " + std::strerror(errno);
    }
    context.load_verify_file(tls.ca_file, ec);
    if (ec) return "--ca-file " + tls.ca_file + ": not a PEM certificate file (" + ec.message() + ")";
  } else {
    context.set_default_verify_paths(ec);
  }
  beast::ssl_stream<beast::tcp_stream> stream(io, context);
  // The certificate must name the host asked for: an IP address in an IP SAN, a name in
  // a DNS SAN (RFC 6125 §6); names also go out as SNI (RFC 6066 §3).
  X509_VERIFY_PARAM* param = SSL_get0_param(stream.native_handle());
  if (isIpAddress(where.host)) {
    X509_VERIFY_PARAM_set1_ip_asc(param, where.host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, where.host.c_str(), where.host.size());
    SSL_set_tlsext_host_name(stream.native_handle(), where.host.c_str());
  }
  beast::get_lowest_layer(stream).expires_after(timeout);
  beast::get_lowest_layer(stream).connect(endpoints, ec);
  if (ec) return "cannot reach npacd at " + api + ": " + ec.message() + " — is it running?";
  stream.handshake(ssl::stream_base::client, ec);
  if (ec) {
    const long verified = SSL_get_verify_result(stream.native_handle());
    if (verified != X509_V_OK) {
      return "the certificate of npacd at " + api + " is not trusted: " + X509_verify_cert_error_string(verified) +
             (tls.ca_file.empty() ? std::string(" — pass --ca-file FILE with npacd's certificate or its CA")
                                  : " (checked against --ca-file " + tls.ca_file + ")");
    }
    if (sslReason(ec) == SSL_R_WRONG_VERSION_NUMBER) {
      return "npacd at " + api + " did not answer in TLS (" + ec.message() + "): it serves plain HTTP there? use --api " +
             where.host + ":" + where.port + " without https:// and --tls";
    }
    return "TLS handshake with npacd at " + api + " failed: " + ec.message();
  }
  ec = talk(stream);
  if (ec) return "npacd at " + api + " did not answer: " + ec.message();
  // The answer is complete (its length or last chunk read): no close_notify is waited for.
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
  return "";
}

}  // namespace

http::request<http::string_body> ApiClient::request(http::verb method, const std::string& target,
                                                    const std::string& host, const std::optional<nlohmann::json>& body,
                                                    const std::string& actor) const {
  http::request<http::string_body> request{method, target, 11};
  request.set(http::field::host, host);
  request.set(http::field::user_agent, "npacctl");
  if (!bearerToken_.empty()) request.set(http::field::authorization, "Bearer " + bearerToken_);
  if (!actor.empty()) request.set("X-Npac-Actor", actor);
  if (body) {
    request.set(http::field::content_type, "application/json");
    request.body() = body->dump();
  }
  request.prepare_payload();
  return request;
}

ApiOutcome ApiClient::call(http::verb method, const std::string& target,
                           const std::optional<nlohmann::json>& body, const std::string& actor) const {
  ApiOutcome outcome;
  const Target where = parseApi(api_, source_, tls_.tls);
  if (!where.error.empty()) {
    outcome.failure = where.error;
    return outcome;
  }
  const http::request<http::string_body> sent = request(method, target, where.host, body, actor);
  http::response<http::string_body> response;
  outcome.failure = converse(where, api_, tls_, timeout_, [&](auto& stream) { return exchange(stream, sent, response); });
  if (!outcome.failure.empty()) return outcome;
  ApiReply reply;
  reply.status = static_cast<int>(response.result_int());
  reply.body = nlohmann::json::parse(response.body(), nullptr, false);
  outcome.reply = std::move(reply);
  return outcome;
}

ApiOutcome ApiClient::download(http::verb method, const std::string& target, const std::optional<nlohmann::json>& body,
                               const std::function<bool(const DownloadHead&)>& on_head,
                               const std::function<bool(std::string_view)>& sink) const {
  ApiOutcome outcome;
  const Target where = parseApi(api_, source_, tls_.tls);
  if (!where.error.empty()) {
    outcome.failure = where.error;
    return outcome;
  }
  const http::request<http::string_body> sent = request(method, target, where.host, body, "");
  ApiReply reply;
  bool head_read = false;
  bool stopped = false;  // on_head or sink said no more
  std::uint64_t received = 0;
  beast::error_code body_error;
  outcome.failure = converse(where, api_, tls_, timeout_, [&](auto& stream) {
    beast::error_code& ec = body_error;
    http::write(stream, sent, ec);
    if (ec) return ec;
    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    // A database's size: no limit (each read is bounded in time instead). Not boost::none:
    // Beast 1.74 compares a Content-Length with an empty limit as "over it".
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    beast::get_lowest_layer(stream).expires_after(timeout_);
    http::read_header(stream, buffer, parser, ec);
    if (ec) return ec;
    head_read = true;
    reply.status = static_cast<int>(parser.get().result_int());
    const bool success = reply.status >= 200 && reply.status < 300;
    if (success) {
      DownloadHead head;
      head.status = reply.status;
      for (const auto& field : parser.get()) head.fields[std::string(field.name_string())] = std::string(field.value());
      if (!on_head(head)) {
        stopped = true;
        return ec;
      }
    }
    std::string error_body;  // a refusal's JSON, kept in memory (it is small)
    std::vector<char> piece(64 * 1024);
    while (!parser.is_done()) {
      parser.get().body().data = piece.data();
      parser.get().body().size = piece.size();
      beast::get_lowest_layer(stream).expires_after(timeout_);
      http::read(stream, buffer, parser, ec);
      if (ec == http::error::need_buffer) ec = {};
      if (ec) return ec;
      const std::size_t n = piece.size() - parser.get().body().size;
      received += n;
      if (!success) {
        if (error_body.size() < 1024 * 1024) error_body.append(piece.data(), n);
      } else if (n > 0 && !sink(std::string_view(piece.data(), n))) {
        stopped = true;
        return ec;
      }
    }
    if (!success) reply.body = nlohmann::json::parse(error_body, nullptr, false);
    return ec;
  });
  if (!outcome.failure.empty() && head_read) {
    outcome.failure = "npacd's answer from " + api_ + " was cut short after " + std::to_string(received) +
                      " bytes of its body: " + body_error.message();
  }
  if (outcome.failure.empty() && !stopped) outcome.reply = std::move(reply);
  if (outcome.failure.empty() && stopped) outcome.failure = "stopped reading npacd's answer";
  return outcome;
}

}  // namespace npac::npacctl
