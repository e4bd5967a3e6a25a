// EventStreamClient: a test's client of a server-sent event stream (WHATWG HTML
// "Server-sent events") over real TCP, plain or TLS: it sends one GET, reads the answer's
// header, then the body piece by piece as it arrives — Beast decodes the chunked
// transfer coding — and splits it into events ("id:", "event:", "data:" lines up to a
// blank line; a ":" line is a comment). Every wait is bounded by a deadline: the client's
// own io_context runs only for as long as the caller allows.
//
// Threading: one test thread.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace npac::npacd::testing {

struct ServerSentEvent {
  std::string id, event, data;  // data: the "data:" lines joined with "\n"
  std::string comment;          // the text of a ":" line (then event and data are empty)
};

template <class Stream>
class BasicEventStreamClient {
 public:
  using Clock = std::chrono::steady_clock;

  // Plain: connects to 127.0.0.1:`port`. TLS: give the client context (it verifies the
  // server as the caller configured it).
  BasicEventStreamClient(std::uint16_t port, const std::optional<std::string>& authorization,
                         const std::string& target, std::chrono::milliseconds within = std::chrono::seconds(10),
                         boost::asio::ssl::context* tls = nullptr)
      : stream_(makeStream(tls)) {
    namespace http = boost::beast::http;
    const auto deadline = Clock::now() + within;
    boost::beast::get_lowest_layer(stream_).connect(
        boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    // Each step's handler sets only members: one that outlives its deadline finds them.
    if constexpr (!std::is_same_v<Stream, boost::beast::tcp_stream>) {
      step_done_ = false;
      stream_.async_handshake(boost::asio::ssl::stream_base::client, [this](boost::beast::error_code ec) {
        error_ = ec;
        step_done_ = true;
      });
      runUntil(step_done_, deadline);
      if (!step_done_ || error_) return;
    }
    request_ = {http::verb::get, target, 11};
    request_.set(http::field::host, "127.0.0.1");
    if (authorization) request_.set(http::field::authorization, *authorization);
    request_.prepare_payload();
    step_done_ = false;
    http::async_write(stream_, request_, [this](boost::beast::error_code ec, std::size_t) {
      error_ = ec;
      step_done_ = true;
    });
    runUntil(step_done_, deadline);
    if (!step_done_ || error_) return;
    parser_.body_limit(std::numeric_limits<std::uint64_t>::max());
    step_done_ = false;
    http::async_read_header(stream_, buffer_, parser_, [this](boost::beast::error_code ec, std::size_t) {
      error_ = ec;
      step_done_ = true;
    });
    runUntil(step_done_, deadline);
    header_read_ = step_done_ && !error_;
    if (header_read_ && parser_.is_done()) ended_ = true;  // a body-less answer (a refusal)
  }

  bool headerRead() const { return header_read_; }
  int status() const { return header_read_ ? static_cast<int>(parser_.get().result_int()) : 0; }
  std::string header(boost::beast::http::field name) const {
    auto it = parser_.get().find(name);
    return it == parser_.get().end() ? "" : std::string(it->value());
  }
  std::string header(const std::string& name) const {
    auto it = parser_.get().find(name);
    return it == parser_.get().end() ? "" : std::string(it->value());
  }
  bool chunked() const { return parser_.get().chunked(); }

  // The next event or comment within `within`; nullopt if none came (then ended() says
  // whether the server ended the stream).
  std::optional<ServerSentEvent> next(std::chrono::milliseconds within = std::chrono::seconds(10)) {
    const auto deadline = Clock::now() + within;
    while (true) {
      if (std::optional<ServerSentEvent> event = take()) return event;
      if (ended_ || !header_read_) return std::nullopt;
      // The read that ends the stream may also carry its last events (the server's "end"
      // and the chunked body's last chunk in one segment): take them before giving up.
      if (!readSome(deadline)) return take();
    }
  }
  // The next event named `name`, skipping others and comments.
  std::optional<ServerSentEvent> nextNamed(const std::string& name,
                                           std::chrono::milliseconds within = std::chrono::seconds(10)) {
    const auto deadline = Clock::now() + within;
    while (Clock::now() < deadline) {
      auto event = next(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      if (!event) return std::nullopt;
      if (event->event == name) return event;
    }
    return std::nullopt;
  }
  // Reads (and drops) until the server ends the stream; false if it did not within `within`.
  bool waitForEnd(std::chrono::milliseconds within = std::chrono::seconds(10)) {
    const auto deadline = Clock::now() + within;
    while (!ended_) {
      if (!readSome(deadline)) return ended_;
    }
    return true;
  }
  bool ended() const { return ended_; }
  // How the stream ended: "" for the chunked body's last chunk, else the read error.
  std::string endReason() const { return error_ ? error_.message() : ""; }
  const std::string& unparsed() const { return text_; }

 private:
  Stream makeStream(boost::asio::ssl::context* tls);

  // Runs the client's handlers until `done` or the deadline (run_until returns when no
  // operation is left, which is when the one started has completed).
  void runUntil(const bool& done, Clock::time_point deadline) {
    if (done || Clock::now() >= deadline) return;
    io_.restart();
    io_.run_until(deadline);
  }

  // One read of whatever arrived; false when the deadline passed first or the stream ended.
  bool readSome(Clock::time_point deadline) {
    namespace http = boost::beast::http;
    if (!pending_) {
      pending_ = true;
      done_ = false;
      parser_.get().body().data = chunk_.data();
      parser_.get().body().size = chunk_.size();
      http::async_read_some(stream_, buffer_, parser_, [this](boost::beast::error_code ec, std::size_t) {
        pending_ = false;
        done_ = true;
        text_.append(chunk_.data(), chunk_.size() - parser_.get().body().size);
        if (ec == http::error::need_buffer) ec = {};
        if (ec) {
          error_ = ec;
          ended_ = true;
        } else if (parser_.is_done()) {
          ended_ = true;
        }
      });
    }
    runUntil(done_, deadline);
    return done_ && !ended_;
  }

  std::optional<ServerSentEvent> take() {
    std::size_t end = text_.find("\n\n");
    if (end == std::string::npos) return std::nullopt;
    std::string block = text_.substr(0, end + 1);
    text_.erase(0, end + 2);
    ServerSentEvent event;
    bool has_data = false;
    std::size_t start = 0;
    while (start < block.size()) {
      std::size_t eol = block.find('\n', start);
      std::string line = block.substr(start, eol - start);
      start = eol + 1;
      auto value = [&](std::size_t prefix) {
        std::string v = line.substr(prefix);
        return v.starts_with(" ") ? v.substr(1) : v;
      };
      if (line.starts_with(":")) event.comment = value(1);
      else if (line.starts_with("id:")) event.id = value(3);
      else if (line.starts_with("event:")) event.event = value(6);
      else if (line.starts_with("data:")) {
        event.data += (has_data ? "\n" : "") + value(5);
        has_data = true;
      }
    }
    return event;
  }

  boost::asio::io_context io_;
  Stream stream_;
  boost::beast::http::request<boost::beast::http::empty_body> request_;
  boost::beast::flat_buffer buffer_;
  boost::beast::http::response_parser<boost::beast::http::buffer_body> parser_;
  std::array<char, 16 * 1024> chunk_{};
  std::string text_;  // body bytes not yet taken as events
  boost::beast::error_code error_;
  bool header_read_ = false, ended_ = false, pending_ = false, done_ = false, step_done_ = false;
};

template <>
inline boost::beast::tcp_stream BasicEventStreamClient<boost::beast::tcp_stream>::makeStream(
    boost::asio::ssl::context*) {
  return boost::beast::tcp_stream(io_);
}
template <>
inline boost::beast::ssl_stream<boost::beast::tcp_stream>
BasicEventStreamClient<boost::beast::ssl_stream<boost::beast::tcp_stream>>::makeStream(boost::asio::ssl::context* tls) {
  return boost::beast::ssl_stream<boost::beast::tcp_stream>(io_, *tls);
}

using EventStreamClient = BasicEventStreamClient<boost::beast::tcp_stream>;
using TlsEventStreamClient = BasicEventStreamClient<boost::beast::ssl_stream<boost::beast::tcp_stream>>;

}  // namespace npac::npacd::testing
