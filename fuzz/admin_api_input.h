// One admin API input, run through everything npacd does with a request before a route
// touches SQLite or the core: Beast's HTTP parser, parseApiRequest (target split,
// percent-decoding, UTF-8 checks of path, query, X-Npac-Actor and body, JSON parse), the
// body parsers of api_json.h, and the JSON answer built from any error. Shared by the
// libFuzzer target fuzz_admin_api and a Catch2 replay of hostile inputs, so `make test`
// covers the same path without clang.
//
// Oracles (std::abort on violation, which libFuzzer reports as a crash):
//  - a string invalidUtf8At() accepts is one nlohmann::json dumps strictly without throwing;
//  - every accepted request's strings are UTF-8, and every answer body is valid JSON;
//  - parseBearerAuthorization (npac/npacd/api/access.h) either finds a token — one word
//    of printable ASCII within the header limit — or gives a reason in printable ASCII;
//  - a broadcast body resolves only to providers it may reach, each row with its PDU;
//  - parseEventInterval (event_stream.h) accepts only a value within its range, and a
//    server-sent event written from any data has no line that is not id/event/data.
//
// Threading: a pure function of its input.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "npac/npacd/api/access.h"
#include "npac/npacd/api/broadcast.h"
#include "npac/npacd/api/event_stream.h"
#include "npac/npacd/api/http_adapter.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/json.h"

namespace npac::fuzz {

inline void requireUtf8(std::string_view text) {
  if (npacd::invalidUtf8At(text)) std::abort();
  try {
    (void)nlohmann::json(std::string(text)).dump();  // strict: throws on bad UTF-8
  } catch (const nlohmann::json::exception&) {
    std::abort();  // the validator and nlohmann disagree
  }
}

inline void requireJsonAnswer(const npacd::ApiResponse& response) {
  if (nlohmann::json::parse(response.body, nullptr, false).is_discarded()) std::abort();
}

// A parser's refusal: a code of the request group (never a storage or internal one), and
// the answer statusResponse makes of it a 4xx with a JSON body naming that code.
inline void requireRefusal(const Status& refused) {
  if (refused.isOk() || refused.layer() != StatusLayer::kRequest) std::abort();
  const npacd::ApiResponse response = npacd::statusResponse(refused);
  const unsigned code = static_cast<unsigned>(response.status);
  if (code < 400 || code > 499) std::abort();
  if (response.body.find(describe(refused.code())) == std::string::npos) std::abort();
  requireJsonAnswer(response);
}

// POST /v1/broadcasts' body, and its recipients among three fixed providers: whoever it
// resolves to is provisioned, named by the request, and (for "all") enabled and of a
// system type that takes the functions; every broadcast row carries the same PDU.
inline void checkBroadcast(const nlohmann::json& body) {
  auto broadcast = npacd::parseBroadcast(body);
  if (!broadcast.isOk()) return requireRefusal(broadcast.status());
  if (!broadcast->content.message.spid.empty()) std::abort();
  if (!broadcast->to_all && broadcast->spids.empty()) std::abort();
  const std::vector<db::ServiceProvider> provisioned{{"0001", "S", db::SystemType::kSoa, true},
                                                     {"0002", "L", db::SystemType::kLsms, true},
                                                     {"0003", "D", db::SystemType::kLsms, false}};
  auto recipients = npacd::resolveRecipients(broadcast.value(), provisioned);
  if (!recipients.isOk()) return requireRefusal(recipients.status());
  const std::uint32_t mask = broadcast->content.message.function_mask;
  for (const std::string& spid : recipients.value()) {
    auto it = std::find_if(provisioned.begin(), provisioned.end(), [&](const auto& p) { return p.spid == spid; });
    if (it == provisioned.end() || !npacd::systemTypeTakes(it->system_type, mask)) std::abort();
    if (broadcast->to_all && !it->enabled) std::abort();
  }
  for (const npacd::OutboundMessage& row : npacd::broadcastMessages(broadcast.value(), recipients.value())) {
    if (row.message.pdu != broadcast->content.message.pdu) std::abort();
  }
}

// What the routes do with a parsed body: every parser, every error answer.
inline void parseBodies(const nlohmann::json& body) {
  auto messages = npacd::parseMessages(body);
  if (!messages.isOk()) requireRefusal(messages.status());
  auto response = npacd::parseInboundResponse(body);
  if (!response.isOk()) requireRefusal(response.status());
  checkBroadcast(body);
  if (body.contains("function")) {
    auto functions = npacd::parseFunctions(body["function"]);
    if (!functions.isOk()) requireRefusal(functions.status());
  }
  for (const char* field : {"information", "result", "parameter"}) {
    if (body.contains(field)) {
      auto ber = npacd::parseBerHex(body[field], field);
      if (!ber.isOk()) requireRefusal(ber.status());
    }
  }
  for (const char* field : {"not_before", "not_after", "at"}) {
    if (body.contains(field)) (void)npacd::parseTime(body[field]);
  }
}

// The Authorization parser on `header` (nullopt: no header).
inline void checkAuthorization(std::optional<std::string_view> header) {
  const npacd::BearerCredentials credentials = npacd::parseBearerAuthorization(header);
  auto printable = [](std::string_view text) {
    for (char c : text) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return false;
    }
    return true;
  };
  if (credentials.ok()) {
    if (!header || credentials.token.empty() || credentials.token.size() > npacd::kMaxAuthorizationBytes ||
        !printable(credentials.token) || credentials.token.find(' ') != std::string::npos) {
      std::abort();
    }
    return;
  }
  if (!credentials.token.empty() || !printable(credentials.error)) std::abort();
  requireJsonAnswer(npacd::errorResponse(npacd::ApiStatus::kUnauthorized, "unauthenticated", credentials.error));
}

// GET /v1/events's interval_ms: in range when accepted, a JSON-safe reason when not.
inline void checkEventInterval(const std::optional<std::string>& text) {
  std::chrono::milliseconds interval{};
  if (std::optional<std::string> error = npacd::parseEventInterval(text, &interval)) {
    requireJsonAnswer(npacd::errorResponse(npacd::ApiStatus::kBadRequest, "invalid_interval", *error));
    return;
  }
  if (interval < npacd::kMinEventInterval || interval > npacd::kMaxEventInterval) std::abort();
}

// An event written from `data`: every line is id, event or data, and it ends the event.
inline void checkServerSentEvent(std::string_view data) {
  const std::string event = npacd::formatServerSentEvent(7, "providers", data);
  if (!event.ends_with("\n\n")) std::abort();
  std::string_view rest(event.data(), event.size() - 1);  // the blank line's own "\n" off
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    if (line.find('\r') != std::string_view::npos) std::abort();
    if (!line.starts_with("id: ") && !line.starts_with("event: ") && !line.starts_with("data: ")) std::abort();
    rest.remove_prefix(eol + 1);
  }
}

inline void checkRequest(const npacd::HttpRequest& request) {
  if (auto it = request.find(boost::beast::http::field::authorization); it != request.end()) {
    checkAuthorization(std::string_view(it->value().data(), it->value().size()));
  } else {
    checkAuthorization(std::nullopt);
  }
  npacd::ApiRequest parsed;
  if (Status refused = npacd::parseApiRequest(request, &parsed); !refused.isOk()) return requireRefusal(refused);
  for (const std::string& segment : parsed.path) requireUtf8(segment);
  for (const auto& [key, value] : parsed.query) {
    requireUtf8(key);
    requireUtf8(value);
  }
  requireUtf8(parsed.header_actor);
  requireUtf8(parsed.actor());
  checkEventInterval(parsed.queryValue("interval_ms"));
  parseBodies(parsed.body);
  requireJsonAnswer(npacd::jsonResponse(npacd::ApiStatus::kOk, parsed.body));
}

// `data` two ways: as the raw bytes of an HTTP/1.1 request (Beast parses it as the
// server's session does), and as "target\nbody" set directly on a request, so bytes
// Beast would refuse in a request line still reach parseTarget.
inline void runAdminApiInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  boost::beast::http::request_parser<boost::beast::http::string_body> parser;
  parser.eager(true);
  parser.body_limit(64 * 1024);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(input.data(), input.size()), ec);
  if (!ec && parser.is_done()) checkRequest(parser.get());

  const std::size_t newline = input.find('\n');
  npacd::HttpRequest direct{boost::beast::http::verb::post, "/", 11};
  direct.target(std::string(input.substr(0, newline)));
  if (newline != std::string_view::npos) direct.body() = std::string(input.substr(newline + 1));
  checkRequest(direct);

  // The whole input as an Authorization value, as a header could carry it, as an
  // interval_ms value and as the data of an event.
  checkAuthorization(input);
  checkEventInterval(std::string(input));
  checkServerSentEvent(input);

  // The validator against nlohmann on the whole input.
  if (!npacd::invalidUtf8At(input)) requireUtf8(input);
  else (void)npacd::describeInvalidUtf8("input", input, *npacd::invalidUtf8At(input));
}

}  // namespace npac::fuzz
