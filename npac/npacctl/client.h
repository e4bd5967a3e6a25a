// ApiClient: npacctl's blocking HTTP/1.1 client for npacd's admin API (Boost.Beast, sync),
// in plain HTTP or HTTPS.
//
// One request per call on a fresh connection. A reply is either the server's status and
// JSON body, or a transport failure phrased for an operator:
// "cannot reach npacd at 127.0.0.1:10180: Connection refused — is it running?".
// The address "https://HOST:PORT" (or --tls) speaks TLS 1.2 or later and verifies the
// server's certificate against --ca-file (else the system's trusted CAs) and that it names
// HOST (an IP address against the certificate's IP SANs, RFC 6125 / RFC 2818 §3.1); an
// untrusted certificate, a failed handshake and a plain HTTP server on that port each
// fail with their own sentence.
//
// Threading: one call at a time per object. The TLS options npacctl's top-level flags set
// are process-wide (read when an ApiClient is made); npacctl is single-threaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <boost/beast/http/verb.hpp>
#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace npac::npacctl {

inline constexpr const char* kDefaultApi = "127.0.0.1:10180";

// Exit codes of the server commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitApiError = 1;     // npacd answered with an error
inline constexpr int kExitUsage = 2;        // bad flags (CLI11's own code too)
inline constexpr int kExitUnreachable = 3;  // npacd could not be reached

struct ApiReply {
  int status = 0;
  nlohmann::json body;  // discarded when the body was not JSON
  bool ok() const { return status >= 200 && status < 300; }
  // "provider_not_found: no provider 0009 is provisioned" from an error body.
  std::string errorText() const;
};

struct ApiOutcome {
  std::optional<ApiReply> reply;  // empty: transport failure, see `failure`
  std::string failure;
};

struct ClientTlsOptions {
  bool tls = false;     // --tls: TLS even for an address without https://
  std::string ca_file;  // --ca-file: PEM certificate(s) to trust; empty: the system's CAs
};
// The process-wide options (npacctl's --tls and --ca-file).
ClientTlsOptions& clientTlsOptions();
// Adds --tls and --ca-file to `app` (the top-level npacctl), bound to clientTlsOptions().
void addTlsOptions(CLI::App& app);

class ApiClient {
 public:
  // `api` is "host:port", "http://host:port" or "https://host:port" (IPv4 or a name); bad
  // text is reported by the first call. TLS options: clientTlsOptions() as they are now.
  explicit ApiClient(std::string api, std::chrono::seconds timeout = std::chrono::seconds(90))
      : api_(std::move(api)), timeout_(timeout), tls_(clientTlsOptions()) {}

  ApiOutcome call(boost::beast::http::verb method, const std::string& target,
                  const std::optional<nlohmann::json>& body = std::nullopt,
                  const std::string& actor = "") const;

  const std::string& api() const { return api_; }

  // Sent as "Authorization: Bearer <token>" on every request (RFC 6750 §2.1); empty
  // (the default) sends no Authorization header.
  void setBearerToken(std::string token) { bearerToken_ = std::move(token); }
  const std::string& bearerToken() const { return bearerToken_; }
  void setTls(ClientTlsOptions tls) { tls_ = std::move(tls); }

 private:
  std::string api_;
  std::chrono::seconds timeout_;
  std::string bearerToken_;
  ClientTlsOptions tls_;
};

// Percent-encodes one path segment or query value.
std::string urlEncode(const std::string& text);

}  // namespace npac::npacctl
