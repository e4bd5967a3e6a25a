// libFuzzer target: what npacd reads from PostgreSQL's LISTEN (db/notification_listener.h)
// — any channel and payload bytes through classifyNotification. Invariants: a SPID it
// returns is 4 ASCII letters or digits and appears in the payload; the empty channel is a
// resynchronisation; nothing else but npacd's two channels is acted on. No crash, no hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "db/notification_listener.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // The first byte is the channel's length; the rest is the channel, then the payload.
  const std::string_view rest = size == 0 ? input : input.substr(1);
  const std::size_t split = size == 0 ? 0 : data[0] % (rest.size() + 1);
  const std::string_view channel = rest.substr(0, split);
  const std::string_view payload = rest.substr(split);
  using Kind = npac::db::NodeNotification::Kind;
  const npac::db::NodeNotification note = npac::db::classifyNotification(channel, payload);
  if (channel.empty() && note.kind != Kind::kResync) std::abort();
  if (!channel.empty() && channel != npac::db::kSubmittedChannel && channel != npac::db::kChangedChannel &&
      note.kind != Kind::kIgnored) {
    std::abort();
  }
  if (note.kind == Kind::kSubmitted || note.kind == Kind::kProviderChanged) {
    if (note.spid.size() != 4 || payload.find(note.spid) == std::string_view::npos) std::abort();
    for (char ch : note.spid) {
      const bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
      if (!ok) std::abort();
    }
  } else if (!note.spid.empty()) {
    std::abort();
  }
  return 0;
}
