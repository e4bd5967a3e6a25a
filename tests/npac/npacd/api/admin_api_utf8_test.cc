// The admin API never dies of a request: invalid UTF-8 in a path segment, a query value
// or the X-Npac-Actor header is refused 400 bad_utf8 naming the part (JSON text is UTF-8,
// RFC 8259 §8.1), and a row already stored with bad bytes is listed with them replaced.
// The real npacd binary, real SQLite, real HTTP on loopback; after every bad request the
// same process still answers GET /v1/providers.
#include "tests/npac/npacd/npacd_fixture.h"

#include "db/database.h"
#include "db/statement.h"

using namespace npacd_test;

namespace {

// The admin API's port, read back from npacd's latest start-up log line.
std::uint16_t apiPort(const NpacdProcess& npacd) {
  const std::regex ready(R"(admin API on 127\.0\.0\.1:(\d+))");
  const std::string log = npacd.log();
  std::string last;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), ready); it != std::sregex_iterator(); ++it) {
    last = (*it)[1];
  }
  REQUIRE(!last.empty());
  return static_cast<std::uint16_t>(std::stoi(last));
}

struct RawReply {
  int status = 0;  // 0: the connection closed without an answer
  Json body;
  std::string raw;
};

// One request with raw bytes in the target and (optionally) the actor header; Beast's
// client would refuse neither, but the test builds the request text itself so nothing
// in between re-encodes the bytes.
RawReply rawCall(const NpacdProcess& npacd, const std::string& method, const std::string& target,
                 const std::string& actor = "", const std::string& body = "") {
  RawReply reply;
  try {
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.expires_after(10s);
    stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), apiPort(npacd)));
    std::string request = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    request += "Authorization: Bearer " + npacd.token() + "\r\n";
    if (!actor.empty()) request += "X-Npac-Actor: " + actor + "\r\n";
    if (!body.empty()) request += "Content-Type: application/json\r\n";
    request += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    boost::asio::write(stream, boost::asio::buffer(request));
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    reply.status = static_cast<int>(response.result_int());
    reply.raw = response.body();
    reply.body = Json::parse(reply.raw, nullptr, false);
  } catch (const std::exception& e) {
    reply.raw = e.what();
  }
  return reply;
}

// The answer is 400 bad_utf8 and its message names `part`; the server is still up.
void checkRefusedAndAlive(const NpacdProcess& npacd, const RawReply& reply, const std::string& part) {
  INFO(reply.raw);
  CHECK(reply.status == 400);
  REQUIRE(reply.body.is_object());
  CHECK(reply.body["error"]["code"] == "bad_utf8");
  CHECK_THAT(reply.body["error"]["message"].get<std::string>(), Catch::Contains(part));
  CHECK(rawCall(npacd, "GET", "/v1/providers").status == 200);
}

}  // namespace

TEST_CASE("A path segment that decodes to invalid UTF-8 is refused and npacd keeps answering") {
  NpacdProcess npacd;
  checkRefusedAndAlive(npacd, rawCall(npacd, "GET", "/v1/%ff"), "path segment 2");
}

TEST_CASE("A provider SPID of invalid UTF-8 bytes is refused and npacd keeps answering") {
  NpacdProcess npacd;
  checkRefusedAndAlive(npacd, rawCall(npacd, "GET", "/v1/providers/%ff%ff%ff%ff"), "path segment 3");
}

TEST_CASE("A tunable name of invalid UTF-8 is refused and npacd keeps answering") {
  NpacdProcess npacd;
  checkRefusedAndAlive(npacd, rawCall(npacd, "GET", "/v1/tunables/%ff"), "path segment 3");
}

TEST_CASE("A message id of invalid UTF-8 is refused and npacd keeps answering") {
  NpacdProcess npacd;
  checkRefusedAndAlive(npacd, rawCall(npacd, "GET", "/v1/messages/%ff"), "path segment 3");
}

TEST_CASE("A query value of invalid UTF-8 is refused and npacd keeps answering") {
  NpacdProcess npacd;
  checkRefusedAndAlive(npacd, rawCall(npacd, "GET", "/v1/association-log?spid=%ff"), "query value of 'spid'");
  checkRefusedAndAlive(npacd, rawCall(npacd, "GET", "/v1/tunables?spid=%c3%28"), "query value of 'spid'");
}

TEST_CASE("A query key of invalid UTF-8 is refused and npacd keeps answering") {
  NpacdProcess npacd;
  checkRefusedAndAlive(npacd, rawCall(npacd, "GET", "/v1/audit-log?%ff=1"), "query key");
}

TEST_CASE("An X-Npac-Actor header with byte 0xFF is refused and nothing reaches the audit log") {
  NpacdProcess npacd;
  RawReply r = rawCall(npacd, "POST", "/v1/providers", std::string("op\xff"),
                       R"({"spid":"0001","name":"P","system_type":"soa"})");
  checkRefusedAndAlive(npacd, r, "X-Npac-Actor");
  CHECK(npacd.call(http::verb::get, "/v1/providers/0001").status == 404);
  RawReply audit = rawCall(npacd, "GET", "/v1/audit-log");
  INFO(audit.raw);
  REQUIRE(audit.status == 200);
  for (const Json& entry : audit.body["entries"]) CHECK(entry["action"] != "provider.add");
}

TEST_CASE("A body string of invalid UTF-8 is refused as bad_utf8 naming the body") {
  NpacdProcess npacd;
  RawReply r = rawCall(npacd, "POST", "/v1/providers", "ops",
                       std::string("{\"spid\":\"0001\",\"name\":\"P\xff\",\"system_type\":\"soa\"}"));
  checkRefusedAndAlive(npacd, r, "request body");
}

TEST_CASE("An audit row already stored with byte 0xFF in its actor is listed escaped and npacd survives") {
  NpacdProcess npacd;
  REQUIRE(npacd.call(http::verb::post, "/v1/providers",
                     Json{{"spid", "0001"}, {"name", "P"}, {"system_type", "soa"}}).status == 201);
  npacd.stopHard();
  {
    // Poison as an older npacd could have stored it: written with SQLite directly.
    auto db = npac::db::Database::open((npacd.dir() / "npacd.db").string());
    REQUIRE(db.isOk());
    auto insert = (*db)->prepare(
        "INSERT INTO audit_log(at, actor, action, subject, old_value, new_value) VALUES(1, ?, 'provider.add', ?, NULL, ?)");
    REQUIRE(insert.isOk());
    insert->bindText(0, std::string("bad\xff" "actor")).bindText(1, std::string("provider \xfe")).bindText(2, "x");
    REQUIRE(insert->run().isOk());
  }
  npacd.start();
  for (int i = 0; i < 2; ++i) {  // listed twice: the first answer did not take the server down
    RawReply audit = rawCall(npacd, "GET", "/v1/audit-log");
    INFO(audit.raw);
    REQUIRE(audit.status == 200);
    // Newest first: the poisoned row was written last.
    REQUIRE(!audit.body["entries"].empty());
    CHECK(audit.body["entries"][0]["actor"] == "bad\xEF\xBF\xBD" "actor");  // U+FFFD replaces 0xFF
    CHECK(audit.body["entries"][0]["subject"] == "provider \xEF\xBF\xBD");
  }
  CHECK(rawCall(npacd, "GET", "/v1/providers").status == 200);
}
