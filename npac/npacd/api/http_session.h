// HttpSession<Stream>: one admin API connection, plain (beast::tcp_stream) or TLS
// (beast::ssl_stream<beast::tcp_stream>): handshake (TLS only), then read a request's
// header, check its framing (http_framing.h), let the server admit it against its limits
// (connection_limits.h), read its body, hand it to the handler, write the answer, repeat
// — or, when the handler calls Responder::stream(), write the header and then what the
// handler sends (ResponseStream) until it finishes, the client leaves or falls behind,
// or the server stops; a pending read meanwhile notices a client that leaves.
// HttpSessionBase is what the server keeps of every session, whatever its stream: its
// ConnectionAccount (the accounting its limits need) and close().
//
// Internal to http_server.cc (the only includer); the contract is HttpServer's. A session
// knows its server only as an HttpSessionHost (http_session_host.h).
// Threading: the server's io_context thread only.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <spdlog/spdlog.h>

#include "npac/npacd/api/connection_limits.h"
#include "npac/npacd/api/http_framing.h"
#include "npac/npacd/api/http_message.h"
#include "npac/npacd/api/http_session_host.h"

namespace npac::npacd {

// Every answer, streamed or not: the client must not guess another type than the one
// sent, and nothing stores an answer (POST /v1/tokens returns a secret) — unless its
// handler chose a Cache-Control of its own (the console's files: no-cache).
template <class Fields>
void setSecurityFields(Fields& fields) {
  namespace http = boost::beast::http;
  if (fields.find(http::field::cache_control) == fields.end()) fields.set(http::field::cache_control, "no-store");
  fields.set("X-Content-Type-Options", "nosniff");
}

class HttpSessionBase : public ConnectionAccount {
 public:
  virtual ~HttpSessionBase() = default;
  virtual void close() = 0;
};

template <class Stream>
class HttpSession : public HttpSessionBase,
                    public ResponseStream,
                    public std::enable_shared_from_this<HttpSession<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, boost::beast::tcp_stream>;

 public:
  template <class... Args>
  // `alive` turns false when the host is destroyed: the session then calls it no more.
  HttpSession(HttpSessionHost& host, std::shared_ptr<bool> alive, Args&&... stream_args)
      : stream_(std::forward<Args>(stream_args)...),
        host_(&host),
        alive_(std::move(alive)),
        body_limit_(host.sessionLimits().body_limit),
        idle_timeout_(host.sessionLimits().idle_timeout),
        header_timeout_(host.sessionLimits().header_timeout),
        stream_queue_limit_(host.sessionLimits().stream_queue_limit),
        stream_write_timeout_(host.sessionLimits().stream_write_timeout),
        stream_send_buffer_(host.sessionLimits().stream_send_buffer) {}

  ~HttpSession() override {
    if (*alive_) host_->forget(this);
  }

  void start() {
    if constexpr (kTls) {
      markIdle();
      boost::beast::get_lowest_layer(stream_).expires_after(host_->sessionLimits().handshake_timeout);
      stream_.async_handshake(boost::asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](boost::beast::error_code ec) {
                                self->onHandshake(ec);
                              });
    } else {
      read();
    }
  }

  void close() override {
    // A stream already finishing (its last events and the last chunk queued, as an event
    // stream's "end" at stop) closes itself once they are written, within idle_timeout.
    if (streaming_ && finishing_ && !stream_closed_) return;
    if (streaming_) return endStream("the admin API stopped");
    closeSocket();
  }

  // ResponseStream (http_server.h), once the handler called Responder::stream().
  bool send(std::string data) override;
  void finish() override {
    if (stream_closed_ || finishing_) return;
    finishing_ = true;
    pump();
  }
  bool closed() const override { return stream_closed_; }
  std::size_t queued() const override { return queued_bytes_; }
  void onClose(std::function<void(const std::string& why)> fn) override {
    if (stream_closed_) return fn(close_reason_);
    on_close_.push_back(std::move(fn));
  }
  void whenQueueEmpty(std::function<void()> fn) override {
    if (stream_closed_) return;
    if (queue_.empty()) return fn();
    queue_empty_ = std::move(fn);
  }

 private:
  using error_code = boost::beast::error_code;

  void markIdle() {
    idle = true;
    if (*alive_) idle_mark = host_->nextIdleMark();
  }

  void onHandshake(error_code ec) {
    if (ec) {
      if (*alive_ && ec != boost::asio::error::operation_aborted) host_->onHandshakeFailed(address, ec);
      return close();
    }
    read();
  }

  void read() {
    markIdle();
    parser_.emplace();
    parser_->body_limit(body_limit_);
    refusal_.reset();
    // An anonymous connection has header_timeout for its request's header (slowloris);
    // one that presented a credential may stay idle for idle_timeout.
    waiting_anonymous_ = priority == RequestPriority::kAnonymous;
    auto& lowest = boost::beast::get_lowest_layer(stream_);
    if (waiting_anonymous_) {
      lowest.expires_after(header_timeout_);
    } else {
      lowest.expires_after(idle_timeout_);
    }
    boost::beast::http::async_read_header(stream_, buffer_, *parser_,
                                          [self = this->shared_from_this()](error_code ec, std::size_t) {
                                            self->onHeader(ec);
                                          });
  }

  static bool isQuietEnd(const error_code& ec) {
    namespace asio = boost::asio;
    return ec == boost::beast::http::error::end_of_stream || ec == boost::beast::error::timeout ||
           ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
           ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
  }

  // Below: the request's way through the server.
  void onHeader(error_code ec);
  bool answerReadError(const error_code& ec);
  void onRead(error_code ec);
  void write(HttpResponse response);

  void writeFinal(HttpResponse response) {
    keep_alive_ = false;
    write(std::move(response));
  }

  void closeSocket() {
    boost::beast::error_code ignored;
    auto& lowest = boost::beast::get_lowest_layer(stream_);
    lowest.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    lowest.close();
  }

  // Streaming (below): the header, the read that notices the client leave, the writer.
  std::shared_ptr<ResponseStream> startStream(HttpResponse head);
  void readWhileStreaming();
  void pump();
  void onStreamWritten(error_code ec, std::size_t bytes);
  void endStream(const std::string& why);

  Stream stream_;
  HttpSessionHost* host_;
  std::shared_ptr<bool> alive_;  // false once the server is destroyed: host_ dangles
  std::size_t body_limit_;
  std::chrono::seconds idle_timeout_;
  std::chrono::milliseconds header_timeout_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  bool keep_alive_ = false;
  unsigned version_ = 11;
  bool waiting_anonymous_ = false;          // the pending read has header_timeout
  std::optional<HttpResponse> refusal_;     // the limits refused this request: answered after its body
  // The stream, once the handler asked for one.
  std::size_t stream_queue_limit_;
  std::chrono::milliseconds stream_write_timeout_;
  std::size_t stream_send_buffer_;
  bool streaming_ = false;
  bool head_written_ = false;
  bool writing_ = false;
  bool finishing_ = false;
  bool stream_closed_ = false;
  bool chunked_ = false;
  std::deque<std::string> queue_;
  std::function<void()> queue_empty_;  // whenQueueEmpty()'s callback, waiting
  std::size_t queued_bytes_ = 0;  // queued and not yet written, the write in flight included
  std::vector<std::function<void(const std::string&)>> on_close_;
  std::string close_reason_;
  std::array<char, 512> drained_{};  // what a streaming client sends: read and dropped
};

// Answers a failed read (413, 431, 400) or closes quietly; false when `ec` is no error.
template <class Stream>
bool HttpSession<Stream>::answerReadError(const error_code& ec) {
  namespace http = boost::beast::http;
  if (!ec) return false;
  if (isQuietEnd(ec)) {
    if (ec == boost::beast::error::timeout && waiting_anonymous_ && *alive_) host_->onHeaderTimeout();
    close();
    return true;
  }
  if (ec == http::error::body_limit) {
    writeFinal(jsonErrorResponse(http::status::payload_too_large, "body_too_large",
                                 "request body exceeds " + std::to_string(body_limit_) + " bytes"));
    return true;
  }
  if (ec == http::error::header_limit) {
    // RFC 6585 §5: the request line and headers together are over Beast's limit (8 KiB).
    writeFinal(jsonErrorResponse(http::status::request_header_fields_too_large, "headers_too_large",
                                 "the request line and headers exceed 8192 bytes"));
    return true;
  }
  // Framing Beast refuses itself while reading the header (RFC 9112 §6.1, §6.3), named
  // as http_framing.h names what it refuses after.
  if (ec == http::error::bad_transfer_encoding) {
    writeFinal(jsonErrorResponse(http::status::bad_request, "bad_transfer_encoding",
                                 "Transfer-Encoding after Content-Length, or chunked twice: send one of "
                                 "Content-Length and 'Transfer-Encoding: chunked' (RFC 9112 section 6.3)"));
    return true;
  }
  if (ec == http::error::bad_content_length) {
    writeFinal(jsonErrorResponse(http::status::bad_request, "bad_content_length",
                                 "Content-Length is not one decimal number, differs between its fields, or "
                                 "comes after 'Transfer-Encoding: chunked' (RFC 9112 section 6.3)"));
    return true;
  }
  writeFinal(jsonErrorResponse(http::status::bad_request, "bad_http", "malformed HTTP request: " + ec.message()));
  return true;
}

template <class Stream>
void HttpSession<Stream>::onHeader(error_code ec) {
  idle = false;
  if (answerReadError(ec)) return;
  waiting_anonymous_ = false;
  version_ = parser_->get().version();
  // RFC 9112 §6.3: a body whose length is ambiguous is never read — its bytes could be
  // taken for a request of their own — and the connection closes after the answer.
  if (std::optional<FramingRefusal> refused = checkRequestFraming(parser_->get().base())) {
    if (*alive_) host_->onFramingRefused();
    return writeFinal(jsonErrorResponse(refused->status, refused->code, refused->message, version_));
  }
  // Admitted (or refused) by its header: a credential moves the connection out of the
  // anonymous pool before its body, so a slow body is not taken for an anonymous one.
  if (*alive_) refusal_ = host_->admit(*this, parser_->get());
  if (parser_->is_done()) return onRead({});
  boost::beast::get_lowest_layer(stream_).expires_after(idle_timeout_);
  boost::beast::http::async_read(stream_, buffer_, *parser_,
                                 [self = this->shared_from_this()](error_code ec, std::size_t) {
                                   self->onRead(ec);
                                 });
}

template <class Stream>
void HttpSession<Stream>::onRead(error_code ec) {
  namespace http = boost::beast::http;
  if (answerReadError(ec)) return;
  HttpRequest request = parser_->release();
  keep_alive_ = request.keep_alive();
  version_ = request.version();
  if (!*alive_) {  // the server is gone: nobody to hand the request to
    return writeFinal(jsonErrorResponse(http::status::service_unavailable, "shutting_down",
                                        "the admin API is stopping"));
  }
  if (refusal_) return writeFinal(std::move(*refusal_));
  boost::beast::get_lowest_layer(stream_).expires_never();  // a long poll may take its time; the handler bounds it
  // The responder keeps the session alive while the handler works (a long poll, a
  // commit): no socket operation is pending meanwhile. It answers once: a second call
  // (a handler that answered and then threw) is dropped.
  auto answered = std::make_shared<bool>(false);
  Responder respond(
      [self = this->shared_from_this(), answered](HttpResponse response) {
        if (*answered) return;
        *answered = true;
        self->write(std::move(response));
      },
      [self = this->shared_from_this(), answered](HttpResponse head) -> std::shared_ptr<ResponseStream> {
        if (*answered) return nullptr;
        *answered = true;
        return self->startStream(std::move(head));
      });
  const std::string route = std::string(request.method_string()) + " " + std::string(request.target());
  // No exception may end the server: a handler that throws is a bug in that route, so
  // it is logged once with the route and answered 500; the other sessions carry on.
  std::string failure;
  try {
    host_->handle(std::move(request), respond);
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "a non-standard exception";
  }
  if (failure.empty()) return;
  spdlog::error("admin API: {} failed with an exception: {}", printableAscii(route), failure);
  if (!*answered) {
    respond(jsonErrorResponse(http::status::internal_server_error, "internal",
                              "npacd failed to handle this request (an internal error, logged); "
                              "check with a GET whether it took effect before retrying"));
  }
}

template <class Stream>
void HttpSession<Stream>::write(HttpResponse response) {
  response.version(version_);
  response.keep_alive(keep_alive_);
  setSecurityFields(response);
  response.prepare_payload();
  auto shared = std::make_shared<HttpResponse>(std::move(response));
  boost::beast::get_lowest_layer(stream_).expires_after(idle_timeout_);
  boost::beast::http::async_write(stream_, *shared,
                                  [self = this->shared_from_this(), shared](error_code ec, std::size_t) {
                                    if (ec || !self->keep_alive_) return self->close();
                                    self->read();
                                  });
}

template <class Stream>
std::shared_ptr<ResponseStream> HttpSession<Stream>::startStream(HttpResponse head) {
  namespace http = boost::beast::http;
  streaming_ = true;
  idle = false;
  keep_alive_ = false;
  if (*alive_) host_->onStreamStarted();
  chunked_ = version_ >= 11;
  auto header = std::make_shared<http::response<http::empty_body>>(head.result(), version_);
  for (const auto& field : head) header->set(field.name_string(), field.value());
  header->erase(http::field::content_length);
  header->keep_alive(false);
  header->chunked(chunked_);
  setSecurityFields(*header);
  auto& lowest = boost::beast::get_lowest_layer(stream_);
  if (stream_send_buffer_ > 0) {
    // What the kernel holds for a client that does not read (the default autotunes to
    // megabytes); the queue above it is bounded by stream_queue_limit.
    boost::beast::error_code ignored;
    lowest.socket().set_option(boost::asio::socket_base::send_buffer_size(static_cast<int>(stream_send_buffer_)),
                               ignored);
  }
  auto serializer = std::make_shared<http::response_serializer<http::empty_body>>(*header);
  lowest.expires_after(stream_write_timeout_);
  http::async_write_header(stream_, *serializer,
                           [self = this->shared_from_this(), header, serializer](error_code ec, std::size_t) {
                             if (ec) return self->endStream("writing the header failed: " + ec.message());
                             boost::beast::get_lowest_layer(self->stream_).expires_never();
                             self->head_written_ = true;
                             self->readWhileStreaming();
                             self->pump();
                           });
  return this->shared_from_this();
}

template <class Stream>
void HttpSession<Stream>::readWhileStreaming() {
  // An event stream's client sends nothing more; the read completes when it leaves (or
  // when close() ends the stream), which a stream that writes nothing would not notice.
  stream_.async_read_some(boost::asio::buffer(drained_), [self = this->shared_from_this()](error_code ec, std::size_t) {
    if (!ec) return self->readWhileStreaming();
    self->endStream(isQuietEnd(ec) ? "the client closed the connection" : "reading from the client failed: " + ec.message());
  });
}

template <class Stream>
bool HttpSession<Stream>::send(std::string data) {
  if (stream_closed_ || finishing_) return false;
  if (data.empty()) return true;  // an empty chunk would end the chunked body
  queued_bytes_ += data.size();
  queue_.push_back(std::move(data));
  if (queued_bytes_ > stream_queue_limit_) {
    if (*alive_) host_->onSlowStream(address, queued_bytes_);
    endStream("the client did not read: " + std::to_string(queued_bytes_) + " bytes waiting, more than " +
              std::to_string(stream_queue_limit_));
    return false;
  }
  pump();
  return true;
}

template <class Stream>
void HttpSession<Stream>::pump() {
  namespace http = boost::beast::http;
  if (writing_ || !head_written_ || stream_closed_) return;
  auto self = this->shared_from_this();
  if (queue_.empty()) {
    if (!finishing_) return;
    if (!chunked_) return endStream("the stream ended");
    writing_ = true;
    boost::beast::get_lowest_layer(stream_).expires_after(stream_write_timeout_);
    boost::asio::async_write(stream_, http::make_chunk_last(), [self](error_code, std::size_t) {
      self->writing_ = false;
      self->endStream("the stream ended");
    });
    return;
  }
  writing_ = true;
  auto data = std::make_shared<std::string>(std::move(queue_.front()));
  queue_.pop_front();
  // A write that cannot finish within stream_write_timeout is a client that stopped reading.
  boost::beast::get_lowest_layer(stream_).expires_after(stream_write_timeout_);
  auto done = [self, data](error_code ec, std::size_t) { self->onStreamWritten(ec, data->size()); };
  if (chunked_) {
    boost::asio::async_write(stream_, http::make_chunk(boost::asio::buffer(*data)), std::move(done));
  } else {
    boost::asio::async_write(stream_, boost::asio::buffer(*data), std::move(done));
  }
  // The last piece is on its way: the sender may queue the next (whenQueueEmpty).
  if (queue_.empty() && queue_empty_) std::exchange(queue_empty_, nullptr)();
}

template <class Stream>
void HttpSession<Stream>::onStreamWritten(error_code ec, std::size_t bytes) {
  writing_ = false;
  queued_bytes_ -= std::min(bytes, queued_bytes_);
  if (ec == boost::beast::error::timeout && !stream_closed_) {
    if (*alive_) host_->onSlowStream(address, queued_bytes_ + bytes);
    return endStream("the client did not read for " + std::to_string(stream_write_timeout_.count()) + " ms");
  }
  if (ec) return endStream(isQuietEnd(ec) ? "the client closed the connection" : "writing failed: " + ec.message());
  boost::beast::get_lowest_layer(stream_).expires_never();
  pump();
}

template <class Stream>
void HttpSession<Stream>::endStream(const std::string& why) {
  if (stream_closed_) return;
  stream_closed_ = true;
  auto keep = this->shared_from_this();  // a callback may drop the last other owner
  queue_.clear();
  queue_empty_ = nullptr;
  closeSocket();
  if (*alive_) host_->onStreamEnded();
  close_reason_ = why;
  std::vector<std::function<void(const std::string&)>> callbacks;
  callbacks.swap(on_close_);
  for (auto& fn : callbacks) fn(why);
}

}  // namespace npac::npacd
