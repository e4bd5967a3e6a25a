#include "db/postgres_io.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>

#include "common/time_source.h"

namespace npac::db::pgio {
namespace {

// Waits until `fd` is ready for `events` or `deadline` passes; false past the deadline.
// An error or hang-up on the socket counts as ready: libpq then reports it.
bool waitFor(int fd, short events, Deadline deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - common::realTimeSource().now());
    if (left.count() <= 0) {
      // One last look without waiting: an answer that arrived just now still counts.
      pollfd ready{fd, events, 0};
      return ::poll(&ready, 1, 0) > 0;
    }
    pollfd ready{fd, events, 0};
    const int n = ::poll(&ready, 1, static_cast<int>(left.count()) + 1);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let libpq find and report the error
  }
}

std::string trimmedMessage(const pg_conn* conn) {
  std::string text = PQerrorMessage(conn);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

pg_conn* connectBefore(const ConnectParameters& parameters, Deadline deadline, std::string* error,
                       bool* timed_out) {
  *timed_out = false;
  // Ours first, the URL last: with expand_dbname the URL's own settings override them.
  const char* keywords[] = {"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
                            "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"1", "10", "5", "3", parameters.application_name.c_str(), parameters.url.c_str(), nullptr};
  pg_conn* conn = PQconnectStartParams(keywords, values, 1);
  if (conn == nullptr) {
    *error = "libpq could not allocate a connection";
    return nullptr;
  }
  if (PQstatus(conn) == CONNECTION_BAD) {
    *error = trimmedMessage(conn);
    PQfinish(conn);
    return nullptr;
  }
  // libpq "Database Connection Control Functions": poll for writing first, then as
  // PQconnectPoll says, until OK or FAILED.
  PostgresPollingStatusType state = PGRES_POLLING_WRITING;
  while (state != PGRES_POLLING_OK) {
    if (state == PGRES_POLLING_FAILED) {
      *error = trimmedMessage(conn);
      PQfinish(conn);
      return nullptr;
    }
    const short events = state == PGRES_POLLING_READING ? POLLIN : POLLOUT;
    if (!waitFor(PQsocket(conn), events, deadline)) {
      *timed_out = true;
      *error = "no answer from the server while connecting";
      PQfinish(conn);
      return nullptr;
    }
    state = PQconnectPoll(conn);
  }
  if (PQsetnonblocking(conn, 1) != 0) {
    *error = trimmedMessage(conn);
    PQfinish(conn);
    return nullptr;
  }
  return conn;
}

namespace {

// Non-blocking mode: a request may not leave in one go (libpq "Asynchronous Command
// Processing", PQflush). Input is consumed meanwhile so the server, which may be writing
// to us, is never blocked by a full socket.
Exchange flushRequest(pg_conn* conn, Deadline deadline) {
  for (;;) {
    const int flushed = PQflush(conn);
    if (flushed == 0) return Exchange::kAnswered;
    if (flushed < 0) return Exchange::kLost;
    if (!waitFor(PQsocket(conn), POLLIN | POLLOUT, deadline)) return Exchange::kNoAnswer;
    if (PQconsumeInput(conn) == 0) return Exchange::kLost;
  }
}

// The next result once it has arrived (nullptr: the end of one query's results).
Exchange nextResult(pg_conn* conn, Deadline deadline, pg_result** next) {
  while (PQisBusy(conn) != 0) {
    if (!waitFor(PQsocket(conn), POLLIN, deadline)) return Exchange::kNoAnswer;
    if (PQconsumeInput(conn) == 0) return Exchange::kLost;
  }
  *next = PQgetResult(conn);
  return Exchange::kAnswered;
}

bool isError(const pg_result* result) {
  return result != nullptr && (PQresultStatus(result) == PGRES_FATAL_ERROR ||
                               PQresultStatus(result) == PGRES_BAD_RESPONSE ||
                               PQresultStatus(result) == PGRES_PIPELINE_ABORTED);
}

// Keeps `next` in `*kept` unless `*kept` is already an error (PQexec's rule: the last
// result, except that the first error is the one kept).
void keep(pg_result** kept, pg_result* next) {
  if (isError(*kept)) {
    PQclear(next);
    return;
  }
  PQclear(*kept);
  *kept = next;
}

}  // namespace

Exchange exchange(pg_conn* conn, const std::function<int(pg_conn*)>& send, Deadline deadline,
                  pg_result** result) {
  *result = nullptr;
  if (send(conn) != 1) return Exchange::kLost;
  if (Exchange sent = flushRequest(conn, deadline); sent != Exchange::kAnswered) return sent;
  pg_result* kept = nullptr;
  for (;;) {
    pg_result* next = nullptr;
    if (Exchange got = nextResult(conn, deadline, &next); got != Exchange::kAnswered) {
      PQclear(kept);
      return got;
    }
    if (next == nullptr) break;
    keep(&kept, next);
  }
  if (kept == nullptr) return Exchange::kLost;
  *result = kept;
  return Exchange::kAnswered;
}

Exchange exchangePipelined(pg_conn* conn, const std::vector<std::string>& ahead,
                           const std::function<int(pg_conn*)>& send, Deadline deadline, pg_result** result) {
  *result = nullptr;
  if (PQenterPipelineMode(conn) != 1) return Exchange::kLost;
  for (const std::string& statement : ahead) {
    if (PQsendQueryParams(conn, statement.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) {
      return Exchange::kLost;
    }
  }
  if (send(conn) != 1 || PQpipelineSync(conn) != 1) return Exchange::kLost;
  if (Exchange sent = flushRequest(conn, deadline); sent != Exchange::kAnswered) return sent;
  // Each query's results end with a null; the sync point's PGRES_PIPELINE_SYNC ends all.
  // More nulls than queries would mean libpq and the server disagree: the connection is
  // then treated as lost rather than waited on.
  pg_result* kept = nullptr;
  std::size_t ends = 0;
  for (;;) {
    pg_result* next = nullptr;
    if (Exchange got = nextResult(conn, deadline, &next); got != Exchange::kAnswered) {
      PQclear(kept);
      return got;
    }
    if (next == nullptr) {
      if (++ends > ahead.size() + 1) {
        PQclear(kept);
        return Exchange::kLost;
      }
      continue;
    }
    if (PQresultStatus(next) == PGRES_PIPELINE_SYNC) {
      PQclear(next);
      break;
    }
    keep(&kept, next);
  }
  if (kept == nullptr || PQexitPipelineMode(conn) != 1) {
    PQclear(kept);
    return Exchange::kLost;
  }
  *result = kept;
  return Exchange::kAnswered;
}

}  // namespace npac::db::pgio
