#include "db/notification_listener.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>

#include <spdlog/spdlog.h>

#include "common/time_source.h"
#include "db/database.h"
#include "db/postgres_array.h"
#include "db/postgres_connection.h"
#include "db/postgres_io.h"
#include "db/statement.h"

namespace npac::db {
namespace {

bool isIdentifier(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char ch : name) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  }
  return true;
}

PGconn* pg(void* conn) { return static_cast<PGconn*>(conn); }

// Reconnection backoff, bounded: a database that is down is asked at most every 2 s.
constexpr auto kRetryFirst = std::chrono::milliseconds(100);
constexpr auto kRetryMost = std::chrono::milliseconds(2000);

}  // namespace

namespace {

bool isNodeName(std::string_view text) {
  if (text.empty() || text.size() > 128) return false;
  for (char ch : text) {
    if (ch <= ' ' || ch > '~') return false;
  }
  return true;
}

bool isSpid(std::string_view text) {
  if (text.size() != 4) return false;
  for (char ch : text) {
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))) return false;
  }
  return true;
}

}  // namespace

NodeNotification classifyNotification(std::string_view channel, std::string_view payload) {
  using Kind = NodeNotification::Kind;
  if (channel.empty()) return {Kind::kResync, {}, {}};
  if (channel == kSubmittedChannel) {
    const std::size_t space = payload.find(' ');
    const std::string_view spid = payload.substr(0, space);
    const std::string_view node = space == std::string_view::npos ? std::string_view() : payload.substr(space + 1);
    if (!isSpid(spid) || (space != std::string_view::npos && !isNodeName(node))) return {};
    return NodeNotification{Kind::kSubmitted, std::string(spid), std::string(node)};
  }
  if (channel != kChangedChannel) return {};
  if (payload == kTunablesChanged) return {Kind::kTunablesChanged, {}, {}};
  if (payload.substr(0, kProviderChangedPrefix.size()) == kProviderChangedPrefix) {
    const std::string_view spid = payload.substr(kProviderChangedPrefix.size());
    if (isSpid(spid)) return {Kind::kProviderChanged, std::string(spid), {}};
  }
  return {};
}

Status notifyNodes(Database& db, std::string_view channel, std::string_view payload) {
  if (db.backend() != Backend::kPostgres) return Status::ok();
  Result<Statement> notify = db.prepare("SELECT pg_notify(?, ?)");
  if (!notify) return notify.status();
  notify->bindText(0, channel).bindText(1, payload);
  Result<bool> row = notify->step();
  if (!row) return row.status();
  notify->reset();
  return Status::ok();
}

Status notifyNodes(Database& db, std::string_view channel, const std::vector<std::string>& payloads) {
  if (db.backend() != Backend::kPostgres || payloads.empty()) return Status::ok();
  if (payloads.size() == 1) return notifyNodes(db, channel, payloads.front());
  PostgresArray texts(PostgresArray::Type::kText);
  for (const std::string& payload : payloads) texts.addText(payload);
  Result<Statement> notify = db.prepare("SELECT count(pg_notify(?, p)) FROM unnest(CAST(? AS text[])) AS p");
  if (!notify) return notify.status();
  notify->bindText(0, channel).bindBlob(1, texts.encoded());
  Result<bool> row = notify->step();
  if (!row) return row.status();
  notify->reset();
  return Status::ok();
}

NotificationListener::NotificationListener(std::string url, std::vector<std::string> channels, Handler handler,
                                           std::chrono::milliseconds answer_timeout)
    : url_(std::move(url)),
      channels_(std::move(channels)),
      handler_(std::move(handler)),
      answer_timeout_(answer_timeout) {}

Result<std::unique_ptr<NotificationListener>> NotificationListener::start(const std::string& url,
                                                                          std::vector<std::string> channels,
                                                                          Handler handler,
                                                                          std::chrono::milliseconds answer_timeout) {
  if (!isPostgresUrl(url)) return Status::invalidArgument("LISTEN/NOTIFY needs a postgresql:// database");
  for (const std::string& channel : channels) {
    if (!isIdentifier(channel)) return Status::invalidArgument("not a channel name: '" + channel + "'");
  }
  std::unique_ptr<NotificationListener> listener(
      new NotificationListener(url, std::move(channels), std::move(handler), answer_timeout));
  if (::pipe2(listener->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::internal("cannot create the listener's wake-up pipe");
  }
  if (Status status = listener->connect(); !status) return status;
  listener->thread_ = std::thread([raw = listener.get()] { raw->run(); });
  return listener;
}

Status NotificationListener::connect() {
  if (conn_ != nullptr) PQfinish(pg(conn_));
  conn_ = nullptr;
  // Bounded like every other connection (db/postgres_io.h): a server that does not
  // answer costs this thread one answer bound per attempt, and stop() at most that.
  const auto deadline = common::realTimeSource().now() + answer_timeout_;
  std::string error;
  bool timed_out = false;
  pg_conn* conn = pgio::connectBefore({url_, "npacd listener"}, deadline, &error, &timed_out);
  if (conn == nullptr) {
    return Status::make(Status::Code::kUnavailable, "LISTEN connection: " + error, redactPostgresUrl(url_));
  }
  std::string listen;
  for (const std::string& channel : channels_) listen += "LISTEN " + channel + ";";
  PGresult* result = nullptr;
  const pgio::Exchange exchanged =
      pgio::exchange(conn, [&](pg_conn* c) { return PQsendQuery(c, listen.c_str()); }, deadline, &result);
  const bool ok = exchanged == pgio::Exchange::kAnswered && PQresultStatus(result) == PGRES_COMMAND_OK;
  PQclear(result);
  if (!ok) {
    std::string why = exchanged == pgio::Exchange::kNoAnswer ? "no answer in time" : PQerrorMessage(conn);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    PQfinish(conn);
    return Status::make(Status::Code::kUnavailable, "LISTEN: " + why, redactPostgresUrl(url_));
  }
  conn_ = conn;
  return Status::ok();
}

void NotificationListener::run() {
  auto retry = kRetryFirst;
  bool lost_said = false;
  while (!stopping_.load()) {
    if (conn_ == nullptr) {
      pollfd wait{wake_pipe_[0], POLLIN, 0};
      ::poll(&wait, 1, static_cast<int>(retry.count()));
      if (stopping_.load()) break;
      if (Status status = connect(); !status) {
        if (!lost_said) spdlog::warn("notifications: {}; retrying", status.toString());
        lost_said = true;
        retry = std::min(retry * 2, kRetryMost);
        continue;
      }
      ++reconnects_;
      spdlog::info("notifications: listening again on the database; resynchronising");
      lost_said = false;
      retry = kRetryFirst;
      handler_("", "");  // whatever was notified meanwhile is unknown
    }
    pollfd fds[2] = {{PQsocket(pg(conn_)), POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    const int ready = ::poll(fds, 2, 1000);
    if (stopping_.load()) break;
    if (ready < 0) continue;  // EINTR
    if (fds[0].revents == 0) continue;
    if (PQconsumeInput(pg(conn_)) == 0 || PQstatus(pg(conn_)) != CONNECTION_OK) {
      spdlog::warn("notifications: the LISTEN connection was lost ({}); reconnecting",
                   std::string(PQerrorMessage(pg(conn_))).substr(0, 200));
      PQfinish(pg(conn_));
      conn_ = nullptr;
      lost_said = true;
      continue;
    }
    while (PGnotify* note = PQnotifies(pg(conn_))) {
      ++received_;
      handler_(note->relname, note->extra != nullptr ? note->extra : "");
      PQfreemem(note);
    }
  }
}

void NotificationListener::stop() {
  if (stopping_.exchange(true)) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  if (wake_pipe_[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t written = ::write(wake_pipe_[1], &byte, 1);
  }
  if (thread_.joinable()) thread_.join();
}

NotificationListener::~NotificationListener() {
  stop();
  if (conn_ != nullptr) PQfinish(pg(conn_));
  for (int fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

}  // namespace npac::db
