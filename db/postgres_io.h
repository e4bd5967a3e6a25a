// Bounded libpq I/O: connecting and exchanging one request with a PostgreSQL server,
// each within a deadline, so that a server that stops answering (paused, hung, behind a
// black-holed network) costs the caller a bounded wait instead of a frozen thread.
//
// libpq's blocking calls (PQconnectdb, PQexec, PQprepare, PQexecPrepared, PQreset) wait
// for the server for as long as it takes: a server stopped with SIGSTOP keeps its TCP
// connections open (the kernel still acknowledges), so neither TCP keepalives nor
// libpq's connect_timeout end such a wait once the session is up. These functions use
// libpq's asynchronous interface instead (libpq "Asynchronous Command Processing",
// "Database Connection Control Functions": PQconnectStartParams/PQconnectPoll) and poll()
// the socket with what is left of the deadline.
//
// A request that got no answer in time leaves its connection in an unknown state (the
// server may still run it later, a COMMIT included): the caller must drop the
// connection (PQfinish), never reuse it.
//
// Threading: free functions on a connection the calling thread owns.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

struct pg_conn;
struct pg_result;

namespace npac::db::pgio {

using Deadline = std::chrono::steady_clock::time_point;

// The connection parameters npacd adds before a URL's own (the URL wins where it names
// one): TCP keepalives so a vanished server or network is noticed by the kernel too
// (libpq "Parameter Key Words": keepalives, keepalives_idle, keepalives_interval,
// keepalives_count) and the application name seen in pg_stat_activity.
struct ConnectParameters {
  std::string url;  // the postgresql:// URL, password included: never logged
  std::string application_name = "npacd";
};

// Connects within `deadline`. On success returns a connection in CONNECTION_OK state, in
// non-blocking mode; else nullptr with `error` set (libpq's message, or "no answer
// within …" when the deadline passed) and `timed_out` true for the latter.
pg_conn* connectBefore(const ConnectParameters& parameters, Deadline deadline, std::string* error,
                       bool* timed_out);

// What exchange() found.
enum class Exchange {
  kAnswered,   // `result` holds the answer (PQexec's rule: the last result, or the first error)
  kLost,       // the connection failed (libpq's message in PQerrorMessage)
  kNoAnswer,   // the deadline passed first: drop the connection
};

// Sends one request with `send` (a PQsend* call returning 1 on success) and collects
// every result of it within `deadline`. `*result` is set on kAnswered (may be an error
// result; the caller PQclear()s it).
Exchange exchange(pg_conn* conn, const std::function<int(pg_conn*)>& send, Deadline deadline,
                  pg_result** result);

// As exchange(), with the statements of `ahead` (each one statement without parameters,
// such as BEGIN or SAVEPOINT) sent first in the same round trip (libpq "Pipeline Mode":
// PQenterPipelineMode, one PQpipelineSync). `send` must be a call pipeline mode allows
// (PQsendQueryParams, PQsendQueryPrepared, PQsendPrepare; not PQsendQuery). `*result` is
// the first error among all of them, else the result of `send`'s request. The connection
// leaves pipeline mode before this returns kAnswered.
Exchange exchangePipelined(pg_conn* conn, const std::vector<std::string>& ahead,
                           const std::function<int(pg_conn*)>& send, Deadline deadline, pg_result** result);

}  // namespace npac::db::pgio
