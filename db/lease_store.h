// LeaseStore: which npacd node owns each provider's logical association (table
// provider_leases, schema 7), and the fence every delivery-progress write passes.
//
// Two or more npacd nodes share one PostgreSQL database (docs/OPERATIONS.md "Two sites").
// A provider's associations all live on one node at a time: the node that holds the
// provider's lease, a row (spid, owner, epoch, expires_at).
//   - acquire(): the first bind of a provider at a node. Succeeds when there is no row,
//     the row has expired, or the row is this node's own; then the row names `owner`,
//     expires at now + ttl, and its epoch is one more than before (1 for a new row). In the
//     same transaction every `sent` row of the provider goes back to `queued`, flagged as a
//     retransmission: what the previous holder (another node, or this node before a
//     restart) had in flight is delivered again, in queue order. A live lease of another
//     node is not an error: the answer names the holder (the bind is refused with it).
//   - renew(): while the provider is bound at the node, extends expires_at, only if the
//     row still carries this node's owner and epoch; otherwise kFenced.
//   - release(): the provider's last association at the node ended (or npacd stops):
//     expires the row now, if still ours, so another node may take it at once.
//   - fence(): inside the transaction of a progress write; kFenced unless the row still
//     carries (owner, epoch). On PostgreSQL it reads the row FOR SHARE, so an acquire by
//     another node (an UPDATE of that row) waits for the write's COMMIT, or the write sees
//     the new epoch and is refused. A node that was paused past its lease therefore
//     cannot record delivery or acknowledgement for a provider it lost.
// Expiry is compared with the caller's wall clock (`now`): the nodes' clocks must agree
// to well within provider_lease_timeout (NTP), as departure_time_window already assumes.
//
// On SQLite there is one node; the same rows and rules apply (an npacd restart takes the
// lease with epoch + 1 and re-queues what the previous run had in flight).
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "db/clock.h"
#include "db/status.h"

namespace npac::db {

class Database;

struct Lease {
  std::string spid;
  std::string owner;  // the npacd node (--node)
  std::int64_t epoch = 0;
  TimeMs expires_at = 0;
  friend bool operator==(const Lease&, const Lease&) = default;
};

struct LeaseOutcome {
  bool acquired = false;
  Lease lease;                       // acquired: ours; refused: the live holder's
  std::size_t requeued = 0;          // acquired: sent rows put back as retransmissions
  std::optional<std::string> previous_owner;  // acquired: the holder before, if any
};

class LeaseStore {
 public:
  explicit LeaseStore(Database& db) : db_(db) {}

  // Errors: kInvalidArgument (empty owner, ttl <= 0), storage errors.
  Result<LeaseOutcome> acquire(std::string_view spid, std::string_view owner, TimeMs now, TimeMs ttl);
  // kFenced when the row no longer carries (owner, epoch) — the lease is lost.
  Status renew(std::string_view spid, std::string_view owner, std::int64_t epoch, TimeMs now, TimeMs ttl);
  // Not an error when the row is already someone else's (nothing to release).
  Status release(std::string_view spid, std::string_view owner, std::int64_t epoch, TimeMs now);
  // kFenced unless the row carries (owner, epoch). Call inside the write's transaction.
  Status fence(std::string_view spid, std::string_view owner, std::int64_t epoch);
  // The row, or nullopt when the provider never had one.
  Result<std::optional<Lease>> get(std::string_view spid);

  // A new association id unique across every node sharing the database (PostgreSQL's
  // sequence association_ids); on SQLite kNotFound: the one node counts itself.
  Result<std::int64_t> nextAssociationId();

 private:
  Database& db_;
};

}  // namespace npac::db
