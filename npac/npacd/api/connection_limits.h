// ConnectionLimits: the admin API's connection accounting (docs/API.md "Connection
// limits") without sockets — where each connection counts, whether a request is
// admitted, and which connection is closed to make room. HttpServer keeps one; its
// sessions are the ConnectionAccounts.
//
// A credential buys its place: a connection that has not presented one never costs one
// that has, and a lower role never costs a higher one. So connections live in two pools:
//
//   anonymous     every connection until one of its requests carries a valid token: the
//                 TLS handshake, the first request's header, public probes, 401s. At most
//                 max_anonymous in all and max_per_client per address. A new connection
//                 past either closes the OLDEST anonymous one (of its address, or of all):
//                 holding connections open buys an attacker nothing, and the newest — an
//                 operator's about to send a request — is the last to go.
//   credentialed  a connection whose latest valid token has a role: at most
//                 max_connections in all, readers and applications together at most
//                 max_connections - operator_reserve (so operators always have
//                 operator_reserve places); at most max_per_client per address AND role,
//                 so a reader's connections never count against an application's or an
//                 operator's from the same address; at most max_per_credential per
//                 Authorization value. Room is made by closing the longest-idle
//                 credentialed connection that is not an operator's; an operator's is
//                 never closed for room.
//
// A request classified anonymous on a credentialed connection (a public probe) leaves it
// where it is: a connection is what the latest valid token it presented says.
//
// Threading: none of its own; HttpServer uses it on its io_context thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace npac::npacd {

// Who a request is, for the connection limits: HttpServer::Options::classify's answer,
// lowest first. kAnonymous: no valid credential (none, malformed, unknown or revoked).
enum class RequestPriority { kAnonymous, kReader, kApplication, kOperator };
const char* toString(RequestPriority priority);  // "anonymous", "reader", ...

// One connection as the limits see it (HttpSessionBase is one).
struct ConnectionAccount {
  enum class Pool { kNone, kAnonymous, kCredentialed };
  std::string address;                       // the client's IP address
  RequestPriority priority = RequestPriority::kAnonymous;
  std::optional<std::size_t> credential;     // hash of the Authorization value it is counted for
  bool idle = true;                          // waiting for a request (set by the session)
  std::uint64_t idle_mark = 0;               // ConnectionLimits::nextMark() when it became idle
  std::uint64_t arrival = 0;                 // order of acceptance (set by accept())
  Pool pool = Pool::kNone;                   // kept by ConnectionLimits
};

class ConnectionLimits {
 public:
  struct Limits {
    std::size_t max_connections = 256;    // credentialed connections
    std::size_t operator_reserve = 8;     // of them, only for operators
    std::size_t max_per_client = 32;      // per address: anonymous, and per role
    std::size_t max_per_credential = 32;  // per Authorization value
    std::size_t max_anonymous = 64;       // anonymous connections in all
  };
  explicit ConnectionLimits(Limits limits);  // each limit taken as at least 1
  ConnectionLimits(const ConnectionLimits&) = delete;
  ConnectionLimits& operator=(const ConnectionLimits&) = delete;

  // A connection just accepted: counted anonymous. Returns the anonymous connections
  // closed for its room (already out of the book; the caller closes their sockets).
  std::vector<ConnectionAccount*> accept(ConnectionAccount& account);

  enum class Refusal { kNone, kPerClient, kPerCredential, kOperatorReserve, kFull };
  struct Admission {
    Refusal refusal = Refusal::kNone;
    std::size_t holding = 0;  // what the limit that refused counted
    std::vector<ConnectionAccount*> closed_for_room;  // out of the book; close them
  };
  // A request of `account` classified `priority`, carrying `credential` (the hash of its
  // Authorization value, if any). Admitted: the account now counts as `priority` and
  // `credential` (unless `priority` is kAnonymous: then it stays where it is). Refused:
  // nothing changes but what was closed for room (nothing, when a refusal is certain).
  Admission admit(ConnectionAccount& account, RequestPriority priority, std::optional<std::size_t> credential);

  // Out of the book (a closed connection); again is a no-op.
  void remove(ConnectionAccount& account);

  // For descriptor exhaustion: the oldest anonymous connection, else the longest-idle
  // credentialed one that is not an operator's — out of the book — or nullptr.
  ConnectionAccount* takeForRoom();

  std::uint64_t nextMark() { return ++marks_; }
  std::size_t anonymous() const { return anonymous_.size(); }
  std::size_t credentialed() const { return credentialed_.size(); }
  const Limits& limits() const { return limits_; }

 private:
  // admit()'s limits per client address and role, and per credential: true, with the
  // refusal in `out`, when one of them refuses.
  bool refusedPerSource(const ConnectionAccount& account, RequestPriority priority,
                        std::optional<std::size_t> credential, Admission& out) const;
  ConnectionAccount* oldestAnonymous(const std::string* address) const;
  ConnectionAccount* longestIdleNonOperator(const ConnectionAccount* except) const;
  void count(ConnectionAccount& account);
  void uncount(ConnectionAccount& account);

  Limits limits_;
  std::unordered_set<ConnectionAccount*> anonymous_;
  std::unordered_set<ConnectionAccount*> credentialed_;
  std::size_t non_operators_ = 0;  // of credentialed_, those whose role is not operator
  std::unordered_map<std::string, std::size_t> anonymous_per_client_;
  std::map<std::pair<std::string, RequestPriority>, std::size_t> per_client_;  // credentialed
  std::unordered_map<std::size_t, std::size_t> per_credential_;
  std::uint64_t arrivals_ = 0;
  std::uint64_t marks_ = 0;
};

}  // namespace npac::npacd
