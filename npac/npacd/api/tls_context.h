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
// certificateValidity() reads the context (any thread, once built); the rest is pure.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "db/clock.h"
#include "db/status.h"

namespace boost::asio::ssl {
class context;
}

namespace npac::npacd {

// The certificate chain in `cert_file` (leaf first) and the key in `key_file`.
db::Result<std::shared_ptr<boost::asio::ssl::context>> loadServerTlsContext(const std::string& cert_file,
                                                                         const std::string& key_file);

// The validity period of the certificate a server context presents (X.509 notBefore and
// notAfter, RFC 5280 §4.1.2.5), in milliseconds since the epoch. nullopt when the context
// has no certificate or its dates cannot be read.
struct CertificateValidity {
  db::TimeMs not_before = 0;
  db::TimeMs not_after = 0;
};
std::optional<CertificateValidity> certificateValidity(boost::asio::ssl::context& context);

// nullopt while `now` is within `validity`; otherwise what is wrong, a sentence for the
// start-up warning and GET /ready: "the admin API's certificate expired at
// 2026-11-29T15:00:00.000Z (3 days ago): clients that check it refuse the connection; ...".
// Clients that verify certificates (npacctl does) fail their handshake outside it.
std::optional<std::string> certificateValidityProblem(const CertificateValidity& validity, db::TimeMs now);

// The text of the OpenSSL errors queued on this thread ("" when none), oldest first, and
// the queue emptied: for an error message.
std::string takeOpenSslErrors();

}  // namespace npac::npacd
