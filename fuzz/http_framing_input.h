// One HTTP framing input: raw bytes as a client would send them on one admin API
// connection, read request after request the way HttpSession reads them — Beast's parser
// up to the end of a header (8 KiB limit), checkRequestFraming (npac/npacd/api/
// http_framing.h), then the body (1 MiB limit) — until the bytes run out, a parse error,
// or a refusal closes the connection. Shared by the libFuzzer target fuzz_http_framing
// and a Catch2 replay of smuggling attempts (tests/npac/npacd/api/admin_api_framing_test.cc), so
// `make test` covers the same path without clang.
//
// Oracles (std::abort on violation, which libFuzzer reports as a crash): a header the
// check lets through frames its body one way only —
//  - Transfer-Encoding only in HTTP/1.1, never with Content-Length, and then Beast reads
//    the body chunked; without it Beast never does;
//  - exactly one Host in HTTP/1.1 (at most one in 1.0), at most one Authorization;
// and a refusal is a 400 or 501 with a code and a printable ASCII message whose JSON
// answer parses. After a refusal nothing more is read: the bytes after it never run.
//
// Threading: a pure function of its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "npac/npacd/api/http_framing.h"
#include "npac/npacd/api/http_message.h"

namespace npac::fuzz {

struct FramingRun {
  std::vector<std::string> targets;               // the requests handed on, in order
  std::optional<npacd::FramingRefusal> refusal;   // the refusal that ended the connection
  bool parse_error = false;                       // Beast refused the bytes (400 bad_http)
};

inline void checkAcceptedHeader(const boost::beast::http::request_parser<boost::beast::http::string_body>& parser) {
  namespace http = boost::beast::http;
  const auto& header = parser.get();
  const bool transfer_encoding = header.find(http::field::transfer_encoding) != header.end();
  if (transfer_encoding) {
    if (header.version() < 11 || header.find(http::field::content_length) != header.end() || !parser.chunked()) {
      std::abort();
    }
  } else if (parser.chunked()) {
    std::abort();
  }
  const std::size_t hosts = header.count(http::field::host);
  if (hosts > 1 || (header.version() >= 11 && hosts != 1)) std::abort();
  if (header.count(http::field::authorization) > 1) std::abort();
}

inline void checkRefusal(const npacd::FramingRefusal& refusal) {
  namespace http = boost::beast::http;
  if (refusal.status != http::status::bad_request && refusal.status != http::status::not_implemented) std::abort();
  if (refusal.code.empty() || refusal.message.empty()) std::abort();
  for (char c : refusal.message) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) std::abort();
  }
  const npacd::HttpResponse answer = npacd::jsonErrorResponse(refusal.status, refusal.code, refusal.message);
  if (nlohmann::json::parse(answer.body(), nullptr, false).is_discarded()) std::abort();
}

inline FramingRun runHttpFramingInput(const std::uint8_t* data, std::size_t size) {
  namespace http = boost::beast::http;
  constexpr std::size_t kBodyLimit = 1024 * 1024;  // HttpServer::Options::body_limit
  FramingRun run;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kBodyLimit);
    boost::beast::error_code ec;
    // The header: Beast stops at its end (eager off), as async_read_header does.
    while (!parser.is_header_done() && !rest.empty()) {
      const std::size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
      if (ec == http::error::need_more) ec = {};
      if (ec) {
        run.parse_error = true;
        return run;
      }
      if (used == 0) return run;  // the header is not complete: the client would send more
      rest.remove_prefix(used);
    }
    if (!parser.is_header_done()) return run;
    if (std::optional<npacd::FramingRefusal> refused = npacd::checkRequestFraming(parser.get().base())) {
      checkRefusal(*refused);
      run.refusal = std::move(refused);
      return run;  // closed after the answer: nothing after it is read
    }
    checkAcceptedHeader(parser);
    parser.eager(true);
    while (!parser.is_done() && !rest.empty()) {
      const std::size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
      if (ec == http::error::need_more) ec = {};
      if (ec) {
        run.parse_error = true;
        return run;
      }
      if (used == 0) return run;
      rest.remove_prefix(used);
    }
    if (!parser.is_done()) return run;
    run.targets.emplace_back(parser.get().target());
  }
  return run;
}

}  // namespace npac::fuzz
