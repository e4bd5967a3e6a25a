// The admin API's checks of a request's header before its body is read (RFC 9112): what
// Beast's parser accepts but a server must refuse, because the body's length would be
// ambiguous — and the bytes after it could run as a request of their own (request
// smuggling) — or because the request is malformed in a way a route could not tell.
//
//   Transfer-Encoding   only "chunked" alone is taken. A final coding other than chunked
//                       (gzip, "chunked, gzip", xchunked, identity): 400
//                       bad_transfer_encoding (§6.3 item 4: the length cannot be known);
//                       chunked more than once: 400 (§6.1); another coding before
//                       chunked ("gzip, chunked"): 501 unsupported_transfer_encoding
//                       (§6.1: npacd decodes no other coding); with Content-Length: 400
//                       (§6.3 item 3: a smuggling attempt); in HTTP/1.0: 400 (§6.1)
//   Host                exactly one in HTTP/1.1, at most one in HTTP/1.0, holding only
//                       what a uri-host and port may: else 400 missing_host / bad_host
//                       (§3.2)
//   Authorization       at most one: two are 400 duplicate_authorization (RFC 9110 §5.3:
//                       it is not a list, so which one counts would be a guess)
//
// Every refusal closes the connection after its answer (§6.3: the framing is lost).
// Pure: no I/O, no state, so the HTTP framing fuzz target (fuzz/fuzz_http_framing.cc)
// drives it on whatever Beast's parser makes of raw bytes.
//
// Threading: none (a pure function).
#pragma once

#include <optional>
#include <string>

#include <boost/beast/http.hpp>

namespace npac::npacd {

struct FramingRefusal {
  boost::beast::http::status status;
  std::string code;     // bad_transfer_encoding, unsupported_transfer_encoding, missing_host, ...
  std::string message;  // a sentence for the JSON error, client bytes shown printable
};

// nullopt: the header frames its body unambiguously and the request may be read on.
std::optional<FramingRefusal> checkRequestFraming(
    const boost::beast::http::request_header<boost::beast::http::fields>& header);

}  // namespace npac::npacd
