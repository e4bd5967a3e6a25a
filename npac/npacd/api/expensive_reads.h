// ExpensiveReads: what the expensive reads of reader and application tokens may cost the
// admin API's one thread, so that no such token can starve an operator (issue 24 item 2;
// docs/API.md "Expensive reads"). An expensive read is one whose work grows with the
// whole data set — a GET /metrics rendering, an audit or association log page of more
// than kCheapLogRows rows —, marked as such in the route table (AdminApi::routeTable).
//
//   rate     each token may start api_expensive_read_rate such reads a second, in bursts
//            of twice that (a token bucket per token name). Past it: 429
//            too_many_requests, Retry-After the whole seconds until the next is allowed.
//   waiting  each token may have kWaitingPerToken of them waiting or running at once;
//            past it 429 too_many_requests, Retry-After: 1. A token's many connections
//            buy it no more of the line than one connection would.
//   line     they run one at a time, in arrival order. Once one has answered, the line
//            rests as long as it took, then posts the next to the io_context: together
//            they take at most half of the thread, and whatever arrives meanwhile — an
//            operator's request, any cheap one — is handled in the rest. Every step of a
//            request (accept, read, answer) waits for at most the read running, so the
//            expensive reads of every other token together delay an operator's request
//            by at most two of them (one if it does not arrive just as a rest ends).
//
// Operator tokens do not come here: their requests run as they arrive, whatever others
// do ("a credential buys its place", shared/conventions.md). Anonymous callers never
// reach an expensive read: every such route needs a token, refused 401 first.
//
// Threading: the API thread (the io_context's) only. The clock is injected (the token
// buckets depend on it); the line uses the io_context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>

#include "db/clock.h"
#include "npac/npacd/api/http_message.h"

namespace npac::npacd {

// A log page (GET /v1/audit-log, /v1/association-log) of more rows than this is an
// expensive read. The console asks for 500; npacctl for 20 by default.
inline constexpr std::size_t kCheapLogRows = 1000;

struct ExpensiveReadCounters {
  std::uint64_t refused_rate = 0;     // 429: the token's rate was used up
  std::uint64_t refused_waiting = 0;  // 429: the token had kWaitingPerToken in the line
  std::uint64_t run = 0;              // expensive reads run through the line
};

class ExpensiveReads {
 public:
  static constexpr std::size_t kWaitingPerToken = 2;

  ExpensiveReads(boost::asio::io_context& io, db::Clock clock);
  ~ExpensiveReads();
  ExpensiveReads(const ExpensiveReads&) = delete;
  ExpensiveReads& operator=(const ExpensiveReads&) = delete;

  // One expensive read of token `token` on `route` ("GET /metrics", for the answer):
  // refused — `respond` gets the 429 at once — or queued, and `read` runs when the line
  // reaches it with a Responder that forwards to `respond` and lets the line go on. The
  // read must answer through it exactly once (now or later); one that throws is answered
  // 500 internal and logged, as the HTTP server does for a route. `reads_per_second` is
  // the token's rate (api_expensive_read_rate), its burst twice that.
  void submit(const std::string& token, const std::string& route, std::int64_t reads_per_second,
              Responder respond, std::function<void(Responder&)> read);

  // Drops every read still waiting (their connections close unanswered); the one running
  // may still answer. Nothing is run after.
  void stop();

  ExpensiveReadCounters counters() const;
  std::size_t waiting() const;  // reads waiting in the line now, the running one excluded

 private:
  struct Bucket {
    double tokens = 0;
    db::TimeMs refilled_at = 0;
  };
  struct Queued {
    std::string token;
    std::string route;
    Responder respond;
    std::function<void(Responder&)> read;
  };
  struct Line;

  // Whole seconds until `bucket` holds one read again (at least 1).
  static std::int64_t secondsUntilNext(const Bucket& bucket, double rate);
  HttpResponse tooManyRequests(const std::string& route, const std::string& why, std::int64_t retry_after);
  void logRefusal(const std::string& token, const std::string& why);

  db::Clock clock_;
  std::shared_ptr<Line> line_;
  std::unordered_map<std::string, Bucket> buckets_;
  ExpensiveReadCounters counters_;
  db::TimeMs last_log_at_ = 0;
  std::uint64_t unlogged_ = 0;
};

}  // namespace npac::npacd
