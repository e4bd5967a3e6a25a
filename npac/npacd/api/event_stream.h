// The pieces of GET /v1/events (event_routes.cc) that need no server: reading its
// interval_ms query value and writing one server-sent event (WHATWG HTML "Server-sent
// events", the text/event-stream format: "id:", "event:", "data:" lines, a blank line
// ending each event, ":" starting a comment). Pure, so the admin API fuzz target drives
// them.
//
// Threading: none (pure functions).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace npac::npacd {

inline constexpr std::chrono::milliseconds kDefaultEventInterval{1000};
inline constexpr std::chrono::milliseconds kMinEventInterval{200};
inline constexpr std::chrono::milliseconds kMaxEventInterval{10'000};
// A comment line this long after the last write, so proxies and clients that time out
// idle connections keep the stream (the HTML standard suggests about every 15 seconds).
inline constexpr std::chrono::milliseconds kEventKeepalive{15'000};

// interval_ms: absent → kDefaultEventInterval; otherwise decimal digits within
// kMinEventInterval..kMaxEventInterval. nullopt and `*out` set, or the sentence for a 400.
std::optional<std::string> parseEventInterval(const std::optional<std::string>& text,
                                              std::chrono::milliseconds* out);

// "id: <id>\nevent: <name>\ndata: <line>\n...\n\n": each line of `data` its own "data:"
// line (a receiver joins them with "\n"), so any text survives; a "\r" is a line end too.
std::string formatServerSentEvent(std::uint64_t id, std::string_view name, std::string_view data);

}  // namespace npac::npacd
