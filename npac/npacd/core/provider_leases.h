// ProviderLeases: the provider leases one core thread holds (db/lease_store.h), so that a
// provider's logical association lives on one npacd node at a time (docs/OPERATIONS.md
// "Two sites").
//
//   - take(): at a provider's first bind on this node, inside the bind's transaction; the
//     lease is recorded as held by hold() only once that transaction committed.
//   - valid(): whether this node may still act for the provider by its own clock — held,
//     and renewed less than 4/5 of provider_lease_timeout ago (steady time). A node that was
//     paused (SIGSTOP, a stall) sees its leases invalid on waking before anything else
//     runs, and delivers nothing until a renewal says the lease is still its own.
//   - renewDue(): the tick renews every lease last renewed a third of the timeout ago or
//     more, all in one transaction; a renewal refused as fenced (another node took the
//     provider) is reported as lost, and the lease is forgotten. A storage failure is retried at the next tick (the
//     lease runs out meanwhile: valid() turns false).
//   - release(): the provider's last association here ended, or npacd stops: the lease is
//     expired in the database so another node may take it at once (several in one
//     transaction: at stop, one commit for every provider).
// The delivery store's fence asks epoch() (delivery_store.h).
//
// Threading: the core thread only (it uses the core's decisions connection).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "associations/outstanding.h"
#include "common/time_source.h"
#include "db/database.h"
#include "db/lease_store.h"
#include "tunables/registry.h"

namespace npac::npacd {

class ProviderLeases {
 public:
  ProviderLeases(db::Database& db, const common::TimeSource& clock, tunables::TunableRegistry& registry)
      : db_(db), clock_(clock), registry_(registry) {}

  // This node's name (npacd --node); before io runs.
  void setNode(std::string node) { node_ = std::move(node); }
  const std::string& node() const { return node_; }

  // The lease for `spid` (LeaseStore::acquire), inside the caller's transaction.
  db::Result<db::LeaseOutcome> take(const std::string& spid);
  // The caller's transaction committed: the lease taken at `taken_at` is held.
  void hold(const std::string& spid, std::int64_t epoch, associations::TimePoint taken_at);

  bool held(const std::string& spid) const { return held_.count(spid) != 0; }
  std::optional<std::int64_t> epoch(const std::string& spid) const;
  bool valid(const std::string& spid) const;

  // A lost lease: the provider, and why (the fenced renewal's Status).
  struct Lost {
    std::string spid;
    db::Status why;
  };
  // Renews what is due (see above); returns the leases found lost, now forgotten.
  std::vector<Lost> renewDue();
  // Renews `spid` now (a bind while its lease is no longer valid()); ok, kFenced (the
  // lease is forgotten) or a storage failure.
  db::Status renewNow(const std::string& spid);
  // Releases the leases of `spids` held here, all in one transaction (the tick's
  // providers with no association left here; every lease at stop).
  void release(const std::vector<std::string>& spids);
  void forget(const std::string& spid) { held_.erase(spid); }
  std::vector<std::string> heldSpids() const;

 private:
  struct Held {
    std::int64_t epoch = 0;
    associations::TimePoint renewed_at{};  // steady time the last good renewal started
    bool warned = false;                   // said that it could not be renewed
  };
  associations::Duration timeout() const;
  // A renewal of `held` that started at `started` committed.
  static void noteRenewed(const std::string& spid, Held& held, associations::TimePoint started);

  db::Database& db_;
  const common::TimeSource& clock_;
  tunables::TunableRegistry& registry_;
  std::string node_ = "npacd";
  std::map<std::string, Held> held_;
};

}  // namespace npac::npacd
