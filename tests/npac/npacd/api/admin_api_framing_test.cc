// How the admin API frames a request before it reads the body (http_framing.h, RFC 9112
// §3.2, §6.1, §6.3): a Transfer-Encoding it cannot take, Transfer-Encoding with
// Content-Length, no or two Host headers, two Authorization headers are refused and the
// connection closed, so a body never runs as a request of its own; and what every answer
// carries (Cache-Control: no-store, X-Content-Type-Options: nosniff). Real HttpServer on
// loopback, raw bytes on a real TCP connection; its test handler answers 200 with the
// target it was asked for, so a smuggled request shows in what comes back.
#include "tests/npac/npacd/api/admin_api_fixture.h"
#include "tests/npac/npacd/api/http_server_fixture.h"

#include "fuzz/http_framing_input.h"
#include "npac/npacd/api/http_framing.h"

namespace npac::npacd {
namespace {

using namespace testing;

struct RawAnswer {
  int status = 0;
  http::fields fields;
  std::string body;
  std::string errorCode() const {
    auto json = nlohmann::json::parse(body, nullptr, false);
    return json.is_object() && json.contains("error") ? json["error"].value("code", "") : "";
  }
  std::string field(http::field name) const {
    auto it = fields.find(name);
    return it == fields.end() ? "" : std::string(it->value());
  }
  std::string field(const std::string& name) const {
    auto it = fields.find(name);
    return it == fields.end() ? "" : std::string(it->value());
  }
};

// Every answer in `bytes`, in order, as a client would read them off the connection.
std::vector<RawAnswer> answersIn(const std::string& bytes) {
  std::vector<RawAnswer> answers;
  std::string_view rest(bytes);
  while (!rest.empty()) {
    http::response_parser<http::string_body> parser;
    parser.eager(true);
    beast::error_code ec;
    const std::size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
    if (ec || !parser.is_done()) break;
    const auto& response = parser.get();
    RawAnswer answer{static_cast<int>(response.result_int()), {}, response.body()};
    for (const auto& f : response) answer.fields.insert(f.name_string(), f.value());
    answers.push_back(std::move(answer));
    rest.remove_prefix(used);
  }
  return answers;
}

// `head` (a request line and header fields, each line ending CRLF, without the blank
// line), a blank line, then `body`: what the server answered before it closed.
std::vector<RawAnswer> answersTo(const TestServer& server, const std::string& head, const std::string& body = "") {
  std::optional<std::string> received = sendRaw(server.port(), head + "\r\n" + body);
  REQUIRE(received.has_value());  // closed within 5 s
  return answersIn(*received);
}

// A request whose body is itself a request: run, it would be answered with its target.
const std::string kSmuggled = "GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

// One answer, the refusal, and nothing after it (answersTo() saw the connection close).
void checkRefusedAlone(const std::vector<RawAnswer>& answers, int status, const std::string& code) {
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].status == status);
  CHECK(answers[0].errorCode() == code);
  CHECK(answers[0].body.find("/smuggled") == std::string::npos);
}

}  // namespace

TEST_CASE("A request whose last transfer coding is not chunked is answered 400 and its body never runs as a request") {
  const std::string coding = GENERATE(as<std::string>{}, "gzip", "chunked, gzip", "xchunked", "identity", "chunked;x=1");
  INFO("Transfer-Encoding: " << coding);
  TestServer server(HttpServer::Options{});
  auto answers = answersTo(server, "POST /first HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: " + coding + "\r\n",
                          kSmuggled);
  checkRefusedAlone(answers, 400, "bad_transfer_encoding");
  CHECK(server.counters().refused_framing == 1);
}

TEST_CASE("Transfer-Encoding with Content-Length is answered 400 in either order and with any coding") {
  // Beast refuses some of them itself as it reads the header; the code names the field
  // found in conflict with the one before it.
  const auto [fields, code] = GENERATE(table<std::string, std::string>({
      {"Content-Length: 44\r\nTransfer-Encoding: chunked\r\n", "bad_transfer_encoding"},
      {"Transfer-Encoding: chunked\r\nContent-Length: 44\r\n", "bad_content_length"},
      {"Transfer-Encoding: gzip\r\nContent-Length: 44\r\n", "bad_transfer_encoding"},
      {"Content-Length: 44\r\nTransfer-Encoding: gzip\r\n", "bad_transfer_encoding"},
      {"Content-Length: 44\r\nTransfer-Encoding: identity\r\n", "bad_transfer_encoding"},
  }));
  INFO(fields);
  TestServer server(HttpServer::Options{});
  auto answers = answersTo(server, "POST /first HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields, kSmuggled);
  checkRefusedAlone(answers, 400, code);
}

TEST_CASE("Chunked applied twice is answered 400 bad_transfer_encoding") {
  TestServer server(HttpServer::Options{});
  const std::string fields = GENERATE(as<std::string>{}, "Transfer-Encoding: chunked, chunked\r\n",
                                      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n");
  INFO(fields);
  auto answers = answersTo(server, "POST /first HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields, kSmuggled);
  checkRefusedAlone(answers, 400, "bad_transfer_encoding");
}

TEST_CASE("Another transfer coding before chunked is answered 501 unsupported_transfer_encoding") {
  TestServer server(HttpServer::Options{});
  const std::string fields = GENERATE(as<std::string>{}, "Transfer-Encoding: gzip, chunked\r\n",
                                      "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n");
  INFO(fields);
  auto answers = answersTo(server, "POST /first HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields, "0\r\n\r\n" + kSmuggled);
  checkRefusedAlone(answers, 501, "unsupported_transfer_encoding");
}

TEST_CASE("An HTTP/1.0 request with Transfer-Encoding is answered 400 bad_transfer_encoding") {
  TestServer server(HttpServer::Options{});
  auto answers = answersTo(server, "POST /first HTTP/1.0\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n" + kSmuggled);
  checkRefusedAlone(answers, 400, "bad_transfer_encoding");
}

TEST_CASE("A chunked request body is read as its body and the next request on the connection is answered") {
  TestServer server(HttpServer::Options{});
  auto answers = answersTo(server,
                          "POST /first HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n",
                          "5\r\nhello\r\n0\r\n\r\nGET /second HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  REQUIRE(answers.size() == 2);
  CHECK(answers[0].status == 200);
  CHECK(nlohmann::json::parse(answers[0].body)["target"] == "/first");
  CHECK(answers[1].status == 200);
  CHECK(nlohmann::json::parse(answers[1].body)["target"] == "/second");
}

TEST_CASE("An HTTP/1.1 request without Host is answered 400 missing_host") {
  TestServer server(HttpServer::Options{});
  auto answers = answersTo(server, "GET /first HTTP/1.1\r\n", kSmuggled);
  checkRefusedAlone(answers, 400, "missing_host");
}

TEST_CASE("An HTTP/1.0 request without Host is answered") {
  TestServer server(HttpServer::Options{});
  auto answers = answersTo(server, "GET /first HTTP/1.0\r\n");
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].status == 200);
}

TEST_CASE("Two Host headers or a Host that is no host name are answered 400 bad_host") {
  const std::string fields = GENERATE(as<std::string>{}, "Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n",
                                      "Host: a/b\r\n", "Host: a b\r\n", "Host: npacd@x\r\n");
  INFO(fields);
  TestServer server(HttpServer::Options{});
  auto answers = answersTo(server, "GET /first HTTP/1.1\r\n" + fields, kSmuggled);
  checkRefusedAlone(answers, 400, "bad_host");
}

TEST_CASE("A Host with a name, an address, a port or an empty value is taken") {
  const std::string host = GENERATE(as<std::string>{}, "localhost", "127.0.0.1:10180", "[::1]:10180",
                                    "npacd.example.net", "");
  INFO("Host: " << host);
  http::request_header<http::fields> header;
  header.version(11);
  header.set(http::field::host, host);
  CHECK_FALSE(checkRequestFraming(header));
}

TEST_CASE("Two Authorization headers are answered 400 duplicate_authorization") {
  TestServer server(HttpServer::Options{});
  auto answers = answersTo(server,
                          "GET /first HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer a\r\n"
                          "Authorization: Bearer b\r\n",
                          kSmuggled);
  checkRefusedAlone(answers, 400, "duplicate_authorization");
}

TEST_CASE("Every answer carries Cache-Control no-store and X-Content-Type-Options nosniff") {
  TestServer server(HttpServer::Options{});
  std::vector<RawAnswer> answers;
  for (const std::string& head : {std::string("GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"),  // 200
                                  std::string("GET /x HTTP/1.1\r\n"),                                      // 400 framing
                                  std::string("GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: 9999999\r\n"),  // 413
                                  std::string("GET /x HTTP/1.1\r\nHost: x\r\nBad Field\r\n")}) {              // 400
    auto more = answersTo(server, head);
    answers.insert(answers.end(), more.begin(), more.end());
  }
  HttpServer::Options one_per_client;
  one_per_client.max_per_client = 1;
  TestServer limited(one_per_client);
  Connection holder("127.0.0.1", limited.port());
  REQUIRE(holder.get("/"));
  auto refused = answersTo(limited, "GET /x HTTP/1.1\r\nHost: x\r\n");  // 503 too_many_connections_per_client
  answers.insert(answers.end(), refused.begin(), refused.end());
  std::vector<int> statuses;
  for (const RawAnswer& answer : answers) {
    INFO(answer.status);
    statuses.push_back(answer.status);
    CHECK(answer.field(http::field::cache_control) == "no-store");
    CHECK(answer.field("X-Content-Type-Options") == "nosniff");
  }
  CHECK(statuses == std::vector<int>{200, 400, 413, 400, 503});
}

TEST_CASE("POST /v1/tokens answers its secret with Cache-Control no-store and nosniff") {
  AdminApiFixture f;
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.connect({boost::asio::ip::make_address("127.0.0.1"), f.port});
  http::request<http::string_body> request{http::verb::post, "/v1/tokens", 11};
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::authorization, "Bearer " + f.token("ops", db::TokenRole::kOperator));
  request.set(http::field::content_type, "application/json");
  request.body() = R"({"name":"feed","role":"application"})";
  request.prepare_payload();
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  REQUIRE(response.result_int() == 201);
  CHECK(response[http::field::cache_control] == "no-store");
  CHECK(response["X-Content-Type-Options"] == "nosniff");
}

TEST_CASE("The framing fuzz loop runs no request from the body of one whose framing it refuses") {
  struct Case {
    std::string input;
    std::vector<std::string> targets;  // handed on, in order
    std::string refusal;               // the code that ended it, "" for none
  };
  const std::vector<Case> cases{
      {"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n", {"/a", "/b"}, ""},
      {"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /b HTTP/1.0\r\n\r\n", {"/a", "/b"}, ""},
      {"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + kSmuggled, {"/a", "/smuggled"}, ""},
      {"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n" + kSmuggled, {}, "bad_transfer_encoding"},
      {"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n" + kSmuggled, {}, "bad_transfer_encoding"},
      {"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n" + kSmuggled, {}, "bad_transfer_encoding"},
      {"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n" + kSmuggled, {}, "bad_transfer_encoding"},
      {"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nContent-Length: 44\r\n\r\n" + kSmuggled, {},
       "bad_transfer_encoding"},
      {"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\n\r\n" + kSmuggled, {"/a"}, "missing_host"},
  };
  for (const Case& c : cases) {
    INFO(printableAscii(c.input));
    fuzz::FramingRun run = fuzz::runHttpFramingInput(reinterpret_cast<const std::uint8_t*>(c.input.data()), c.input.size());
    CHECK(run.targets == c.targets);
    CHECK((run.refusal ? run.refusal->code : "") == c.refusal);
    CHECK_FALSE(run.parse_error);
  }
}

}  // namespace npac::npacd
