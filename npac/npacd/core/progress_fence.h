// ProgressFence: the lease fence on the DeliveryStore's progress writes (two or more
// npacd nodes, db/lease_store.h), and which providers it refused.
//
// With a Lease set, every progress write names its provider, and the transaction that
// applies it first checks, in the database (LeaseStore::fence), that this node still holds
// the provider's lease at the epoch the Lease reports. A provider whose lease is lost (or
// not held) has its writes refused — none of them is applied or kept — and
// Lease::on_fenced is called once per turn for it, after the transaction: the owner aborts
// that provider's associations. Until a write of that provider commits again, fenced(spid)
// is true: the PDUs of the round whose `sent` rows were refused must not leave
// (ProviderLinks::release) — those rows belong to the node holding the lease, which
// delivers them. Without a Lease nothing is fenced (one node).
//
// Threading: the core thread only (the DeliveryStore's; checks read its progress connection).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/database.h"
#include "db/status.h"
#include "npac/npacd/core/progress_write.h"

namespace npac::npacd {

class ProgressFence {
 public:
  struct Lease {
    std::string owner;  // this node (--node)
    // The epoch of the provider's lease this node holds; nullopt: none.
    std::function<std::optional<std::int64_t>(const std::string& spid)> epoch_of;
    std::function<void(const std::string& spid, const db::Status& why)> on_fenced;
  };

  // Checks read `db` (the DeliveryStore's progress connection). `on_refused` is called
  // first when a provider's writes are refused: the store drops what it keeps of it.
  ProgressFence(db::Database& db, std::function<void(const std::string& spid)> on_refused)
      : db_(db), on_refused_(std::move(on_refused)) {}

  // Before the first write.
  void set(Lease lease) { lease_ = std::move(lease); }
  bool active() const { return lease_.has_value(); }

  // kFenced when a Lease is set and this node's lease on `spid` is gone (inside the
  // caller's transaction), ok otherwise.
  db::Status check(const std::string& spid);
  // check() once per provider of `writes` into `checked` (a provider already in it is not
  // checked again); stops at a storage failure and returns it.
  std::optional<db::Status> checkAll(const std::vector<ProgressWrite>& writes,
                                     std::map<std::string, db::Status>& checked);
  // `writes` progress writes of `spid` were refused by the fence (`why`).
  void reportFenced(const std::string& spid, const db::Status& why, std::size_t writes);
  // After a turn: the log lines of the writes each failed check (`checked`) dropped.
  void reportDropped(const std::map<std::string, db::Status>& checked,
                     const std::map<std::string, std::size_t>& dropped);
  // A write of `spid` committed: it is no longer fenced.
  void committed(const std::string& spid) { fenced_now_.erase(spid); }
  // A turn committed `writes` but for the providers in `dropped`.
  void committed(const std::vector<ProgressWrite>& writes, const std::map<std::string, std::size_t>& dropped);

  // Progress writes refused because the provider's lease was lost.
  std::uint64_t fencedWrites() const { return fenced_writes_; }
  // The latest progress writes for `spid` were refused, and none has committed since.
  bool fenced(const std::string& spid) const { return fenced_now_.count(spid) != 0; }

 private:
  db::Database& db_;
  std::function<void(const std::string& spid)> on_refused_;
  std::optional<Lease> lease_;
  std::uint64_t fenced_writes_ = 0;
  std::set<std::string> fenced_now_;  // fenced(): refused, nothing committed since
};

}  // namespace npac::npacd
