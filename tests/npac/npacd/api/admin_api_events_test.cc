// GET /v1/events (event_routes.cc) and the HTTP server's streamed responses (http_session.h)
// in-process over real TCP (plain and TLS) with a real SQLite file: the first events
// carry exactly what GET /v1/associations and GET /v1/providers answer, a change sends a
// new event, a revoked token and a stopping server end the stream, the stream counts
// against the connection limits, and a client that does not read is closed.
#include <catch2/catch.hpp>

#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "npac/npacd/api/event_stream.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"
#include "tests/npac/npacd/api/event_stream_client.h"
#include "tests/npac/npacd/api/http_server_fixture.h"
#include "tests/support/eventually.h"

namespace npac::npacd {
namespace {

using ::npac::testing::eventually;
using testing::AdminApiFixture;
using testing::EventStreamClient;
using testing::QueueBackedCore;
using testing::Reply;
using testing::ServerSentEvent;
using nlohmann::json;
using V = http::verb;
using db::TokenRole;
using namespace std::chrono_literals;

// The admin API with a core attached (a real QueueWriter behind QueueBackedCore, which
// lists no association), detached again before the core goes.
struct EventsFixture {
  explicit EventsFixture(HttpServer::Options http = {}, std::chrono::milliseconds keepalive = kEventKeepalive)
      : f(std::move(http), keepalive) {
    auto started = db::QueueWriter::start(f.path(), {}, AdminApiFixture::clock());
    INFO(started.status().toString());
    REQUIRE(started.isOk());
    writer = std::move(started).value();
    core = std::make_unique<QueueBackedCore>(*writer);
    f.onApiThread([&] { f.api->attachCore(core.get()); });
  }
  ~EventsFixture() {
    f.onApiThread([&] {
      f.api->stop();
      f.api->attachCore(nullptr);
    });
  }
  std::string bearer(const std::string& name, TokenRole role = TokenRole::kReader) const {
    return "Bearer " + f.token(name, role);
  }
  // What a GET answers, as one "data:" line carries it (without the closing newline).
  std::string body(const std::string& target) const {
    Reply r = f.call(V::get, target);
    REQUIRE(r.status == 200);
    std::string raw = r.raw;
    while (!raw.empty() && raw.back() == '\n') raw.pop_back();
    return raw;
  }
  AdminApiFixture f;
  std::unique_ptr<db::QueueWriter> writer;
  std::unique_ptr<QueueBackedCore> core;
};

void addProvider(AdminApiFixture& f, const std::string& spid) {
  Reply r = f.call(V::post, "/v1/providers", json{{"spid", spid}, {"name", "Provider " + spid}, {"system_type", "soa"}});
  INFO(r.raw);
  REQUIRE(r.status == 201);
}

// The first two events, whichever comes first.
std::map<std::string, ServerSentEvent> firstEvents(EventStreamClient& client) {
  std::map<std::string, ServerSentEvent> out;
  for (int i = 0; i < 2; ++i) {
    auto event = client.next();
    REQUIRE(event);
    out[event->event] = *event;
  }
  return out;
}

TEST_CASE("A server-sent event writes each line of its data as its own data line") {
  CHECK(formatServerSentEvent(4, "providers", "{\"a\":1}") == "id: 4\nevent: providers\ndata: {\"a\":1}\n\n");
  CHECK(formatServerSentEvent(5, "x", "one\r\ntwo\rthree\nfour") ==
        "id: 5\nevent: x\ndata: one\ndata: two\ndata: three\ndata: four\n\n");
  CHECK(formatServerSentEvent(6, "x", "") == "id: 6\nevent: x\ndata: \n\n");
  CHECK(formatServerSentEvent(7, "x", "end\n") == "id: 7\nevent: x\ndata: end\ndata: \n\n");
}

TEST_CASE("interval_ms defaults to 1000 and takes 200 to 10000 milliseconds") {
  std::chrono::milliseconds interval{};
  CHECK_FALSE(parseEventInterval(std::nullopt, &interval));
  CHECK(interval == 1000ms);
  CHECK_FALSE(parseEventInterval("200", &interval));
  CHECK(interval == 200ms);
  CHECK_FALSE(parseEventInterval("10000", &interval));
  CHECK(interval == 10000ms);
  auto refused = parseEventInterval("10s", &interval);
  REQUIRE(refused);
  CHECK(*refused == "interval_ms must be a whole number of milliseconds from 200 to 10000, got '10s'");
}

TEST_CASE("GET /v1/events first sends the associations and providers exactly as their GETs answer them") {
  EventsFixture e;
  addProvider(e.f, "0001");
  EventStreamClient client(e.f.port, e.bearer("watcher"), "/v1/events?interval_ms=200");
  REQUIRE(client.headerRead());
  CHECK(client.status() == 200);
  CHECK(client.header(http::field::content_type) == "text/event-stream");
  CHECK(client.header(http::field::cache_control) == "no-store");
  CHECK(client.header("X-Content-Type-Options") == "nosniff");
  CHECK(client.chunked());
  auto events = firstEvents(client);
  REQUIRE(events.count("associations") == 1);
  REQUIRE(events.count("providers") == 1);
  CHECK(events["associations"].data == e.body("/v1/associations"));
  CHECK(events["providers"].data == e.body("/v1/providers"));
  CHECK(json::parse(events["providers"].data)["providers"][0]["spid"] == "0001");
  std::set<std::string> ids{events["associations"].id, events["providers"].id};
  CHECK(ids == std::set<std::string>{"1", "2"});
}

TEST_CASE("A provider change sends one new providers event with the next id and the new body") {
  EventsFixture e;
  addProvider(e.f, "0001");
  EventStreamClient client(e.f.port, e.bearer("watcher"), "/v1/events?interval_ms=200");
  firstEvents(client);
  REQUIRE(e.f.call(V::post, "/v1/providers/0001/disable").status == 200);
  auto changed = client.next();  // nothing else changed, so nothing else comes first
  REQUIRE(changed);
  CHECK(changed->event == "providers");
  CHECK(changed->id == "3");
  CHECK(changed->data == e.body("/v1/providers"));
  CHECK(json::parse(changed->data)["providers"][0]["enabled"] == false);
}

TEST_CASE("Without a core the associations event carries the error GET /v1/associations answers") {
  AdminApiFixture f;
  EventStreamClient client(f.port, "Bearer " + f.token("watcher", TokenRole::kReader), "/v1/events?interval_ms=200");
  auto events = firstEvents(client);
  Reply direct = f.call(V::get, "/v1/associations");
  REQUIRE(direct.status == 503);
  CHECK(json::parse(events["associations"].data) == direct.body);
  f.onApiThread([&] { f.api->stop(); });
}

TEST_CASE("Revoking the token of an event stream ends it with an end event naming the revocation") {
  EventsFixture e;
  EventStreamClient client(e.f.port, e.bearer("watcher"), "/v1/events?interval_ms=200");
  firstEvents(client);
  REQUIRE(e.f.call(V::post, "/v1/tokens/watcher/revoke").status == 200);
  auto end = client.nextNamed("end");
  REQUIRE(end);
  CHECK_THAT(json::parse(end->data).value("reason", ""), Catch::Contains("token 'watcher' was revoked at"));
  CHECK(client.waitForEnd());
  CHECK(client.endReason() == "");  // the chunked body's last chunk: ended, not cut
}

TEST_CASE("A stream with nothing new for the keepalive time gets a keepalive comment and no event") {
  EventsFixture e({}, 600ms);  // npacd's is 15 s
  EventStreamClient client(e.f.port, e.bearer("watcher"), "/v1/events?interval_ms=200");
  firstEvents(client);
  auto next = client.next(5s);  // nothing changes: three quiet ticks, then the comment
  REQUIRE(next);
  CHECK(next->comment == "keepalive");
  CHECK(next->event.empty());
  CHECK(next->id.empty());
}

TEST_CASE("An interval_ms outside 200 to 10000 milliseconds is refused 400 naming the range") {
  EventsFixture e;
  for (const std::string value : {"199", "10001", "0", "-5", "abc", "", "1e3", "500ms", "99999999999999999999"}) {
    INFO(value);
    Reply r = e.f.call(V::get, "/v1/events?interval_ms=" + value);
    CHECK(r.status == 400);
    CHECK(r.errorCode() == "invalid_interval");
    CHECK_THAT(r.errorMessage(), Catch::Contains("200 to 10000"));
  }
}

TEST_CASE("A reader token may stream events and a request without a token is refused 401") {
  EventsFixture e;
  EventStreamClient reader(e.f.port, e.bearer("watcher", TokenRole::kReader), "/v1/events?interval_ms=200");
  CHECK(reader.status() == 200);
  CHECK(reader.next());
  EventStreamClient anonymous(e.f.port, std::nullopt, "/v1/events?interval_ms=200");
  REQUIRE(anonymous.headerRead());
  CHECK(anonymous.status() == 401);
}

TEST_CASE("Stopping the admin API ends its event streams and the client sees the end") {
  EventsFixture e;
  EventStreamClient client(e.f.port, e.bearer("watcher"), "/v1/events?interval_ms=200");
  firstEvents(client);
  e.f.onApiThread([&] { e.f.api->stop(); });
  CHECK(client.waitForEnd(5s));
}

TEST_CASE("An event stream holds its token's connection slot") {
  HttpServer::Options options;
  options.max_per_credential = 1;
  EventsFixture e(options);
  const std::string bearer = e.bearer("watcher");
  EventStreamClient client(e.f.port, bearer, "/v1/events?interval_ms=200");
  REQUIRE(client.next());
  Reply second = e.f.callWith(bearer, V::get, "/v1/whoami");
  CHECK(second.status == 503);
  CHECK(second.errorCode() == "too_many_connections_per_credential");
}

TEST_CASE("An event stream over TLS sends its events") {
  testing::TestCertificate certificate;
  HttpServer::Options options;
  options.tls = certificate.serverContext();
  EventsFixture e(options);
  boost::asio::ssl::context tls(boost::asio::ssl::context::tls_client);
  tls.load_verify_file(certificate.cert.string());
  tls.set_verify_mode(boost::asio::ssl::verify_peer);
  testing::TlsEventStreamClient client(e.f.port, e.bearer("watcher"), "/v1/events?interval_ms=200", 10s, &tls);
  REQUIRE(client.headerRead());
  CHECK(client.status() == 200);
  auto first = client.next();
  REQUIRE(first);
  CHECK((first->event == "associations" || first->event == "providers"));
}

// An HttpServer whose "/stream" handler streams a `size`-byte chunk every `period` until
// the stream closes, and records why it closed.
class StreamingServer {
 public:
  StreamingServer(HttpServer::Options options, std::size_t size, std::chrono::milliseconds period = 1ms)
      : size_(size), period_(period) {
    options.address = "127.0.0.1";
    options.port = 0;
    auto started = HttpServer::start(io_, std::move(options), [this](HttpRequest&&, Responder respond) {
      HttpResponse head{http::status::ok, 11};
      head.set(http::field::content_type, "text/plain");
      std::shared_ptr<ResponseStream> stream = respond.stream(std::move(head));
      if (!stream) return;  // cannot happen: a session's Responder streams
      stream->onClose([this](const std::string& why) {
        std::lock_guard lock(mutex_);
        closed_ = why;
      });
      pump(stream, std::make_shared<boost::asio::steady_timer>(io_));
    });
    REQUIRE(started.isOk());
    server_ = std::move(started).value();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~StreamingServer() {
    std::promise<void> stopped;
    boost::asio::post(io_, [&] {
      server_->stop();
      stopped.set_value();
    });
    stopped.get_future().wait();
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return server_->port(); }
  HttpServerCounters counters() const { return server_->counters(); }
  std::optional<std::string> closedBecause() {
    std::lock_guard lock(mutex_);
    return closed_;
  }
  // Polls until the stream closed, for at most `within`.
  std::optional<std::string> waitForClose(std::chrono::milliseconds within) {
    eventually([&] { return closedBecause().has_value(); }, within, 5ms);
    return closedBecause();
  }

 private:
  void pump(std::shared_ptr<ResponseStream> stream, std::shared_ptr<boost::asio::steady_timer> timer) {
    if (!stream->send(std::string(size_, 'x'))) return;
    timer->expires_after(period_);
    timer->async_wait([this, stream, timer](const boost::system::error_code& ec) {
      if (!ec) pump(stream, timer);
    });
  }
  boost::asio::io_context io_;
  std::unique_ptr<HttpServer> server_;
  std::size_t size_;
  std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::optional<std::string> closed_;
  std::thread thread_;
};

TEST_CASE("A stream whose client stops reading is closed once its queue passes the limit and counted") {
  HttpServer::Options options;
  options.stream_queue_limit = 256 * 1024;
  StreamingServer server(options, 64 * 1024);
  EventStreamClient client(server.port(), std::nullopt, "/stream");
  REQUIRE(client.status() == 200);
  // The client reads nothing more: the socket buffers fill, then the server's queue.
  auto why = server.waitForClose(20s);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("did not read"));
  CHECK(server.counters().streams_closed_slow == 1);
  CHECK(server.counters().streams == 0);
  CHECK(client.waitForEnd(20s));  // and the client is not left hanging
}

TEST_CASE("A stream quiet for longer than the idle timeout stays open") {
  HttpServer::Options options;
  options.idle_timeout = 1s;
  // A chunk now and one 1.6 s later: the wait between them is past the idle timeout.
  StreamingServer server(options, 100, 1600ms);
  EventStreamClient client(server.port(), std::nullopt, "/stream");
  REQUIRE(client.status() == 200);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (client.unparsed().size() < 200 && !client.ended() && std::chrono::steady_clock::now() < deadline) {
    client.next(100ms);  // no blank line in this body: the bytes only accumulate
  }
  CHECK(client.unparsed().size() >= 200);
  CHECK_FALSE(client.ended());
  CHECK_FALSE(server.closedBecause());
  CHECK(server.counters().streams == 1);
}

TEST_CASE("Stopping the server closes its streams and the client sees the end") {
  auto server = std::make_unique<StreamingServer>(HttpServer::Options{}, 10);
  EventStreamClient client(server->port(), std::nullopt, "/stream");
  REQUIRE(client.status() == 200);
  server.reset();  // stop() on the server's thread, then gone
  CHECK(client.waitForEnd(5s));
}

}  // namespace
}  // namespace npac::npacd
