// ExpensiveReads (npac/npacd/api/expensive_reads.h) in-process: the per-token rate and
// waiting bounds on a manual clock, and the line's order on a real io_context that the
// test runs step by step (poll), so every sequence is exact.
#include <catch2/catch.hpp>

#include <boost/asio/post.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npac/npacd/api/expensive_reads.h"

namespace npac::npacd {
namespace {

namespace http = boost::beast::http;

struct Fixture {
  boost::asio::io_context io;
  db::TimeMs now = 1'000'000;
  ExpensiveReads reads{io, [this] { return now; }};
  std::vector<std::string> events;  // what ran, in order

  // Submits one read of `token` that answers 200 at once when it runs; the answer (or
  // the refusal) lands in `*answer`.
  void readNow(const std::string& token, std::optional<HttpResponse>* answer, std::int64_t rate = 5) {
    reads.submit(token, "GET /metrics", rate, Responder([answer](HttpResponse r) { *answer = std::move(r); }),
                 [this, token](Responder& respond) {
                   events.push_back("read " + token);
                   respond(HttpResponse{http::status::ok, 11});
                 });
  }
  // Submits one read of `token` that answers only when the test calls the Responder it
  // leaves in `*held`.
  void readHeld(const std::string& token, std::optional<Responder>* held, std::optional<HttpResponse>* answer,
                std::int64_t rate = 5) {
    reads.submit(token, "GET /metrics", rate, Responder([answer](HttpResponse r) { *answer = std::move(r); }),
                 [this, token, held](Responder& respond) {
                   events.push_back("read " + token);
                   *held = respond;
                 });
  }
};

std::string code(const HttpResponse& response) {
  return nlohmann::json::parse(response.body())["error"]["code"].get<std::string>();
}

}  // namespace

TEST_CASE("A token's expensive reads past a burst of twice its rate are answered 429 with Retry-After") {
  Fixture f;
  for (int i = 0; i < 4; ++i) {  // rate 2: a burst of 4
    std::optional<HttpResponse> answer;
    f.readNow("dash", &answer, 2);
    f.io.poll();
    f.io.restart();
    REQUIRE(answer.has_value());
    CHECK(answer->result() == http::status::ok);
  }
  std::optional<HttpResponse> refused;
  f.readNow("dash", &refused, 2);
  REQUIRE(refused.has_value());  // at once, not in the line
  CHECK(refused->result() == http::status::too_many_requests);
  CHECK(code(*refused) == "too_many_requests");
  CHECK(refused->at(http::field::retry_after) == "1");  // half a second to the next, rounded up
  CHECK_THAT(refused->body(), Catch::Contains("token 'dash' may start 2 expensive reads a second, in bursts of 4"));
  CHECK(f.reads.counters().refused_rate == 1);
  CHECK(f.events.size() == 4);
}

TEST_CASE("A token's expensive reads come back at its rate") {
  Fixture f;
  for (int i = 0; i < 2; ++i) {  // rate 1: a burst of 2
    std::optional<HttpResponse> answer;
    f.readNow("dash", &answer, 1);
    f.io.poll();
    f.io.restart();
  }
  std::optional<HttpResponse> answer;
  f.readNow("dash", &answer, 1);
  REQUIRE(answer.has_value());
  CHECK(answer->result() == http::status::too_many_requests);
  f.now += 999;
  answer.reset();
  f.readNow("dash", &answer, 1);
  REQUIRE(answer.has_value());
  CHECK(answer->result() == http::status::too_many_requests);
  f.now += 1;  // a whole second since the burst was used up: one more
  answer.reset();
  f.readNow("dash", &answer, 1);
  f.io.poll();
  REQUIRE(answer.has_value());
  CHECK(answer->result() == http::status::ok);
}

TEST_CASE("The Retry-After of a token over its rate is the whole seconds until its next read") {
  Fixture f;
  std::optional<HttpResponse> answer;
  // Rate 1 (burst 2) used up...
  for (int i = 0; i < 2; ++i) {
    f.readNow("slow", &answer, 1);
    f.io.poll();
    f.io.restart();
  }
  answer.reset();
  f.now += 100;  // ...0.9 s still to go: "1"
  f.readNow("slow", &answer, 1);
  REQUIRE(answer.has_value());
  CHECK(answer->at(http::field::retry_after) == "1");
}

TEST_CASE("Each token has its own rate: one token over it leaves another admitted") {
  Fixture f;
  std::optional<HttpResponse> answer;
  for (int i = 0; i < 2; ++i) {
    f.readNow("flood", &answer, 1);
    f.io.poll();
    f.io.restart();
  }
  answer.reset();
  f.readNow("flood", &answer, 1);
  REQUIRE(answer.has_value());
  CHECK(answer->result() == http::status::too_many_requests);
  std::optional<HttpResponse> other;
  f.readNow("prometheus", &other, 1);
  f.io.poll();
  REQUIRE(other.has_value());
  CHECK(other->result() == http::status::ok);
}

TEST_CASE("A token with two expensive reads waiting or running is answered 429 for a third") {
  Fixture f;
  std::optional<Responder> held;
  std::optional<HttpResponse> first, second, third;
  f.readHeld("dash", &held, &first);
  f.readNow("dash", &second);
  f.readNow("dash", &third);
  REQUIRE(third.has_value());
  CHECK(third->result() == http::status::too_many_requests);
  CHECK(third->at(http::field::retry_after) == "1");
  CHECK_THAT(third->body(), Catch::Contains("already has 2 expensive reads waiting or running"));
  CHECK(f.reads.counters().refused_waiting == 1);
  // Another token is not held back by it...
  std::optional<HttpResponse> other;
  f.readNow("prometheus", &other);
  CHECK_FALSE(other.has_value());
  // ...and once the first answered, the rest run in order.
  f.io.poll();
  f.io.restart();
  REQUIRE(held.has_value());
  (*held)(HttpResponse{http::status::ok, 11});
  f.io.poll();
  REQUIRE(second.has_value());
  REQUIRE(other.has_value());
  CHECK(f.events == std::vector<std::string>{"read dash", "read dash", "read prometheus"});
}

TEST_CASE("Expensive reads run one at a time: the next starts only once the one running answered") {
  Fixture f;
  std::optional<Responder> held;
  std::optional<HttpResponse> first, second;
  f.readHeld("a", &held, &first);
  f.readNow("b", &second);
  f.io.poll();
  f.io.restart();
  CHECK(f.events == std::vector<std::string>{"read a"});
  CHECK(f.reads.waiting() == 1);
  REQUIRE(held.has_value());
  (*held)(HttpResponse{http::status::ok, 11});
  REQUIRE(first.has_value());
  CHECK_FALSE(second.has_value());  // posted, not run inside the first one's answer
  f.io.poll();
  CHECK(second.has_value());
  CHECK(f.events == std::vector<std::string>{"read a", "read b"});
}

TEST_CASE("A request arriving while an expensive read runs is handled before the next expensive read") {
  Fixture f;
  std::optional<HttpResponse> first, second;
  // The first read, while it runs, sees a request arrive (posted, as a completed socket
  // read is): it must be handled before the second read starts.
  f.reads.submit("a", "GET /metrics", 5, Responder([&](HttpResponse r) { first = std::move(r); }),
                 [&](Responder& respond) {
                   f.events.push_back("read a");
                   boost::asio::post(f.io, [&] { f.events.push_back("operator"); });
                   respond(HttpResponse{http::status::ok, 11});
                 });
  f.readNow("b", &second);
  f.io.poll();
  CHECK(f.events == std::vector<std::string>{"read a", "operator", "read b"});
}

TEST_CASE("After an expensive read the line rests as long as it took before starting the next") {
  Fixture f;
  std::optional<HttpResponse> first, second;
  f.reads.submit("a", "GET /v1/audit-log", 5, Responder([&](HttpResponse r) { first = std::move(r); }),
                 [&](Responder& respond) {
                   f.events.push_back("read a");
                   f.now += 200;  // it took 200 ms
                   respond(HttpResponse{http::status::ok, 11});
                 });
  f.readNow("b", &second);
  f.io.poll();
  REQUIRE(first.has_value());
  CHECK_FALSE(second.has_value());  // resting: a real 200 ms timer
  f.io.restart();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!second.has_value() && std::chrono::steady_clock::now() < deadline) {
    f.io.run_one_for(std::chrono::milliseconds(100));
  }
  CHECK(second.has_value());
  CHECK(f.events == std::vector<std::string>{"read a", "read b"});
}

TEST_CASE("An expensive read that throws is answered 500 and the line goes on") {
  Fixture f;
  std::optional<HttpResponse> first, second;
  f.reads.submit("a", "GET /v1/audit-log", 5, Responder([&](HttpResponse r) { first = std::move(r); }),
                 [](Responder&) { throw std::runtime_error("boom"); });
  f.readNow("b", &second);
  f.io.poll();
  REQUIRE(first.has_value());
  CHECK(first->result() == http::status::internal_server_error);
  CHECK(code(*first) == "internal");
  REQUIRE(second.has_value());
  CHECK(second->result() == http::status::ok);
}

TEST_CASE("Stopped expensive reads run nothing that was waiting") {
  Fixture f;
  std::optional<Responder> held;
  std::optional<HttpResponse> first, second;
  f.readHeld("a", &held, &first);
  f.readNow("b", &second);
  f.io.poll();
  f.io.restart();
  f.reads.stop();
  REQUIRE(held.has_value());
  (*held)(HttpResponse{http::status::ok, 11});  // the running one may still answer
  f.io.poll();
  CHECK(first.has_value());
  CHECK_FALSE(second.has_value());
  CHECK(f.events == std::vector<std::string>{"read a"});
}

}  // namespace npac::npacd
