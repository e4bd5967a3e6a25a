// NotificationListener: PostgreSQL LISTEN/NOTIFY for npacd nodes sharing one database
// (docs/OPERATIONS.md "Two sites"). A message submitted through any node's API, or an
// operator's change made on any node, must reach the node that owns the provider without
// that node polling the tables: the writer sends NOTIFY on a channel inside its
// transaction (PostgreSQL delivers it at COMMIT, and never for a rolled-back one), and
// each node listens on its own connection.
//
// Channels (payloads are short texts):
//   kSubmittedChannel  "<SPID> <node>": a provider has new rows in outbound_queue, committed
//                      by the npacd node named (db::QueueWriter, one per provider per
//                      committed batch). A bare "<SPID>" (a writer without a node name)
//                      is a submission from an unknown node.
//   kChangedChannel    "tunables" (an override changed: reload the registry), or
//                      "provider:<SPID>" (the provider was enabled, disabled, changed).
// A connection lost and made again may have missed notifications: the handler is then
// called once with channel "" (resynchronise: wake every provider, reload tunables).
//
// Threading: start() from any thread; the listener runs one thread of its own with its
// own libpq connection; the handler runs on that thread (keep it short: post to your
// strand). stop() and the destructor end it within about one poll period.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "db/status.h"

namespace npac::db {

inline constexpr std::string_view kSubmittedChannel = "npacd_submitted";
inline constexpr std::string_view kChangedChannel = "npacd_changed";

class Database;

// NOTIFY `channel` with `payload` on `db` (inside the caller's transaction, if any: sent at
// its COMMIT). On SQLite, where one npacd is alone, nothing to do: ok.
Status notifyNodes(Database& db, std::string_view channel, std::string_view payload);
// The same for several payloads, in one statement (one round trip).
Status notifyNodes(Database& db, std::string_view channel, const std::vector<std::string>& payloads);

// The payloads of kChangedChannel.
inline constexpr std::string_view kTunablesChanged = "tunables";
inline constexpr std::string_view kProviderChangedPrefix = "provider:";

// What a received notification asks of a node, read from (channel, payload) as the
// handler gets them. A SPID must be 4 ASCII letters or digits; anything else — an unknown
// channel or payload, a malformed SPID, a NOTIFY sent by hand on our channels — is
// kIgnored (the caller logs it at debug level and does nothing).
// A submission's node name is 1..128 visible ASCII characters (no space).
struct NodeNotification {
  enum class Kind { kResync, kSubmitted, kTunablesChanged, kProviderChanged, kIgnored };
  Kind kind = Kind::kIgnored;
  std::string spid;  // kSubmitted, kProviderChanged
  std::string node;  // kSubmitted: the node whose writer committed the rows; "" unknown
};
NodeNotification classifyNotification(std::string_view channel, std::string_view payload);

class NotificationListener {
 public:
  using Handler = std::function<void(const std::string& channel, const std::string& payload)>;

  // Connects to the PostgreSQL `url`, LISTENs on `channels` and starts the thread. Errors:
  // kInvalidArgument (not a postgresql:// URL, a channel that is not an identifier),
  // kUnavailable / kCantOpen when the first connection fails. When start() returns, the
  // LISTEN is in force: whatever commits from now on is notified (subscribe, then read).
  // `answer_timeout` bounds each connection attempt (db/postgres_io.h).
  static Result<std::unique_ptr<NotificationListener>> start(
      const std::string& url, std::vector<std::string> channels, Handler handler,
      std::chrono::milliseconds answer_timeout = std::chrono::milliseconds(5000));
  ~NotificationListener();
  NotificationListener(const NotificationListener&) = delete;
  NotificationListener& operator=(const NotificationListener&) = delete;

  void stop();
  std::uint64_t received() const { return received_.load(); }
  std::uint64_t reconnects() const { return reconnects_.load(); }

 private:
  NotificationListener(std::string url, std::vector<std::string> channels, Handler handler,
                       std::chrono::milliseconds answer_timeout);
  Status connect();  // (re)connects and LISTENs
  void run();

  std::string url_;
  std::vector<std::string> channels_;
  Handler handler_;
  std::chrono::milliseconds answer_timeout_;
  void* conn_ = nullptr;  // PGconn*
  int wake_pipe_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> received_{0};
  std::atomic<std::uint64_t> reconnects_{0};
  std::thread thread_;
};

}  // namespace npac::db
