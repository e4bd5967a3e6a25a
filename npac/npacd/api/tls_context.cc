#include "npac/npacd/api/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <boost/asio/ssl/context.hpp>

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

}  // namespace

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
