// ThrottleExchange: the link between the npacd nodes of an egress throttle list (DSR
// "Egress Throttle Lists"; docs/OPERATIONS.md "Egress throttling") — through the database
// they share, on a thread of its own.
//
// Every kReportPeriod (and at once when the API changed a group, ThrottleGroups::
// requestReload) one cycle:
//   1. reads the provisioned groups (db::ThrottleGroupStore::list) and puts them in force
//      (ThrottleGroups::apply) — so a group made or changed at any node applies at every
//      node within a period, on SQLite as on PostgreSQL;
//   2. on PostgreSQL (several nodes): writes this node's counts per group and reads every
//      node's, with their age by the database's clock (ThrottleGroups::applyReports).
// Why the database and not direct connections between nodes: the nodes already share it
// and trust it (leases, fencing, NOTIFY), so the exchange needs no new port, peer list,
// authentication or TLS; and a node cut off from the database is one that cannot exchange
// counts, which the lists treat as a lost peer — the same failure, one rule. What it costs:
// reports ride on the database's latency (a period of 250 ms plus a commit), well inside
// the 1 s rate window.
// A cycle that fails is logged (once until one succeeds again) and the groups stay as they
// were; the peers' reports then age and count as lost after kStaleReport, so a node that
// cannot reach the database keeps to its reduced maxima.
// At stop(), this node's reports are removed (a clean stop leaves the lists at once).
//
// Threading: start() and stop() from the main thread; the cycles run on the exchange's
// thread with its own connection (db::Database is one thread at a time). A read blocked
// by a database that does not answer is bounded by --db-timeout.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "db/database.h"
#include "db/status.h"
#include "npac/npacd/core/throttle_groups.h"

namespace npac::npacd {

class ThrottleExchange {
 public:
  // Runs the first cycle before returning (the groups are in force before the first bind),
  // then the thread. Errors: the first read of the groups failed.
  static db::Result<std::unique_ptr<ThrottleExchange>> start(std::unique_ptr<db::Database> db, ThrottleGroups& groups);
  ~ThrottleExchange();
  ThrottleExchange(const ThrottleExchange&) = delete;
  ThrottleExchange& operator=(const ThrottleExchange&) = delete;

  // Ends the thread and removes this node's reports. Idempotent.
  void stop();
  // One cycle now, on the caller's thread (tests; not while the thread runs).
  db::Status cycle();

 private:
  ThrottleExchange(std::unique_ptr<db::Database> db, ThrottleGroups& groups);
  void run();
  void wake();

  std::unique_ptr<db::Database> db_;
  ThrottleGroups& groups_;
  const bool share_counts_;  // several nodes may share the database (PostgreSQL)
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool reload_ = false;
  bool failing_ = false;  // said so in the log; said again once a cycle succeeds
  std::thread thread_;
};

}  // namespace npac::npacd
