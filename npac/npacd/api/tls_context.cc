#include "npac/npacd/api/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <boost/asio/ssl/context.hpp>

#include "npac/npacd/api/json.h"

namespace npac::npacd {
namespace {

namespace ssl = boost::asio::ssl;

// "" when `path` can be opened for reading, else the reason (strerror: "No such file or
// directory", "Permission denied"): checked first so the message says that, not an
// OpenSSL "system lib" code.
std::string unreadable(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return std::strerror(errno);
  // A directory opens but does not read (EISDIR).
  std::string why;
  if (std::fgetc(file) == EOF && std::ferror(file)) why = std::strerror(errno);
  std::fclose(file);
  return why;
}

db::Status fileError(const char* option, const std::string& path, const std::string& why) {
  return db::Status::invalidArgument(std::string(option) + " " + path + ": " + why);
}

// An ASN1_TIME (UTCTime or GeneralizedTime, RFC 5280 §4.1.2.5) in ms since the epoch.
std::optional<db::TimeMs> epochMs(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return std::nullopt;
  return static_cast<db::TimeMs>(::timegm(&tm)) * 1000;
}

// "3 days", "1 day", "less than a day": how far apart two instants are, for a person
// (to the nearest day).
std::string wholeDays(db::TimeMs span) {
  constexpr db::TimeMs kDayMs = 86'400'000;
  if (span < kDayMs) return "less than a day";
  const db::TimeMs days = (span + kDayMs / 2) / kDayMs;
  return std::to_string(days) + (days == 1 ? " day" : " days");
}

}  // namespace

std::optional<CertificateValidity> certificateValidity(ssl::context& context) {
  X509* certificate = SSL_CTX_get0_certificate(context.native_handle());
  if (certificate == nullptr) return std::nullopt;
  const std::optional<db::TimeMs> not_before = epochMs(X509_get0_notBefore(certificate));
  const std::optional<db::TimeMs> not_after = epochMs(X509_get0_notAfter(certificate));
  if (!not_before || !not_after) return std::nullopt;
  return CertificateValidity{*not_before, *not_after};
}

std::optional<std::string> certificateValidityProblem(const CertificateValidity& validity, db::TimeMs now) {
  // RFC 5280 §4.1.2.5: valid from notBefore through notAfter, both inclusive.
  if (now < validity.not_before) {
    return "the admin API's certificate is not valid before " + formatTime(validity.not_before) + " (in " +
           wholeDays(validity.not_before - now) +
           "): clients that verify it (npacctl does) refuse the connection until then; check the clock or the "
           "certificate (--api-cert)";
  }
  if (now > validity.not_after) {
    return "the admin API's certificate expired at " + formatTime(validity.not_after) + " (" +
           wholeDays(now - validity.not_after) +
           " ago): clients that verify it (npacctl does) refuse the connection; renew it (--api-cert) and restart "
           "npacd";
  }
  return std::nullopt;
}

std::string takeOpenSslErrors() {
  std::string text;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    if (!text.empty()) text += "; ";
    text += buffer;
  }
  return text;
}

db::Result<std::shared_ptr<ssl::context>> loadServerTlsContext(const std::string& cert_file,
                                                            const std::string& key_file) {
  if (std::string why = unreadable(cert_file); !why.empty()) return fileError("--api-cert", cert_file, why);
  if (std::string why = unreadable(key_file); !why.empty()) return fileError("--api-key", key_file, why);
  ERR_clear_error();
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  // RFC 8996: TLS 1.0 and 1.1 are not offered.
  if (SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1) {
    return db::Status::internal("OpenSSL refused TLS 1.2 as the lowest version: " + takeOpenSslErrors());
  }
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                  SSL_OP_NO_RENEGOTIATION);
  if (SSL_CTX_use_certificate_chain_file(native, cert_file.c_str()) != 1) {
    return fileError("--api-cert", cert_file,
                     "not a PEM certificate (chain): " + takeOpenSslErrors());
  }
  // The key is never prompted for: an encrypted key fails here instead of reading a tty.
  SSL_CTX_set_default_passwd_cb(native, [](char*, int, int, void*) { return 0; });
  if (SSL_CTX_use_PrivateKey_file(native, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    // OpenSSL compares a readable key with the certificate already here.
    const bool mismatch = ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
    return fileError("--api-key", key_file,
                     (mismatch ? "does not match the certificate in " + cert_file
                               : std::string("not an unencrypted PEM private key")) +
                         ": " + takeOpenSslErrors());
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return fileError("--api-key", key_file,
                     "does not match the certificate in " + cert_file + ": " + takeOpenSslErrors());
  }
  return context;
}

}  // namespace npac::npacd
