#include "npac/npacctl/client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

Target parseApi(std::string api, bool force_tls) {
  Target target;
  target.tls = force_tls;
  if (api.rfind("https://", 0) == 0) {
    target.tls = true;
    api = api.substr(8);
  } else if (api.rfind("http://", 0) == 0) {
    if (force_tls) {
      target.error = "--api '" + api + "' says http:// but --tls asks for TLS: use https://";
      return target;
    }
    api = api.substr(7);
  }
  while (!api.empty() && api.back() == '/') api.pop_back();
  const std::size_t colon = api.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == api.size()) {
    target.error = "--api '" + api + "' must be HOST:PORT or https://HOST:PORT, e.g. " + kDefaultApi;
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

void addTlsOptions(CLI::App& app) {
  ClientTlsOptions& options = clientTlsOptions();
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

ApiOutcome ApiClient::call(http::verb method, const std::string& target,
                           const std::optional<nlohmann::json>& body, const std::string& actor) const {
  ApiOutcome outcome;
  const Target where = parseApi(api_, tls_.tls);
  if (!where.error.empty()) {
    outcome.failure = where.error;
    return outcome;
  }
  http::request<http::string_body> request{method, target, 11};
  request.set(http::field::host, where.host);
  request.set(http::field::user_agent, "npacctl");
  if (!bearerToken_.empty()) request.set(http::field::authorization, "Bearer " + bearerToken_);
  if (!actor.empty()) request.set("X-Npac-Actor", actor);
  if (body) {
    request.set(http::field::content_type, "application/json");
    request.body() = body->dump();
  }
  request.prepare_payload();

  boost::asio::io_context io;
  tcp::resolver resolver(io);
  beast::error_code ec;
  auto endpoints = resolver.resolve(where.host, where.port, ec);
  if (ec) {
    outcome.failure = "cannot reach npacd at " + api_ + ": " + ec.message();
    return outcome;
  }
  http::response<http::string_body> response;
  if (!where.tls) {
    beast::tcp_stream stream(io);
    stream.expires_after(timeout_);
    stream.connect(endpoints, ec);
    if (ec) {
      outcome.failure = "cannot reach npacd at " + api_ + ": " + ec.message() + " — is it running?";
      return outcome;
    }
    ec = exchange(stream, request, response);
    if (ec) {
      outcome.failure = "npacd at " + api_ + " did not answer: " + ec.message();
      // A TLS server closes a plain request's connection at its failed handshake.
      if (ec == http::error::end_of_stream || ec == boost::asio::error::eof ||
          ec == boost::asio::error::connection_reset) {
        outcome.failure += " (if npacd serves TLS there, use --api https://" + where.host + ":" + where.port + ")";
      }
      return outcome;
    }
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  } else {
    ssl::context context(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(context.native_handle(), TLS1_2_VERSION);  // RFC 8996
    context.set_verify_mode(ssl::verify_peer);
    if (!tls_.ca_file.empty()) {
      if (std::FILE* file = std::fopen(tls_.ca_file.c_str(), "rb")) {
        std::fclose(file);
      } else {
        outcome.failure = "--ca-file " + tls_.ca_file + ": " + std::strerror(errno);
        return outcome;
      }
      context.load_verify_file(tls_.ca_file, ec);
      if (ec) {
        outcome.failure = "--ca-file " + tls_.ca_file + ": not a PEM certificate file (" + ec.message() + ")";
        return outcome;
      }
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
    beast::get_lowest_layer(stream).expires_after(timeout_);
    beast::get_lowest_layer(stream).connect(endpoints, ec);
    if (ec) {
      outcome.failure = "cannot reach npacd at " + api_ + ": " + ec.message() + " — is it running?";
      return outcome;
    }
    stream.handshake(ssl::stream_base::client, ec);
    if (ec) {
      const long verified = SSL_get_verify_result(stream.native_handle());
      if (verified != X509_V_OK) {
        outcome.failure = "the certificate of npacd at " + api_ + " is not trusted: " +
                          X509_verify_cert_error_string(verified) +
                          (tls_.ca_file.empty() ? std::string(" — pass --ca-file FILE with npacd's certificate or its CA")
                                                : " (checked against --ca-file " + tls_.ca_file + ")");
      } else if (sslReason(ec) == SSL_R_WRONG_VERSION_NUMBER) {
        outcome.failure = "npacd at " + api_ + " did not answer in TLS (" + ec.message() +
                          "): it serves plain HTTP there? use --api " + where.host + ":" + where.port +
                          " without https:// and --tls";
      } else {
        outcome.failure = "TLS handshake with npacd at " + api_ + " failed: " + ec.message();
      }
      return outcome;
    }
    ec = exchange(stream, request, response);
    if (ec) {
      outcome.failure = "npacd at " + api_ + " did not answer: " + ec.message();
      return outcome;
    }
    // The answer is complete (Content-Length): no close_notify exchange is waited for.
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
  }
  ApiReply reply;
  reply.status = static_cast<int>(response.result_int());
  reply.body = nlohmann::json::parse(response.body(), nullptr, false);
  outcome.reply = std::move(reply);
  return outcome;
}

}  // namespace npac::npacctl
