// ThrottleGroupStore: the provisioned egress throttle groups (tables throttle_groups and
// throttle_group_members, schema 13) and the counts the npacd nodes sharing a database
// report to each other for them (table throttle_reports) — DSR "Egress Throttle Lists"
// (docs/OPERATIONS.md "Egress throttling").
//
// A group names a far end (a service bureau serving several SPIDs): its members, its
// egress message rate maximum (EMR, msg/s) and pending transactions maximum (EPT), its
// onset/abatement percentages (the same rules as the per-provider throttle_* tunables,
// tunables/throttle_levels.h), the least time a level is held, and the percentage its
// maxima lose per peer node this node cannot exchange counts with. A SPID is a member of
// one group at most (throttle_group_members' key is the SPID).
//
// The reports are the nodes' link (the "count exchange"): each node upserts, a few times a
// second, its own egress rate and pending count per group; each reads the others'. Their
// age is measured by the DATABASE's clock (`at` is written and compared by the server), so
// the nodes' own clocks need not agree.
//
// Writes join the caller's transaction, so a caller can make a change and its audit entry
// atomic (as TunableStore). create() and replace() write several rows: each runs as a
// savepoint of that transaction (db/transaction.h; a transaction of its own when there is
// none), so a refusal leaves nothing half-written and the caller's transaction usable.
// Validation of the values is the caller's (the API); the store enforces the keys
// (kConstraint: a name taken, a SPID already in another group).
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/clock.h"
#include "db/status.h"

namespace npac::db {

class Database;

struct ThrottleGroupDefinition {
  std::string name;                  // 1..64 of A-Z a-z 0-9 . _ -
  std::vector<std::string> members;  // SPIDs, ascending, distinct
  std::int64_t max_rate = 0;         // EMR maximum, msg/s; 0 = not limited
  std::int64_t max_pending = 0;      // EPT maximum, transactions; 0 = not limited
  // Percentages of the (effective) maxima; level n in use when both are non-zero.
  std::array<std::int32_t, 3> onset{100, 0, 0};
  std::array<std::int32_t, 3> abatement{80, 0, 0};
  std::int64_t min_abatement_ms = 2000;
  std::int32_t peer_loss_reduction_percent = 50;  // per peer node not exchanging counts
  TimeMs updated_at = 0;
  std::string updated_by;

  friend bool operator==(const ThrottleGroupDefinition&, const ThrottleGroupDefinition&) = default;
};

// What one node says about one group.
struct ThrottleReport {
  std::string group;
  std::string node;
  double rate = 0;            // messages per second sent to the group's members
  std::int64_t pending = 0;   // requests sent to them and not yet answered
  bool wanting = false;       // messages of the members are held by the group's throttle
  std::int64_t age_ms = 0;    // read: how long ago it was written, by the database's clock
};

class ThrottleGroupStore {
 public:
  explicit ThrottleGroupStore(Database& db) : db_(db) {}

  // Every group, by name, with its members.
  Result<std::vector<ThrottleGroupDefinition>> list();
  // kNotFound when there is no such group.
  Result<ThrottleGroupDefinition> get(std::string_view name);
  // kConstraint naming the conflict: the name is taken, or a member is in another group
  // ("SPID 0002 is a member of throttle group bureau-b").
  Status create(const ThrottleGroupDefinition& group);
  // Replaces limits and members; kNotFound, or kConstraint for a member of another group.
  Status replace(const ThrottleGroupDefinition& group);
  // Removes the group, its members and its reports; kNotFound when absent.
  Status remove(std::string_view name);

  // Writes this node's reports (one per group; age_ms ignored), replacing its earlier ones
  // for those groups; a report naming a group that no longer exists is skipped silently
  // (the group was removed meanwhile by another node).
  Status report(std::string_view node, const std::vector<ThrottleReport>& reports);
  // Every node's reports, with their age by the database's clock.
  Result<std::vector<ThrottleReport>> reports();
  // Removes this node's reports (a node stopping cleanly leaves the lists it was in).
  Status forgetNode(std::string_view node);

 private:
  Database& db_;
};

}  // namespace npac::db
