// GET /v1/events (reader): the console's live view as server-sent events (WHATWG HTML
// "Server-sent events"; docs/API.md "Live events"). On connect and then whenever either
// changed, checked every interval_ms:
//
//   event: associations   data: the body GET /v1/associations answers
//   event: providers      data: the body GET /v1/providers answers
//
// each with an increasing "id:". The bodies come from those routes' own handlers, so the
// stream says exactly what a GET would (an error body too, when the GET would fail).
// Nothing changed for AdminApi::Options::event_keepalive (15 s) → a ": keepalive" comment.
// A client still reading what was sent is sent nothing more until it has read it all: it
// then gets the state as it is, not every state in between, so what waits for one stream
// is one round of events at most (HttpServer bounds it further: stream_queue_limit), and
// a feed keeps only a hash of what it sent last, not the bodies. The stream ends with
// "event: end" and {"reason":...} when the caller's token is revoked (checked at every
// tick, as every request checks it) or npacd stops; it also ends when the client leaves
// or does not read (HttpServer: stream_queue_limit). It is a session like any other for
// the connection limits (per client, per credential).
//
// The two bodies are built at most once per kMinEventInterval (200 ms) for all streams
// together (EventSnapshot): a stream's tick otherwise lists every provider (8 ms at 700
// providers) and asks the core for every association, and 30 streams of one reader at
// 200 ms would take the whole API thread from everyone else (issue 24 item 2, docs/API.md
// "Expensive reads").
//
// Threading: the API thread. An EventFeed is owned by ApiContext::event_feeds until its
// stream closes; its timer and the core's answers hold it meanwhile; stopEventStreams()
// (AdminApi::stop()) ends them all, after which none touches the ApiContext.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/time_source.h"
#include "db/token_store.h"
#include "npac/npacd/api/event_stream.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"

namespace npac::npacd {

std::optional<std::string> parseEventInterval(const std::optional<std::string>& text,
                                              std::chrono::milliseconds* out) {
  *out = kDefaultEventInterval;
  if (!text) return std::nullopt;
  const std::string range = std::to_string(kMinEventInterval.count()) + " to " +
                            std::to_string(kMaxEventInterval.count());
  const bool digits = !text->empty() && text->size() <= 6 &&
                      text->find_first_not_of("0123456789") == std::string::npos;
  const long value = digits ? std::stol(*text) : -1;
  if (value < kMinEventInterval.count() || value > kMaxEventInterval.count()) {
    return "interval_ms must be a whole number of milliseconds from " + range + ", got '" +
           printableAscii(text->substr(0, 32)) + "'";
  }
  *out = std::chrono::milliseconds(value);
  return std::nullopt;
}

std::string formatServerSentEvent(std::uint64_t id, std::string_view name, std::string_view data) {
  std::string out = "id: " + std::to_string(id) + "\nevent: " + std::string(name) + "\n";
  while (true) {
    const std::size_t end = data.find_first_of("\r\n");
    out += "data: ";
    out += data.substr(0, end);
    out += "\n";
    if (end == std::string_view::npos) break;
    const std::size_t next = data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n' ? end + 2 : end + 1;
    data.remove_prefix(next);
  }
  return out + "\n";
}

namespace {

// A handler's body without the newline jsonResponse() ends it with: one "data:" line.
std::string bodyOf(const ApiResponse& response) {
  std::string body = response.body;
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  return body;
}

}  // namespace

// What every stream publishes, shared (API thread only): the latest bodies and when they
// were built (steady time: only the streams' cadence depends on it), and the feeds
// waiting for the build under way.
struct EventSnapshot {
  std::string associations, providers;
  std::chrono::steady_clock::time_point built_at;
  bool built = false;
  bool building = false;
  std::vector<std::weak_ptr<EventFeed>> waiting;
};

class EventFeed : public std::enable_shared_from_this<EventFeed> {
 public:
  EventFeed(ApiContext& api, std::shared_ptr<ResponseStream> stream, std::string token_name,
            std::chrono::milliseconds interval)
      : api_(api), stream_(std::move(stream)), token_name_(std::move(token_name)), interval_(interval),
        timer_(api.timer()) {}

  void start() {
    spdlog::debug("admin API: event stream for token '{}' every {} ms", token_name_, interval_.count());
    stream_->onClose([weak = weak_from_this()](const std::string& why) {
      if (auto self = weak.lock()) self->onStreamClosed(why);
    });
    tick();
  }

  // stopEventStreams(): the last event, then the stream ends; the ApiContext is not used again.
  void stop(const std::string& reason) {
    detached_ = true;
    end(reason);
  }

 private:
  void tick() {
    if (!ticking_) return;
    if (std::optional<std::string> why = tokenEnded()) return end(*why);
    if (stream_->queued() > 0) return scheduleTick();  // behind: the latest state once it caught up
    if (api_.event_snapshot == nullptr) api_.event_snapshot = std::make_shared<EventSnapshot>();
    const std::shared_ptr<EventSnapshot> snapshot = api_.event_snapshot;
    const auto now = common::realTimeSource().now();
    if (snapshot->built && now - snapshot->built_at < kMinEventInterval) {
      return publish(snapshot->associations, snapshot->providers);
    }
    snapshot->waiting.push_back(weak_from_this());
    if (snapshot->building) return;  // published when that build is done
    snapshot->building = true;
    ApiRequest request;
    request.token_name = token_name_;
    std::string providers = bodyOf(listProviders(api_, request));
    // The core answers on the API thread (posted), or at once when it is not attached.
    ApiResponder answer([snapshot, now, providers = std::move(providers)](ApiResponse associations) mutable {
      snapshot->associations = bodyOf(associations);
      snapshot->providers = std::move(providers);
      snapshot->built_at = now;
      snapshot->built = true;
      snapshot->building = false;
      std::vector<std::weak_ptr<EventFeed>> waiting;
      waiting.swap(snapshot->waiting);
      for (const std::weak_ptr<EventFeed>& weak : waiting) {
        if (auto feed = weak.lock()) feed->publish(snapshot->associations, snapshot->providers);
      }
    });
    listAssociations(api_, request, answer);
  }

  void publish(const std::string& associations, const std::string& providers) {
    if (!ticking_) return;
    bool wrote = publishIfChanged("associations", associations, &last_associations_);
    wrote = publishIfChanged("providers", providers, &last_providers_) || wrote;
    quiet_ = wrote ? std::chrono::milliseconds(0) : quiet_ + interval_;
    if (quiet_ >= api_.event_keepalive) {
      quiet_ = std::chrono::milliseconds(0);
      stream_->send(": keepalive\n\n");
    }
    scheduleTick();
  }

  void scheduleTick() {
    if (!ticking_ || stream_->closed()) return;
    timer_->after(interval_, [self = shared_from_this()] { self->tick(); });
  }

  bool publishIfChanged(const char* name, const std::string& body, std::optional<std::size_t>* last) {
    const std::size_t hash = std::hash<std::string_view>{}(body);
    if (*last == hash) return false;
    stream_->send(formatServerSentEvent(++last_id_, name, body));
    *last = hash;
    return true;
  }

  // Why the stream must end now, if it must: its token was revoked (or is gone), or it
  // cannot be checked — a stream outlives no token, as no request does (access.h).
  std::optional<std::string> tokenEnded() {
    db::TokenStore tokens(api_.db);
    db::Result<db::ApiToken> token = tokens.get(token_name_);
    if (!token) {
      if (token.status().isNotFound()) return "token '" + token_name_ + "' no longer exists";
      return "cannot check token '" + token_name_ + "': " + token.status().toString();
    }
    if (token->revoked_at) return "token '" + token_name_ + "' was revoked at " + formatTime(*token->revoked_at);
    return std::nullopt;
  }

  void end(const std::string& reason) {
    if (!ticking_) return;
    ticking_ = false;
    timer_->cancel();
    stream_->send(formatServerSentEvent(++last_id_, "end", dumpJson(nlohmann::json{{"reason", reason}})));
    stream_->finish();
  }

  void onStreamClosed(const std::string& why) {
    spdlog::debug("admin API: event stream for token '{}' closed: {}", token_name_, why);
    ticking_ = false;
    timer_->cancel();
    if (detached_) return;
    detached_ = true;
    api_.event_feeds.erase(this);  // may drop the context's reference: the caller holds another
  }

  ApiContext& api_;
  std::shared_ptr<ResponseStream> stream_;
  const std::string token_name_;
  const std::chrono::milliseconds interval_;
  const std::unique_ptr<ApiTimer> timer_;
  bool ticking_ = true;
  bool detached_ = false;  // the ApiContext no longer holds it: never use it again
  std::uint64_t last_id_ = 0;
  std::optional<std::size_t> last_associations_, last_providers_;  // hashes of the bodies sent last
  std::chrono::milliseconds quiet_{0};  // since the last event written
};

void eventStream(ApiContext& api, ApiRequest& r, ApiResponder& respond) {
  std::chrono::milliseconds interval{};
  if (std::optional<std::string> error = parseEventInterval(r.queryValue("interval_ms"), &interval)) {
    return respond(errorResponse(ApiStatus::kBadRequest, "invalid_interval", *error));
  }
  ApiResponse head;
  head.content_type = "text/event-stream";
  head.set("Cache-Control", "no-store");
  head.set("X-Accel-Buffering", "no");  // a reverse proxy in front must not hold events back
  std::shared_ptr<ResponseStream> stream = respond.stream(std::move(head));
  if (stream == nullptr) {
    return respond(errorResponse(ApiStatus::kInternalServerError, "internal",
                                 "this connection cannot carry an event stream"));
  }
  auto feed = std::make_shared<EventFeed>(api, std::move(stream), r.token_name, interval);
  api.event_feeds[feed.get()] = feed;
  feed->start();
}

void stopEventStreams(ApiContext& api) {
  // Each feed sends its "end" and lets go of the context before the server closes the
  // sessions; the copy, because ending a stream may close it at once.
  auto feeds = std::move(api.event_feeds);
  api.event_feeds.clear();
  for (auto& [raw, feed] : feeds) feed->stop("npacd is stopping its admin API");
}

}  // namespace npac::npacd
