// The admin API's request parsing on hostile input, in-process: the same path the
// fuzz_admin_api target drives (fuzz/admin_api_input.h), replayed over a handful of nasty
// inputs so it runs with every `make test`, and parseApiRequest's answers checked.
#include <catch2/catch.hpp>

#include "fuzz/admin_api_input.h"
#include "npac/npacd/api/http_adapter.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/json.h"

namespace npac::npacd {
namespace {

namespace http = boost::beast::http;

HttpRequest request(const std::string& target, const std::string& body = "", const std::string& actor = "") {
  HttpRequest r{http::verb::post, target, 11};
  if (!actor.empty()) r.set("X-Npac-Actor", actor);
  r.body() = body;
  return r;
}

// The code of parseApiRequest's refusal, "" when the request is usable.
std::string refusal(const HttpRequest& r) {
  ApiRequest parsed;
  const Status refused = parseApiRequest(r, &parsed);
  return refused.isOk() ? "" : describe(refused.code());
}

}  // namespace

TEST_CASE("Hostile admin API inputs run through the fuzz target's path without a crash") {
  const std::vector<std::string> inputs = {
      "",
      "\n",
      "GET /v1/%ff HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/providers/%ff%ff%ff%ff HTTP/1.1\r\nHost: x\r\n\r\n",
      "GET /v1/audit-log?%ff=%fe HTTP/1.1\r\nHost: x\r\nX-Npac-Actor: op\xff\r\n\r\n",
      "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n{\"spid\":\"\xff\"}",
      "/v1/%\n{}",
      "/v1/%f\n{}",
      "/v1/a%00b?x=%ed%a0%80\n{}",                       // NUL, a UTF-8 encoded surrogate
      "/v1/messages\n{\"messages\":[{\"spid\":\"0001\",\"idempotency_key\":\"\\u0000\"}]}",
      "/v1/messages\n{\"messages\":" + std::string(200, '[') + std::string(200, ']') + "}",
      "/v1/x\n{\"name\":\"\\ud800\"}",                   // a lone surrogate escape
      "/v1/x\n{\"information\":\"30800000\",\"result\":\"zz\",\"at\":\"2026-13-40T99:99:99Z\"}",
      "/v1/x\n{\"function\":[1,\"queries\",null]}",
      "/v1/broadcasts\n{\"function\":\"notifications\",\"to\":[\"0001\",\"0001\",null]}",
      "/v1/broadcasts\n{\"function\":\"queries\",\"to\":\"all\",\"operation\":\"get\",\"object_class\":1,"
      "\"instance\":{\"non_specific\":\"00\"}}",
      "/v1/broadcasts\n{\"function\":[],\"to\":" + std::string(300, '[') + std::string(300, ']') + "}",
      std::string("/v1/\xc0\xaf\n\xf4\x90\x80\x80"),    // overlong '/', above U+10FFFF
  };
  for (const std::string& input : inputs) {
    INFO(printableAscii(input));
    fuzz::runAdminApiInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    SUCCEED();
  }
}

TEST_CASE("Invalid UTF-8 in each part of a request is refused as bad_utf8") {
  CHECK(refusal(request("/v1/%ff")) == "bad_utf8");
  CHECK(refusal(request("/v1/%c0%af")) == "bad_utf8");        // overlong
  CHECK(refusal(request("/v1/x?spid=%ed%a0%80")) == "bad_utf8");  // surrogate
  CHECK(refusal(request("/v1/x?%f8=1")) == "bad_utf8");
  CHECK(refusal(request("/v1/x", "", std::string("op\xff"))) == "bad_utf8");
  CHECK(refusal(request("/v1/x", std::string("{\"a\":\"\xe2\x82\"}"))) == "bad_utf8");  // truncated
  CHECK(refusal(request("/v1/caf%c3%a9?n=%e2%82%ac", "{\"a\":\"\xf0\x9f\x98\x80\"}", "jos\xc3\xa9")) == "");
}

TEST_CASE("The UTF-8 check names the offset and byte of the first bad sequence") {
  CHECK_FALSE(invalidUtf8At("plain ascii").has_value());
  CHECK_FALSE(invalidUtf8At("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf").has_value());
  CHECK(invalidUtf8At("ab\xff") == 2u);
  CHECK(invalidUtf8At("\x80") == 0u);
  CHECK(invalidUtf8At("a\xe0\x80\x80") == 1u);  // overlong 3-byte
  CHECK(invalidUtf8At("\xf4\x90\x80\x80") == 0u);  // above U+10FFFF
  CHECK(invalidUtf8At("xy\xed\xbf\xbf") == 2u);  // surrogate U+DFFF
  CHECK(describeInvalidUtf8("the X-Npac-Actor header", "ab\xff", 2) ==
        "the X-Npac-Actor header is not valid UTF-8 (byte 0xff at offset 2)");
}

TEST_CASE("A target that is not a path or has a broken percent escape is refused as bad_target") {
  CHECK(refusal(request("v1/providers")) == "bad_target");
  CHECK(refusal(request("/v1/%zz")) == "bad_target");
  CHECK(refusal(request("/v1/%f")) == "bad_target");
  CHECK(refusal(request("/v1/x", "[1]")) == "bad_json");
  CHECK(refusal(request("/v1/x", "{")) == "bad_json");
}

TEST_CASE("Every code of the request group is answered under its own name with the Status's message") {
  int seen = 0;
  for (std::uint16_t n = 0; std::string(codeName(static_cast<StatusCode>(n))) != "kUnknown"; ++n) {
    const auto code = static_cast<StatusCode>(n);
    if (layerOf(code) != StatusLayer::kRequest) continue;
    ++seen;
    INFO(codeName(code));
    const ApiResponse answer = statusResponse(Status::error(code, "what was wrong"), "POST /v1/x");
    const nlohmann::json body = nlohmann::json::parse(answer.body);
    CHECK(body["error"]["code"] == describe(code));
    CHECK(body["error"]["message"] == "POST /v1/x: what was wrong");
    ApiStatus expected = ApiStatus::kBadRequest;
    if (code == StatusCode::kProviderNotFound) expected = ApiStatus::kNotFound;
    if (code == StatusCode::kFunctionNotAllowed || code == StatusCode::kNoRecipients) expected = ApiStatus::kConflict;
    if (code == StatusCode::kTooManyRecipients) expected = ApiStatus::kPayloadTooLarge;
    CHECK(answer.status == expected);
  }
  CHECK(seen == 19);
}

}  // namespace npac::npacd
