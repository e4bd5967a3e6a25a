// Listener: the acceptor for provider associations (RFC 1006 over TCP) and the set of
// connections accepted but not yet bound — the Asio examples' "listener" role. It accepts,
// hands each connection to a Session made by the SessionFactory, and keeps every session
// until its owner calls forget() (bound, or refused) or it ends on its own. What it bounds:
//
//   - max_unbound_connections (read live from the registry): a connection accepted beyond
//     it drops the OLDEST unbound one, so a flood of idle connections can never keep a
//     provider's fresh bind out;
//   - bind_timeout: tick(now) closes unbound connections older than it (the manager's
//     periodic tick calls it with the injected common::TimeSource's time);
//   - the descriptor limit: on EMFILE/ENFILE the oldest unbound connections are closed so
//     that kFdHeadroom descriptors stay free for bound associations, the admin API and
//     SQLite, and the unbound set is capped below that level until it empties. With no
//     unbound connection to give up, a reserve descriptor (/dev/null, opened at listen())
//     is closed to accept one pending connection and close it at once (the backlog drains
//     instead of waking the acceptor again and again), then re-opened; every descriptor or
//     memory error (EMFILE, ENFILE, ENOBUFS, ENOMEM) backs the acceptor off
//     (kAcceptBackoffFirst doubling to kAcceptBackoffMax, reset by a successful accept)
//     rather than retrying at once;
//   - logging: each kind of event logs its first occurrence at once, then at most one line
//     per kAcceptLogInterval saying how many were not logged.
//
// Threading: everything runs on the core io_context thread, like the Sessions; the
// counters are read there too (tests read them between io runs).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "associations/nsap.h"
#include "associations/outstanding.h"
#include "common/time_source.h"
#include "common/timer.h"
#include "npac/npacd/core/session.h"
#include "tunables/registry.h"

namespace npac::npacd {

// Accept back-off after a descriptor or memory error: first wait, doubled up to the max.
inline constexpr std::chrono::milliseconds kAcceptBackoffFirst{10};
inline constexpr std::chrono::milliseconds kAcceptBackoffMax{1000};
// One log line per kind of accept event at most this often (after the first).
inline constexpr std::chrono::seconds kAcceptLogInterval{10};
// Descriptors kept free at the descriptor limit for everything but unbound connections.
inline constexpr std::size_t kFdHeadroom = 16;

class Listener {
 public:
  struct Counters {
    std::uint64_t accepted = 0;             // connections handed to a Session
    std::uint64_t dropped_over_cap = 0;     // oldest unbound closed: max_unbound_connections
    std::uint64_t dropped_at_fd_limit = 0;  // oldest unbound closed: EMFILE/ENFILE
    std::uint64_t shed_at_fd_limit = 0;     // accepted on the reserve descriptor, closed
    std::uint64_t bind_timeouts = 0;        // unbound closed at bind_timeout
    std::uint64_t accept_errors = 0;        // async_accept failures of any kind
  };
  // Makes the Session for an accepted connection (the manager sets its options and owner).
  using SessionFactory = std::function<std::shared_ptr<Session>(
      boost::asio::ip::tcp::socket socket, associations::Nsap nsap, std::string peer)>;

  // `timers`: on `io`'s thread (the accept back-off's).
  Listener(boost::asio::io_context& io, common::TimerFactory& timers, const tunables::TunableRegistry& registry,
           const common::TimeSource& clock, SessionFactory factory);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Listens on `endpoint` and starts accepting; kCannotListen (the address and the
  // system's reason) if it cannot bind.
  Status listen(const boost::asio::ip::tcp::endpoint& endpoint);
  std::uint16_t port() const;
  // Stops accepting and closes every unbound connection with `reason`. Idempotent.
  void stop(const std::string& reason);

  // Closes unbound connections accepted bind_timeout or more before `now`.
  void tick(associations::TimePoint now);
  // `session` is no longer unbound (bound, or refused): the Listener lets go of it.
  void forget(const Session& session);

  // Listening and not stopped (GET /ready).
  bool accepting() const { return !stopped_ && acceptor_.is_open(); }
  std::size_t unboundCount() const { return unbound_.size(); }
  const Counters& counters() const { return counters_; }
  // The cap learnt at the descriptor limit; SIZE_MAX while none applies.
  std::size_t descriptorCap() const { return fd_cap_; }

 private:
  struct Unbound {
    std::shared_ptr<Session> session;
    associations::TimePoint accepted_at;
  };
  // First occurrence at once, then at most one per kAcceptLogInterval.
  struct LogLimiter {
    std::optional<associations::TimePoint> last;
    std::uint64_t suppressed = 0;
    // true: log now; `*skipped` = occurrences not logged since the last line.
    bool due(associations::TimePoint now, std::uint64_t* skipped);
  };

  void acceptNext();
  void onAccepted(boost::asio::ip::tcp::socket socket);
  void onAcceptError(const boost::system::error_code& ec);
  // EMFILE/ENFILE: true if unbound connections were closed to make room.
  bool makeRoom(const boost::system::error_code& ec);
  // No unbound connection to give up: accept one pending connection on the reserve
  // descriptor and close it.
  void shedOne();
  void backOff();  // waits backoff_, then accepts again
  // Closes the oldest unbound connection (already removed from the set first).
  void closeOldest(const std::string& reason);
  void openReserve();

  boost::asio::io_context& io_;
  const tunables::TunableRegistry& registry_;
  const common::TimeSource& clock_;
  SessionFactory factory_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::unique_ptr<common::Timer> backoff_timer_;
  std::chrono::milliseconds backoff_{0};
  int reserve_fd_ = -1;
  std::list<Unbound> unbound_;  // oldest first
  std::unordered_map<const Session*, std::list<Unbound>::iterator> index_;
  std::size_t fd_cap_ = std::numeric_limits<std::size_t>::max();
  Counters counters_;
  LogLimiter over_cap_log_, fd_limit_log_, error_log_, timeout_log_;
  bool stopped_ = false;
  // Sessions outlive the Listener in pending handlers; their end-before-bind callback
  // checks this first.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace npac::npacd
