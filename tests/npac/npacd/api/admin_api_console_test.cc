// The console's server side in-process over real TCP: GET /v1/whoami for each role, and
// the page's files compiled into npacd (embedded_files.h) served at /console/ with their
// types and the security headers, and nothing else served under /console/.
#include <catch2/catch.hpp>

#include <string>

#include "npac/npacd/api/embedded_files.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using testing::AdminApiFixture;
using testing::Reply;
using V = http::verb;
using db::TokenRole;

constexpr const char* kExpectedCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

// A GET with every header of the answer kept (the fixture's Reply keeps only a few).
http::response<http::string_body> get(const AdminApiFixture& f, const std::string& target,
                                      const std::optional<std::string>& authorization = std::nullopt) {
  boost::asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), f.port));
  http::request<http::string_body> request{V::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  if (authorization) request.set(http::field::authorization, *authorization);
  http::write(stream, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  return response;
}

std::string field(const http::response<http::string_body>& response, const std::string& name) {
  auto it = response.find(name);
  return it == response.end() ? "" : std::string(it->value());
}

void checkSecurityHeaders(const http::response<http::string_body>& response) {
  CHECK(field(response, "Content-Security-Policy") == kExpectedCsp);
  CHECK(field(response, "X-Content-Type-Options") == "nosniff");
  CHECK(field(response, "Cache-Control") == "no-cache");
  CHECK(field(response, "Referrer-Policy") == "no-referrer");
}

TEST_CASE("GET /v1/whoami answers the name and role of each role's token") {
  AdminApiFixture f;
  for (auto [name, role, text] : {std::tuple{"watcher", TokenRole::kReader, "reader"},
                                  std::tuple{"feeder", TokenRole::kApplication, "application"},
                                  std::tuple{"admin", TokenRole::kOperator, "operator"}}) {
    INFO(name);
    Reply r = f.callWith("Bearer " + f.token(name, role), V::get, "/v1/whoami");
    INFO(r.raw);
    REQUIRE(r.status == 200);
    CHECK(r.body == nlohmann::json{{"name", name}, {"role", text}});
  }
}

TEST_CASE("GET /v1/whoami without a token is 401") {
  AdminApiFixture f;
  Reply r = f.callWith(std::nullopt, V::get, "/v1/whoami");
  CHECK(r.status == 401);
  CHECK(r.errorCode() == "unauthenticated");
  CHECK(f.callWith(std::string("Bearer npac_") + std::string(64, '0'), V::get, "/v1/whoami").status == 401);
}

TEST_CASE("Every embedded console file is served without a token with its type and the security headers") {
  AdminApiFixture f;
  const auto files = consoleFiles();
  REQUIRE(!files.empty());
  bool has_index = false;
  for (const EmbeddedFile& file : files) {
    const std::string name(file.name);
    INFO(name);
    has_index = has_index || name == "index.html";
    auto response = get(f, "/console/" + name);
    REQUIRE(response.result_int() == 200);
    CHECK(response.body() == std::string(file.bytes));
    CHECK(field(response, "Content-Type") == std::string(file.content_type));
    if (name.ends_with(".html")) CHECK(file.content_type == "text/html; charset=utf-8");
    if (name.ends_with(".js")) CHECK(file.content_type == "text/javascript; charset=utf-8");
    if (name.ends_with(".css")) CHECK(file.content_type == "text/css; charset=utf-8");
    checkSecurityHeaders(response);
  }
  CHECK(has_index);
}

TEST_CASE("GET /console redirects 308 to /console/ which serves index.html") {
  AdminApiFixture f;
  auto redirect = get(f, "/console");
  CHECK(redirect.result_int() == 308);
  CHECK(field(redirect, "Location") == "/console/");
  CHECK(get(f, "/console?token=x").result_int() == 308);
  CHECK(field(get(f, "/console?x=1"), "Location") == "/console/?x=1");
  auto index = get(f, "/console/");
  REQUIRE(index.result_int() == 200);
  CHECK(field(index, "Content-Type") == "text/html; charset=utf-8");
  CHECK(index.body() == get(f, "/console/index.html").body());
  checkSecurityHeaders(index);
}

TEST_CASE("Names under /console/ that are not its files are 404 to a caller without a token") {
  AdminApiFixture f;
  for (const std::string target :
       {"/console/../x", "/console/%2e%2e", "/console/%2E%2E%2Findex.html", "/console/..%2f..%2fetc%2fpasswd",
        "/console/nope.js", "/console/index.html/x", "/console/sub/index.html", "/console/.hidden",
        "/console/INDEX.HTML", "/console/index.html%00"}) {
    INFO(target);
    Reply r = f.callWith(std::nullopt, V::get, target);
    INFO(r.raw);
    CHECK(r.status == 404);
    CHECK((r.errorCode() == "console_file_not_found" || r.errorCode() == "unknown_route"));
  }
  // The refusal names the files there are, so a typo is easy to see.
  Reply r = f.callWith(std::nullopt, V::get, "/console/nope.js");
  CHECK_THAT(r.errorMessage(), Catch::Contains("index.html"));
  // A path outside /console/ still needs a token to be told it does not exist.
  CHECK(f.callWith(std::nullopt, V::get, "/consoles/index.html").status == 401);
  CHECK(f.api->accessCounters().unauthenticated == 1);
}

TEST_CASE("A console file asked with another method is 405") {
  AdminApiFixture f;
  CHECK(f.callWith(std::nullopt, V::post, "/console/index.html", "{}").status == 405);
  CHECK(f.callWith(std::nullopt, V::delete_, "/console").status == 405);
}

}  // namespace
}  // namespace npac::npacd
