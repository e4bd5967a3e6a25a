// npacd end to end: the bounds on reader and application tokens' expensive reads
// (docs/API.md "Expensive reads", issue 24 item 2) — the operator's answer while a reader
// token floods them from the operator's own address, 429 with Retry-After past a token's
// rate, the /metrics rendering answered again within metrics_cache_interval. Real npacd,
// real SQLite file, loopback TCP.
#include "tests/npac/npacd/multi_provider_fixture.h"

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "db/audit_store.h"
#include "db/database.h"
#include "db/transaction.h"

using namespace npacd_test;

namespace {

struct Answer {
  int status = 0;
  std::string retry_after;  // "" when absent
  std::string age;          // "" when absent
  std::string body;
};

// GET `target` with `token` over a new connection.
Answer get(const NpacdProcess& npacd, const std::string& target, const std::string& token) {
  boost::asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.expires_after(60s);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), npacd.apiPort()));
  http::request<http::string_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::authorization, "Bearer " + token);
  http::write(stream, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  return Answer{static_cast<int>(response.result_int()), std::string(response[http::field::retry_after]),
                std::string(response[http::field::age]), response.body()};
}

std::string createToken(const NpacdProcess& npacd, const std::string& name, const std::string& role) {
  Reply created = npacd.call(http::verb::post, "/v1/tokens", Json{{"name", name}, {"role", role}});
  REQUIRE(created.status == 201);
  return created.body["token"].get<std::string>();
}

// `rows` audit entries written into npacd's database while it is stopped (a long audit
// log, as months of changes leave), then npacd started again.
void fillAuditLog(NpacdProcess& npacd, int rows) {
  REQUIRE(npacd.stop() == 0);
  {
    auto opened = npac::db::Database::open(npacd.db().string());
    REQUIRE(opened.isOk());
    npac::db::Database& db = *opened.value();
    npac::db::Transaction transaction(db);
    REQUIRE(transaction.begin().isOk());
    npac::db::AuditStore store(db);
    for (int i = 0; i < rows; ++i) {
      REQUIRE(store
                  .append(npac::db::AuditEntry{0, 1'700'000'000'000 + i, "ops-alice", "tunable.set",
                                               "congestion_window", std::string("100"), std::string("101")})
                  .isOk());
    }
    REQUIRE(transaction.commit().isOk());
  }
  npacd.start();
}

// `connections` keep-alive connections of one token, each sending GET `target` again as
// soon as its answer is in, on one thread of their own, until the Flood is destroyed
// (every connection then closes). Answers are counted by status.
class Flood {
 public:
  Flood(std::uint16_t port, std::string target, std::string token, int connections)
      : target_(std::move(target)), authorization_("Bearer " + std::move(token)) {
    for (int i = 0; i < connections; ++i) {
      clients_.push_back(std::make_unique<Client>(io_));
      connect(*clients_.back(), port);
    }
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Flood() {
    stopped_ = true;
    boost::asio::post(io_, [this] {
      for (auto& client : clients_) client->stream.close();
    });
    thread_.join();
  }
  Flood(const Flood&) = delete;
  Flood& operator=(const Flood&) = delete;

  int answered() const { return ok_ + refused_ + other_; }
  int ok() const { return ok_; }
  int refused() const { return refused_; }  // 429

 private:
  struct Client {
    explicit Client(boost::asio::io_context& io) : stream(io) {}
    boost::beast::tcp_stream stream;
    boost::beast::flat_buffer buffer;
    http::request<http::string_body> request;
    http::response<http::string_body> response;
  };

  void connect(Client& client, std::uint16_t port) {
    client.stream.async_connect(
        boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port),
        [this, &client](boost::beast::error_code ec) {
          if (!ec) send(client);
        });
  }
  void send(Client& client) {
    if (stopped_) return;
    client.request = {http::verb::get, target_, 11};
    client.request.set(http::field::host, "127.0.0.1");
    client.request.set(http::field::authorization, authorization_);
    http::async_write(client.stream, client.request, [this, &client](boost::beast::error_code ec, std::size_t) {
      if (ec) return;
      client.response = {};
      http::async_read(client.stream, client.buffer, client.response,
                       [this, &client](boost::beast::error_code read_ec, std::size_t) {
                         if (read_ec) return;
                         const int status = client.response.result_int();
                         (status == 200 ? ok_ : status == 429 ? refused_ : other_)++;
                         send(client);
                       });
    });
  }

  boost::asio::io_context io_;
  const std::string target_;
  const std::string authorization_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::atomic<bool> stopped_{false};
  std::atomic<int> ok_{0}, refused_{0}, other_{0};
  std::thread thread_;
};

// The flood's page: every row of an audit log that long, 0.1-0.2 s of npacd's work.
constexpr int kFloodRows = 10000;
const std::string kFloodTarget = "/v1/audit-log?limit=" + std::to_string(kFloodRows);

std::optional<double> sample(const std::string& text, const std::string& series) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nullopt;
}

}  // namespace

// The bound docs/API.md "Expensive reads" states: an operator's request waits for at most
// two expensive reads of other tokens. Here one costs about 0.1-0.2 s (a 10,000-row audit
// page), so the operator is answered well within 2 s; without the bound the same flood
// held it about 10 s, every connection's page run ahead of it.
TEST_CASE("An operator is answered within 2 s while reader tokens flood expensive reads from the same address") {
  // Two dashboards of 30 connections each, and the operator, all from 127.0.0.1: the
  // per-address connection limit is raised, as a site with such dashboards would, so that
  // what is measured here is the API thread's work (the connection limits are another
  // bound, docs/API.md "Connection limits").
  NpacdProcess npacd(NpacdProcess::Options{{}, {"--api-max-per-client", "128"}});
  fillAuditLog(npacd, kFloodRows);
  const std::string first_reader = createToken(npacd, "dash", "reader");
  const std::string second_reader = createToken(npacd, "wallboard", "reader");
  const std::string operator_token = npacd.token();
  REQUIRE(get(npacd, kFloodTarget, first_reader).status == 200);

  // Each connection asks the page again as soon as it has its answer.
  Flood first(npacd.apiPort(), kFloodTarget, first_reader, 30);
  Flood second(npacd.apiPort(), kFloodTarget, second_reader, 30);
  REQUIRE(eventually([&] { return first.answered() + second.answered() >= 120; }, 120s));
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const Answer providers = get(npacd, "/v1/providers", operator_token);
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    INFO("operator request " << i << " took " << took.count() << " ms");
    CHECK(providers.status == 200);
    CHECK(took < 2s);
    // The next request comes once the readers' rate has let one more of their reads
    // through: the five land in the middle of the flood, spread over its refills.
    const int served = first.ok() + second.ok();
    REQUIRE(eventually([&] { return first.ok() + second.ok() > served; }, 60s));
  }
  // The readers were served all along (above), within their bound, and refused past it.
  CHECK(first.refused() + second.refused() > 0);
}

TEST_CASE("A reader's expensive reads past its api_expensive_read_rate are answered 429 with Retry-After") {
  NpacdProcess npacd;
  const std::string reader = createToken(npacd, "dash", "reader");
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/api_expensive_read_rate", Json{{"value", 1}}).status == 200);
  // Rate 1: a burst of 2, then one a second. Ten in a row take far less than the 8 s
  // that would let them all through.
  std::optional<Answer> refused;
  int ok = 0;
  for (int i = 0; i < 10; ++i) {
    Answer a = get(npacd, "/v1/audit-log?limit=2000", reader);
    if (a.status == 200) ++ok;
    if (a.status == 429 && !refused) refused = a;
  }
  REQUIRE(refused.has_value());
  CHECK(ok >= 2);
  CHECK(std::stoi(refused->retry_after) >= 1);
  const Json body = Json::parse(refused->body);
  CHECK(body["error"]["code"] == "too_many_requests");
  CHECK_THAT(body["error"]["message"].get<std::string>(),
             Catch::Contains("GET /v1/audit-log") && Catch::Contains("token 'dash'") &&
                 Catch::Contains("api_expensive_read_rate"));
  const Answer metrics = get(npacd, "/metrics", npacd.token());
  CHECK(sample(metrics.body, "npacd_api_refusals_total{reason=\"expensive-read-rate\"}").value_or(0) >= 1);
}

TEST_CASE("A log page of 1000 rows or fewer is not an expensive read") {
  NpacdProcess npacd;
  const std::string reader = createToken(npacd, "dash", "reader");
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/api_expensive_read_rate", Json{{"value", 1}}).status == 200);
  for (int i = 0; i < 10; ++i) {
    CHECK(get(npacd, "/v1/audit-log?limit=1000", reader).status == 200);
    CHECK(get(npacd, "/v1/association-log?limit=500", reader).status == 200);
  }
}

TEST_CASE("An operator's expensive reads are never refused for their rate") {
  NpacdProcess npacd;
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/api_expensive_read_rate", Json{{"value", 1}}).status == 200);
  for (int i = 0; i < 10; ++i) {
    CHECK(get(npacd, "/v1/audit-log?limit=5000", npacd.token()).status == 200);
    CHECK(get(npacd, "/metrics", npacd.token()).status == 200);
  }
}

TEST_CASE("An application token's expensive reads are bounded like a reader's") {
  NpacdProcess npacd;
  const std::string application = createToken(npacd, "billing-feed", "application");
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/api_expensive_read_rate", Json{{"value", 1}}).status == 200);
  int refused = 0;
  for (int i = 0; i < 10; ++i) refused += get(npacd, "/v1/association-log?limit=5000", application).status == 429;
  CHECK(refused > 0);
}

TEST_CASE("A reader's scrape within metrics_cache_interval is answered the earlier rendering with its Age") {
  NpacdProcess npacd;
  const std::string reader = createToken(npacd, "prometheus", "reader");
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/metrics_cache_interval", Json{{"value", "10m"}}).status == 200);
  const Answer first = get(npacd, "/metrics", reader);
  REQUIRE(first.status == 200);
  CHECK(first.age.empty());  // rendered for it
  CHECK_FALSE(sample(first.body, "npacd_queue_messages{spid=\"0001\",state=\"queued\"}").has_value());
  npacd.provision("0001");
  npacd.submit("0001", "c", 3);
  // Within the interval: the same rendering, without the provider, and how old it is.
  const Answer again = get(npacd, "/metrics", reader);
  REQUIRE(again.status == 200);
  CHECK(again.body == first.body);
  REQUIRE_FALSE(again.age.empty());
  CHECK(std::stoi(again.age) >= 0);
  // An operator's scrape renders anew; its rendering then serves the reader.
  const Answer fresh = get(npacd, "/metrics", npacd.token());
  CHECK(fresh.age.empty());
  CHECK(sample(fresh.body, "npacd_queue_messages{spid=\"0001\",state=\"queued\"}") == 3);
  const Answer after = get(npacd, "/metrics", reader);
  CHECK(after.body == fresh.body);
  CHECK_FALSE(after.age.empty());
}

TEST_CASE("With metrics_cache_interval 0 every reader's scrape renders") {
  NpacdProcess npacd;
  const std::string reader = createToken(npacd, "prometheus", "reader");
  REQUIRE(npacd.call(http::verb::put, "/v1/tunables/metrics_cache_interval", Json{{"value", "0"}}).status == 200);
  REQUIRE(get(npacd, "/metrics", reader).status == 200);
  npacd.provision("0001");
  npacd.submit("0001", "z", 2);
  const Answer second = get(npacd, "/metrics", reader);
  CHECK(second.age.empty());
  CHECK(sample(second.body, "npacd_queue_messages{spid=\"0001\",state=\"queued\"}") == 2);
}

TEST_CASE("metrics_cache_interval and api_expensive_read_rate refuse values out of their range") {
  NpacdProcess npacd;
  Reply interval = npacd.call(http::verb::put, "/v1/tunables/metrics_cache_interval", Json{{"value", "11m"}});
  CHECK(interval.status == 400);
  CHECK(interval.body["error"]["code"] == "out_of_range");
  CHECK(npacd.call(http::verb::put, "/v1/tunables/metrics_cache_interval", Json{{"value", "500ms"}}).status == 400);
  Reply rate = npacd.call(http::verb::put, "/v1/tunables/api_expensive_read_rate", Json{{"value", 0}});
  CHECK(rate.status == 400);
  CHECK(rate.body["error"]["code"] == "out_of_range");
  CHECK(npacd.call(http::verb::put, "/v1/tunables/api_expensive_read_rate", Json{{"value", 1001}}).status == 400);
  CHECK(npacd.call(http::verb::put, "/v1/tunables/api_expensive_read_rate", Json{{"value", "fast"}}).status == 400);
}
