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
// Where npacd is: --api, else $NPACCTL_API, else 127.0.0.1:10180 (apiAddress()). Every
// connection option (--api, --tls, --ca-file here; --token, --token-file in
// token_source.h) belongs to npacctl itself, so it goes before the command or after it:
// `npacctl --api https://HOST:10180 --ca-file api.crt sp list` and `npacctl sp list --api
// https://HOST:10180 --ca-file api.crt` are the same request.
//
// Threading: one call at a time per object. The connection options npacctl's top-level
// flags set are process-wide (read when an ApiClient is made); npacctl is single-threaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
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

// The address npacd's admin API is asked at, and where that choice came from ("--api",
// "$NPACCTL_API" or "the default"), which a malformed address's message names.
struct ApiAddress {
  std::string address;
  std::string source;
};
// --api when given, else $NPACCTL_API when set and not empty, else kDefaultApi.
ApiAddress apiAddress();

// Adds the connection options --api, --tls and --ca-file to `app` (the top-level
// npacctl), bound to the process-wide options apiAddress() and clientTlsOptions() read.
void addConnectionOptions(CLI::App& app);

class ApiClient {
 public:
  // `api` is "host:port", "http://host:port" or "https://host:port" (IPv4 or a name); bad
  // text is reported by the first call, naming the address's source. TLS options:
  // clientTlsOptions() as they are now.
  explicit ApiClient(ApiAddress api, std::chrono::seconds timeout = std::chrono::seconds(90))
      : api_(std::move(api.address)), source_(std::move(api.source)), timeout_(timeout), tls_(clientTlsOptions()) {}

  ApiOutcome call(boost::beast::http::verb method, const std::string& target,
                  const std::optional<nlohmann::json>& body = std::nullopt,
                  const std::string& actor = "") const;

  // The same request, its answer's body given to `sink` piece by piece rather than kept
  // (a backup: POST /v1/backup). A 2xx answer's head goes to `on_head` first; either
  // returning false stops the reading (the outcome then fails with "stopped reading"). A
  // refusal's JSON body is read as call() reads it. Each read waits at most the timeout,
  // whatever the body's length. A body cut short is a failure naming how much arrived.
  struct DownloadHead {
    int status = 0;
    std::map<std::string, std::string> fields;  // as sent ("X-Npac-Backup-Bytes")
  };
  ApiOutcome download(boost::beast::http::verb method, const std::string& target,
                      const std::optional<nlohmann::json>& body,
                      const std::function<bool(const DownloadHead&)>& on_head,
                      const std::function<bool(std::string_view)>& sink) const;

  const std::string& api() const { return api_; }

  // Sent as "Authorization: Bearer <token>" on every request (RFC 6750 §2.1); empty
  // (the default) sends no Authorization header.
  // `source` says where it came from ("--token", a file), for npacctl's hint when npacd
  // refuses it.
  void setBearerToken(std::string token, std::string source = "") {
    bearerToken_ = std::move(token);
    tokenSource_ = std::move(source);
  }
  const std::string& bearerToken() const { return bearerToken_; }
  const std::string& tokenSource() const { return tokenSource_; }
  void setTls(ClientTlsOptions tls) { tls_ = std::move(tls); }

 private:
  boost::beast::http::request<boost::beast::http::string_body> request(
      boost::beast::http::verb method, const std::string& target, const std::string& host,
      const std::optional<nlohmann::json>& body, const std::string& actor) const;

  std::string api_;
  std::string source_;
  std::chrono::seconds timeout_;
  std::string bearerToken_;
  std::string tokenSource_;
  ClientTlsOptions tls_;
};

// Percent-encodes one path segment or query value.
std::string urlEncode(const std::string& text);

}  // namespace npac::npacctl
