// TLS for the admin API: the server's OpenSSL context, built once at start from a PEM
// certificate chain and its PEM private key (--api-cert, --api-key).
//
// The context allows TLS 1.2 and 1.3 only (RFC 8996 deprecates TLS 1.0 and 1.1), no
// compression (CRIME), and the server's cipher preference. Every problem with the files
// (missing, unreadable, not PEM, a key that does not match the certificate) is an error
// value naming the file and the reason, so npacd can refuse to start with it.
//
// Threading: build the context before the API thread runs; the HttpServer then only reads
// it from the API thread (OpenSSL contexts are safe to share read-only).
#pragma once

#include <memory>
#include <string>

#include "db/status.h"

namespace boost::asio::ssl {
class context;
}

namespace npac::npacd {

// The certificate chain in `cert_file` (leaf first) and the key in `key_file`.
db::Result<std::shared_ptr<boost::asio::ssl::context>> loadServerTlsContext(const std::string& cert_file,
                                                                         const std::string& key_file);

// The text of the OpenSSL errors queued on this thread ("" when none), oldest first, and
// the queue emptied: for an error message.
std::string takeOpenSslErrors();

}  // namespace npac::npacd
