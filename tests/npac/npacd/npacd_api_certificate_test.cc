// The admin API's TLS certificate outside its validity period (issue 24 item 6; docs/API.md
// "TLS"): npacd starts with it but warns at start, in GET /ready and in GET /metrics.
// Certificates with chosen dates are made here with OpenSSL's API (the `openssl` CLI of
// Debian 12 cannot date one in the past); the real npacd serves them over loopback TLS.
#include "tests/npac/npacd/npacd_fixture.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>

#include "npac/npacd/api/tls_context.h"

using namespace npacd_test;
namespace ssl = boost::asio::ssl;

namespace {

constexpr long kDay = 86'400;

// A self-signed P-256 certificate for IP 127.0.0.1 valid from now + `from_days` to now +
// `to_days`, and its key, in a temporary directory removed at destruction.
struct DatedCertificate {
  fs::path dir, cert, key;
  DatedCertificate(long from_days, long to_days) {
    std::string pattern = (fs::temp_directory_path() / "npac-cert-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    cert = dir / "cert.pem";
    key = dir / "key.pem";
    EVP_PKEY* pkey = EVP_EC_gen("P-256");
    REQUIRE(pkey != nullptr);
    X509* x509 = X509_new();
    X509_set_version(x509, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x509), 1);
    X509_gmtime_adj(X509_getm_notBefore(x509), from_days * kDay);
    X509_gmtime_adj(X509_getm_notAfter(x509), to_days * kDay);
    X509_set_pubkey(x509, pkey);
    X509_NAME* name = X509_get_subject_name(x509);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("npacd-test"), -1,
                               -1, 0);
    X509_set_issuer_name(x509, name);
    X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, "IP:127.0.0.1");
    REQUIRE(san != nullptr);
    X509_add_ext(x509, san, -1);
    X509_EXTENSION_free(san);
    REQUIRE(X509_sign(x509, pkey, EVP_sha256()) > 0);
    FILE* out = std::fopen(cert.c_str(), "w");
    REQUIRE(out != nullptr);
    PEM_write_X509(out, x509);
    std::fclose(out);
    out = std::fopen(key.c_str(), "w");
    REQUIRE(out != nullptr);
    PEM_write_PrivateKey(out, pkey, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(out);
    X509_free(x509);
    EVP_PKEY_free(pkey);
  }
  ~DatedCertificate() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  DatedCertificate(const DatedCertificate&) = delete;
  DatedCertificate& operator=(const DatedCertificate&) = delete;

  std::vector<std::string> args() const { return {"--api-cert", cert.string(), "--api-key", key.string()}; }
};

// An HTTPS GET that does not verify the certificate (it may be expired: that is the
// point); the status and the body.
std::pair<int, std::string> httpsGet(const NpacdProcess& npacd, const std::string& target,
                                     const std::optional<std::string>& token) {
  boost::asio::io_context io;
  ssl::context context(ssl::context::tls_client);
  context.set_verify_mode(ssl::verify_none);
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream(io, context);
  boost::beast::get_lowest_layer(stream).expires_after(30s);
  boost::beast::get_lowest_layer(stream).connect(
      boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), npacd.apiPort()));
  stream.handshake(ssl::stream_base::client);
  http::request<http::string_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  if (token) request.set(http::field::authorization, "Bearer " + *token);
  http::write(stream, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  return {static_cast<int>(response.result_int()), response.body()};
}

std::optional<double> sample(const std::string& text, const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("npacd started with an expired API certificate warns at start, in GET /ready and in /metrics") {
  DatedCertificate certificate(-30, -3);
  NpacdProcess npacd(NpacdProcess::Options{{}, certificate.args()});
  CHECK_THAT(npacd.log(), Catch::Contains("the admin API's certificate expired at") &&
                              Catch::Contains("(3 days ago)") && Catch::Contains("renew it (--api-cert)"));
  const auto [status, ready] = httpsGet(npacd, "/ready", std::nullopt);
  CHECK(status == 200);  // associations are served all the same
  CHECK_THAT(ready, Catch::StartsWith("ready\nwarning: api-certificate: the admin API's certificate expired at"));
  const auto [metrics_status, metrics] = httpsGet(npacd, "/metrics", npacd.token());
  REQUIRE(metrics_status == 200);
  const std::optional<double> days = sample(metrics, "npacd_api_certificate_expiry_days");
  REQUIRE(days.has_value());
  CHECK(*days == Approx(-3).margin(0.1));
  CHECK(sample(metrics, "npacd_api_certificate_valid") == 0);
}

TEST_CASE("npacd started with an API certificate not yet valid warns at start and in GET /ready") {
  DatedCertificate certificate(2, 30);
  NpacdProcess npacd(NpacdProcess::Options{{}, certificate.args()});
  CHECK_THAT(npacd.log(), Catch::Contains("the admin API's certificate is not valid before") &&
                              Catch::Contains("(in 2 days)"));
  const auto [status, ready] = httpsGet(npacd, "/ready", std::nullopt);
  CHECK(status == 200);
  CHECK_THAT(ready, Catch::Contains("warning: api-certificate: the admin API's certificate is not valid before"));
  const auto [metrics_status, metrics] = httpsGet(npacd, "/metrics", npacd.token());
  REQUIRE(metrics_status == 200);
  CHECK(sample(metrics, "npacd_api_certificate_expiry_days").value_or(0) == Approx(30).margin(0.1));
  CHECK(sample(metrics, "npacd_api_certificate_valid") == 0);
}

TEST_CASE("npacd with a valid API certificate counts its days to expiry and GET /ready warns of nothing") {
  DatedCertificate certificate(-1, 90);
  NpacdProcess npacd(NpacdProcess::Options{{}, certificate.args()});
  CHECK(npacd.log().find("certificate expired") == std::string::npos);
  CHECK(npacd.log().find("not valid before") == std::string::npos);
  CHECK(httpsGet(npacd, "/ready", std::nullopt).second == "ready\n");
  const auto [metrics_status, metrics] = httpsGet(npacd, "/metrics", npacd.token());
  REQUIRE(metrics_status == 200);
  CHECK(sample(metrics, "npacd_api_certificate_expiry_days").value_or(0) == Approx(90).margin(0.1));
  CHECK(sample(metrics, "npacd_api_certificate_valid") == 1);
}

TEST_CASE("npacd in plain HTTP has no certificate series in /metrics") {
  NpacdProcess npacd;
  const Reply ready = npacd.callWith(std::nullopt, http::verb::get, "/ready");
  CHECK(ready.text == "ready\n");
  const std::string metrics = npacd.call(http::verb::get, "/metrics").text;
  CHECK(metrics.find("npacd_api_certificate") == std::string::npos);
}

TEST_CASE("A certificate's validity is a problem before notBefore and after notAfter, both inclusive") {
  using npac::npacd::certificateValidityProblem;
  const npac::npacd::CertificateValidity validity{1'000'000'000'000, 1'000'864'000'000};  // 10 days
  CHECK(certificateValidityProblem(validity, validity.not_before) == std::nullopt);
  CHECK(certificateValidityProblem(validity, validity.not_after) == std::nullopt);
  const std::optional<std::string> early = certificateValidityProblem(validity, validity.not_before - 1);
  REQUIRE(early.has_value());
  CHECK_THAT(*early, Catch::StartsWith("the admin API's certificate is not valid before 2001-09-09T01:46:40.000Z "
                                       "(in less than a day)"));
  const std::optional<std::string> late = certificateValidityProblem(validity, validity.not_after + 2 * 86'400'000);
  REQUIRE(late.has_value());
  CHECK_THAT(*late, Catch::StartsWith("the admin API's certificate expired at 2001-09-19T01:46:40.000Z (2 days ago)"));
}
