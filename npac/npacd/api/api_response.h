// ApiResponse, ApiResponder and ResponseStream: what an admin API route answers, in the
// project's own terms, so that a route file (*_routes.cc) compiles without Boost.Beast or
// Asio. http_adapter.h is the one place that turns an ApiResponse into the Beast message
// the HttpServer writes (http_server.h) — its status, then Content-Type, then the fields
// in the order they were set, then the body; the server adds Content-Length,
// Cache-Control: no-store (unless a field set one), X-Content-Type-Options and the
// connection's own fields when it writes it.
//
//   ApiResponse      a status (only the codes the API answers), the body, its media type
//                    and the extra header fields a route sets (Retry-After, Location,
//                    Cache-Control, Age, the console's policies...)
//   ApiResponder     how a route answers, at once or later: call it exactly once with an
//                    ApiResponse — or call stream() once instead
//   ResponseStream   the body of an answer written piece by piece after its head
//                    (GET /v1/events, POST /v1/backup)
//
// Threading: an ApiResponse is a value (any thread). An ApiResponder and a ResponseStream
// are used on the API thread only; core completions post there first (api_thread.h).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace npac::npacd {

// `text` with every byte outside printable ASCII written as \xNN: for echoing client
// input into an answer or a log line (http_server.cc).
std::string printableAscii(std::string_view text);

// The HTTP statuses the admin API answers (RFC 9110 §15), by their code.
enum class ApiStatus : unsigned {
  kOk = 200,
  kCreated = 201,
  kPermanentRedirect = 308,
  kBadRequest = 400,
  kUnauthorized = 401,
  kNotFound = 404,
  kMethodNotAllowed = 405,
  kConflict = 409,
  kPayloadTooLarge = 413,
  kUnsupportedMediaType = 415,
  kTooManyRequests = 429,
  kInternalServerError = 500,
  kNotImplemented = 501,
  kServiceUnavailable = 503,
  kInsufficientStorage = 507,
};

struct ApiResponse {
  ApiStatus status = ApiStatus::kOk;
  std::string content_type;  // the Content-Type; "" for none (a redirect)
  std::string body;
  // Header fields besides Content-Type, in the order set, each name as it goes on the
  // wire ("Retry-After"). Content-Length is the server's.
  std::vector<std::pair<std::string, std::string>> fields;

  // Sets field `name` to `value`, replacing an earlier value of it (names compare without
  // regard to case); the field then comes last, as an HTTP library's set() places it.
  void set(std::string_view name, std::string value);
  // The value of field `name`, nullptr when not set.
  const std::string* field(std::string_view name) const;
};

// The body of a streamed response, written piece by piece after its head (server-sent
// events: WHATWG HTML "Server-sent events"; a backup). Over HTTP/1.1 each send() is one
// chunk of the chunked transfer coding (RFC 9112 §7.1), so the client can tell a finished
// stream (the last chunk) from a cut one; over HTTP/1.0 the body ends when the connection
// closes. Threading: the API thread only, like everything of a session.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Queues `data` for the client; false (and `data` dropped) when the stream is closed. A
  // client that falls more than stream_queue_limit bytes behind is closed here.
  virtual bool send(std::string data) = 0;
  // Ends the response once what is queued is written, then closes the connection.
  virtual void finish() = 0;
  // Bytes sent and not yet written to the socket (the write under way included): a
  // sender with only the latest state to say waits for 0 rather than queueing more.
  virtual std::size_t queued() const = 0;
  virtual bool closed() const = 0;
  // `fn` runs once when the stream closes, whatever the cause (finish() done, the client
  // left or fell behind, stop()), with a sentence saying which; at once if it is closed.
  // It may be called from within send() or close(): it must not re-enter the stream.
  virtual void onClose(std::function<void(const std::string& why)> fn) = 0;
  // `fn` runs once, on the API thread, when no piece waits behind the one being written:
  // a sender of a large body (POST /v1/backup) sends its next piece then, so at most two
  // are held and stream_queue_limit is never reached by a client that reads. At once when
  // nothing waits; never when the stream closes first (onClose() says so).
  virtual void whenQueueEmpty(std::function<void()> fn) = 0;
};

// Delivers an answer: call it exactly once, on the API thread, with a response — or call
// stream() once instead. Copyable; the copies share "answered". One template for both
// sides of the API: a route answers an ApiResponse (ApiResponder, below), the HTTP
// server's session a Beast response (Responder, http_message.h).
template <class Response>
class BasicResponder {
 public:
  using Answer = std::function<void(Response)>;
  using Stream = std::function<std::shared_ptr<ResponseStream>(Response head)>;
  BasicResponder() = default;
  // Any callable taking a Response answers (a responder that cannot stream).
  template <class F>
    requires(!std::is_same_v<std::decay_t<F>, BasicResponder> && std::is_invocable_v<F&, Response>)
  BasicResponder(F&& answer) : answer_(std::forward<F>(answer)) {}
  BasicResponder(Answer answer, Stream stream) : answer_(std::move(answer)), stream_(std::move(stream)) {}

  void operator()(Response response) const { answer_(std::move(response)); }
  // Writes `head` (status and fields; its body is ignored) and returns the stream for the
  // body; nullptr when this responder cannot stream or has answered already.
  std::shared_ptr<ResponseStream> stream(Response head) const {
    return stream_ ? stream_(std::move(head)) : nullptr;
  }
  explicit operator bool() const { return static_cast<bool>(answer_); }

 private:
  Answer answer_;
  Stream stream_;
};

// A route's answer.
using ApiResponder = BasicResponder<ApiResponse>;

}  // namespace npac::npacd
