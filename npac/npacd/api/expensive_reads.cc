#include "npac/npacd/api/expensive_reads.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "npac/npacd/asio_timers.h"

namespace npac::npacd {

namespace http = boost::beast::http;

namespace {

constexpr db::TimeMs kLogEveryMs = 60'000;  // refusals are logged in at most one line a minute
constexpr std::size_t kPruneBucketsAbove = 4096;
// The longest rest after one read, whatever the clock says (a clock step forward must not
// hold the line for long).
constexpr db::TimeMs kMaxRestMs = 5'000;

}  // namespace

// The line: shared with the handlers it posts and the Responders it hands out, which may
// outlive the ExpensiveReads (a read answering after stop()); they check it through a
// weak_ptr and do nothing once it is gone.
struct ExpensiveReads::Line : std::enable_shared_from_this<Line> {
  Line(boost::asio::io_context& context, db::Clock c)
      : io(context), clock(std::move(c)), rest(AsioTimers(context).makeTimer()) {}

  boost::asio::io_context& io;
  db::Clock clock;
  std::unique_ptr<common::Timer> rest;  // after a read, as long as it took
  std::deque<Queued> queue;
  std::unordered_map<std::string, std::size_t> in_line;  // waiting or running, by token
  bool busy = false;     // a read is posted, running or resting: the next waits
  bool stopped = false;
  db::TimeMs started_at = 0;  // of the read running
  std::uint64_t run = 0;

  std::size_t inLine(const std::string& token) const {
    auto it = in_line.find(token);
    return it == in_line.end() ? 0 : it->second;
  }

  void postNext() {
    if (busy || stopped || queue.empty()) return;
    busy = true;
    // Posted, not run here: whatever is already waiting for the thread (an operator's
    // request among it) is handled first.
    boost::asio::post(io, [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->runNext();
    });
  }

  void runNext() {
    if (stopped || queue.empty()) {
      busy = false;
      return;
    }
    Queued next = std::move(queue.front());
    queue.pop_front();
    ++run;
    started_at = clock();
    auto answered = std::make_shared<bool>(false);
    Responder done([weak = weak_from_this(), respond = next.respond, token = next.token,
                    answered](HttpResponse response) {
      if (*answered) return;
      *answered = true;
      respond(std::move(response));
      if (auto self = weak.lock()) self->finished(token);
    });
    std::string failure;
    try {
      next.read(done);
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "a non-standard exception";
    }
    if (failure.empty()) return;
    // As the HTTP server does for a route that throws: logged once, answered 500, and
    // the line goes on.
    spdlog::error("admin API: {} failed with an exception: {}", printableAscii(next.route), failure);
    if (!*answered) {
      done(jsonErrorResponse(http::status::internal_server_error, "internal",
                             "npacd failed to handle this request (an internal error, logged)"));
    }
  }

  void finished(const std::string& token) {
    if (auto it = in_line.find(token); it != in_line.end() && --it->second == 0) in_line.erase(it);
    // The line rests as long as the read took: such reads then take at most half of the
    // thread, and between two of them everything else has at least as long as the
    // previous one held it — every step of an operator's request (its accept, its read,
    // its answer) fits in that rest, so it waits for at most one read, two if it arrived
    // just as a rest ended.
    const db::TimeMs took = std::clamp<db::TimeMs>(clock() - started_at, 0, kMaxRestMs);
    if (took == 0 || stopped) {
      busy = false;
      return postNext();
    }
    rest->after(std::chrono::milliseconds(took), [weak = weak_from_this()] {
      auto self = weak.lock();
      if (!self) return;
      self->busy = false;
      self->postNext();
    });
  }
};

ExpensiveReads::ExpensiveReads(boost::asio::io_context& io, db::Clock clock)
    : clock_(clock), line_(std::make_shared<Line>(io, clock)) {}

ExpensiveReads::~ExpensiveReads() { stop(); }

void ExpensiveReads::stop() {
  line_->stopped = true;
  line_->queue.clear();
  line_->rest->cancel();
}

std::size_t ExpensiveReads::waiting() const { return line_->queue.size(); }

ExpensiveReadCounters ExpensiveReads::counters() const {
  ExpensiveReadCounters counters = counters_;
  counters.run = line_->run;
  return counters;
}

std::int64_t ExpensiveReads::secondsUntilNext(const Bucket& bucket, double rate) {
  const double seconds = (1.0 - bucket.tokens) / rate;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(seconds)));
}

HttpResponse ExpensiveReads::tooManyRequests(const std::string& route, const std::string& why,
                                             std::int64_t retry_after) {
  // RFC 6585 §4: 429, with Retry-After (RFC 9110 §10.2.3) in whole seconds.
  HttpResponse response = jsonErrorResponse(http::status::too_many_requests, "too_many_requests", route + ": " + why);
  response.set(http::field::retry_after, std::to_string(retry_after));
  return response;
}

void ExpensiveReads::logRefusal(const std::string& token, const std::string& why) {
  const db::TimeMs now = clock_();
  if (last_log_at_ != 0 && now >= last_log_at_ && now - last_log_at_ < kLogEveryMs) {
    ++unlogged_;
    return;
  }
  spdlog::warn("admin API: an expensive read of token '{}' refused: {} ({} more refused since the last such line)",
               printableAscii(token), why, unlogged_);
  last_log_at_ = now;
  unlogged_ = 0;
}

void ExpensiveReads::submit(const std::string& token, const std::string& route, std::int64_t reads_per_second,
                            Responder respond, std::function<void(Responder&)> read) {
  const double rate = static_cast<double>(std::max<std::int64_t>(1, reads_per_second));
  const double burst = 2 * rate;
  const db::TimeMs now = clock_();
  if (buckets_.size() > kPruneBucketsAbove) {
    // A full bucket of a token with nothing in the line says nothing a new one would not.
    std::erase_if(buckets_, [&](const auto& entry) {
      const double elapsed = static_cast<double>(std::max<db::TimeMs>(0, now - entry.second.refilled_at));
      return line_->inLine(entry.first) == 0 && entry.second.tokens + elapsed * rate / 1000.0 >= burst;
    });
  }
  auto [it, created] = buckets_.try_emplace(token, Bucket{burst, now});
  Bucket& bucket = it->second;
  if (!created) {
    const double elapsed = static_cast<double>(std::max<db::TimeMs>(0, now - bucket.refilled_at));
    bucket.tokens = std::min(burst, bucket.tokens + elapsed * rate / 1000.0);
    bucket.refilled_at = now;
  }
  if (line_->inLine(token) >= kWaitingPerToken) {
    ++counters_.refused_waiting;
    const std::string why = "token '" + token + "' already has " + std::to_string(kWaitingPerToken) +
                            " expensive reads waiting or running; wait for their answers (docs/API.md "
                            "\"Expensive reads\")";
    logRefusal(token, "it already has " + std::to_string(kWaitingPerToken) + " waiting or running");
    return respond(tooManyRequests(route, why, 1));
  }
  if (bucket.tokens < 1.0) {
    ++counters_.refused_rate;
    const std::int64_t retry_after = secondsUntilNext(bucket, rate);
    const std::string limit = std::to_string(static_cast<std::int64_t>(rate)) +
                              " expensive reads a second, in bursts of " +
                              std::to_string(static_cast<std::int64_t>(burst)) + " (api_expensive_read_rate)";
    logRefusal(token, "over its rate of " + limit);
    return respond(tooManyRequests(
        route, "token '" + token + "' may start " + limit + "; retry in " + std::to_string(retry_after) + " s",
        retry_after));
  }
  bucket.tokens -= 1.0;
  ++line_->in_line[token];
  line_->queue.push_back(Queued{token, route, std::move(respond), std::move(read)});
  line_->postNext();
}

}  // namespace npac::npacd
