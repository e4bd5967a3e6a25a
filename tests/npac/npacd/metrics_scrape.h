// Reading npacd's GET /metrics in end-to-end tests (docs/OPERATIONS.md "Metrics"): a raw
// text GET with or without a token, one scrape with npacd's operator token, and the value
// of one sample picked by name and labels from the text exposition format 0.0.4.
//
// Threading: the test's own thread.
#pragma once

#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "tests/npac/npacd/npacd_fixture.h"

namespace npacd_test {

struct TextReply {
  int status = 0;
  std::string content_type;
  std::string body;
};

// GET `target` with `authorization` (nullopt: none); the raw text answer.
inline TextReply getText(const NpacdClient& npacd, const std::string& target,
                         const std::optional<std::string>& authorization) {
  boost::asio::io_context io;
  boost::beast::tcp_stream stream(io);
  stream.expires_after(30s);
  stream.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), npacd.apiPort()));
  http::request<http::string_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  if (authorization) request.set(http::field::authorization, *authorization);
  http::write(stream, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  return TextReply{static_cast<int>(response.result_int()), std::string(response[http::field::content_type]),
                   response.body()};
}

inline std::string scrape(const NpacdClient& npacd) {
  TextReply r = getText(npacd, "/metrics", "Bearer " + npacd.token());
  REQUIRE(r.status == 200);
  return r.body;
}

// The value of the sample of `name` whose labels include every one of `labels`; nullopt
// when no such sample is in `text`.
inline std::optional<double> sampleValue(const std::string& text, const std::string& name,
                                         const std::map<std::string, std::string>& labels = {}) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t space = line.rfind(' ');
    const std::string series = line.substr(0, space);
    const std::size_t brace = series.find('{');
    if (series.substr(0, brace) != name) continue;
    bool all = true;
    for (const auto& [key, value] : labels) {
      if (series.find(key + "=\"" + value + "\"") == std::string::npos) all = false;
    }
    if (all) return std::stod(line.substr(space + 1));
  }
  return std::nullopt;
}

inline double valueOr0(const std::string& text, const std::string& name,
                       const std::map<std::string, std::string>& labels = {}) {
  return sampleValue(text, name, labels).value_or(0);
}

// How many heartbeats (NANC 404) of `spid` npacd has had answered, over all its
// associations (npacd_heartbeat_round_trip_seconds_count).
inline double heartbeatsAnswered(const NpacdClient& npacd, const std::string& spid) {
  return valueOr0(scrape(npacd), "npacd_heartbeat_round_trip_seconds_count", {{"spid", spid}});
}

}  // namespace npacd_test
