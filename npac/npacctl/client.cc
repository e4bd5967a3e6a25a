#include "npac/npacctl/client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace npac::npacctl {

namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

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
  const std::size_t colon = api_.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == api_.size()) {
    outcome.failure = "--api '" + api_ + "' must be HOST:PORT, e.g. " + kDefaultApi;
    return outcome;
  }
  const std::string host = api_.substr(0, colon), port = api_.substr(colon + 1);
  boost::asio::io_context io;
  tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  beast::error_code ec;
  auto endpoints = resolver.resolve(host, port, ec);
  if (ec) {
    outcome.failure = "cannot reach npacd at " + api_ + ": " + ec.message();
    return outcome;
  }
  stream.expires_after(timeout_);
  stream.connect(endpoints, ec);
  if (ec) {
    outcome.failure = "cannot reach npacd at " + api_ + ": " + ec.message() + " — is it running?";
    return outcome;
  }
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
  http::write(stream, request, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  if (!ec) http::read(stream, buffer, response, ec);
  if (ec) {
    outcome.failure = "npacd at " + api_ + " did not answer: " + ec.message();
    return outcome;
  }
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  ApiReply reply;
  reply.status = static_cast<int>(response.result_int());
  reply.body = nlohmann::json::parse(response.body(), nullptr, false);
  outcome.reply = std::move(reply);
  return outcome;
}

}  // namespace npac::npacctl
