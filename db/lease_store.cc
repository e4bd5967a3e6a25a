#include "db/lease_store.h"

#include "db/outbound_queue.h"

#include <string>

#include "db/database.h"
#include "db/statement.h"
#include "db/transaction.h"

namespace npac::db {
namespace {

constexpr const char* kFencedHint =
    "another npacd node took the provider over; its associations here are aborted and the "
    "provider re-binds to the owner";

Result<std::optional<Lease>> readLease(Database& db, std::string_view spid, bool lock) {
  std::string sql = "SELECT spid, owner, epoch, expires_at FROM provider_leases WHERE spid = ?";
  // Row lock on PostgreSQL: two nodes acquiring at once serialise on the row (SQLite's
  // single writer already does).
  if (lock && db.backend() == Backend::kPostgres) sql += " FOR UPDATE";
  Result<Statement> query = db.prepare(sql);
  if (!query) return query.status();
  query->bindText(0, spid);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return std::optional<Lease>();
  return std::optional<Lease>(
      Lease{query->columnText(0), query->columnText(1), query->columnInt64(2), query->columnInt64(3)});
}

Status fenced(Database& db, std::string_view spid, std::string_view owner, std::int64_t epoch) {
  std::string now_held = "no node";
  if (Result<std::optional<Lease>> lease = readLease(db, spid, false); lease && lease->has_value()) {
    now_held = "node '" + (*lease)->owner + "' with epoch " + std::to_string((*lease)->epoch);
  }
  return Status::make(Status::Code::kFenced,
                      "the lease on provider " + std::string(spid) + " held by node '" + std::string(owner) +
                          "' with epoch " + std::to_string(epoch) + " is lost: it is now held by " + now_held,
                      db.path(), kFencedHint);
}

}  // namespace

Result<LeaseOutcome> LeaseStore::acquire(std::string_view spid, std::string_view owner, TimeMs now,
                                         TimeMs ttl) {
  if (owner.empty()) return Status::invalidArgument("a lease needs the owning node's name");
  if (ttl <= 0) return Status::invalidArgument("a lease needs a positive duration");
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  LeaseOutcome out;
  Result<Statement> insert = db_.prepare(
      "INSERT INTO provider_leases(spid, owner, epoch, expires_at) VALUES(?, ?, 1, ?) "
      "ON CONFLICT(spid) DO NOTHING");
  if (!insert) return insert.status();
  insert->bindText(0, spid).bindText(1, owner).bindInt64(2, now + ttl);
  if (Status status = insert->run(); !status) return status;
  if (db_.changes() == 1) {
    out.lease = Lease{std::string(spid), std::string(owner), 1, now + ttl};
  } else {
    Result<std::optional<Lease>> held = readLease(db_, spid, true);
    if (!held) return held.status();
    if (!held->has_value()) return Status::internal("provider_leases row vanished inside a transaction");
    const Lease& lease = **held;
    if (lease.owner != owner && lease.expires_at > now) {
      out.lease = lease;  // a live lease of another node: refused, naming it
      if (Status status = txn.commit(); !status) return status;
      return out;
    }
    Result<Statement> take = db_.prepare(
        "UPDATE provider_leases SET owner = ?, epoch = epoch + 1, expires_at = ? WHERE spid = ?");
    if (!take) return take.status();
    take->bindText(0, owner).bindInt64(1, now + ttl).bindText(2, spid);
    if (Status status = take->run(); !status) return status;
    out.previous_owner = lease.owner;
    out.lease = Lease{std::string(spid), std::string(owner), lease.epoch + 1, now + ttl};
  }
  // What the previous holder had in flight goes back in queue order (by priority and id,
  // OutboundQueue::nextQueued), flagged as retransmissions.
  Result<std::size_t> requeued = OutboundQueue(db_).requeueProvider(spid);
  if (!requeued) return requeued.status();
  out.requeued = *requeued;
  if (Status status = txn.commit(); !status) return status;
  out.acquired = true;
  return out;
}

Status LeaseStore::renew(std::string_view spid, std::string_view owner, std::int64_t epoch, TimeMs now,
                         TimeMs ttl) {
  Result<Statement> update = db_.prepare(
      "UPDATE provider_leases SET expires_at = ? WHERE spid = ? AND owner = ? AND epoch = ?");
  if (!update) return update.status();
  update->bindInt64(0, now + ttl).bindText(1, spid).bindText(2, owner).bindInt64(3, epoch);
  if (Status status = update->run(); !status) return status;
  return db_.changes() == 1 ? Status::ok() : fenced(db_, spid, owner, epoch);
}

Status LeaseStore::release(std::string_view spid, std::string_view owner, std::int64_t epoch, TimeMs now) {
  Result<Statement> update = db_.prepare(
      "UPDATE provider_leases SET expires_at = ? WHERE spid = ? AND owner = ? AND epoch = ? "
      "AND expires_at > ?");
  if (!update) return update.status();
  update->bindInt64(0, now).bindText(1, spid).bindText(2, owner).bindInt64(3, epoch).bindInt64(4, now);
  return update->run();
}

Status LeaseStore::fence(std::string_view spid, std::string_view owner, std::int64_t epoch) {
  // FOR SHARE: a takeover's UPDATE of this row waits until the caller's write commits.
  Result<Statement> query = db_.prepare(
      db_.backend() == Backend::kPostgres
          ? "SELECT 1 FROM provider_leases WHERE spid = ? AND owner = ? AND epoch = ? FOR SHARE"
          : "SELECT 1 FROM provider_leases WHERE spid = ? AND owner = ? AND epoch = ?");
  if (!query) return query.status();
  query->bindText(0, spid).bindText(1, owner).bindInt64(2, epoch);
  Result<bool> row = query->step();
  if (!row) return row.status();
  query->reset();
  return *row ? Status::ok() : fenced(db_, spid, owner, epoch);
}

Result<std::optional<Lease>> LeaseStore::get(std::string_view spid) { return readLease(db_, spid, false); }

Result<std::int64_t> LeaseStore::nextAssociationId() {
  if (db_.backend() != Backend::kPostgres) {
    return Status::notFound("on SQLite npacd counts association ids itself");
  }
  Result<Statement> query = db_.prepare("SELECT nextval('association_ids')");
  if (!query) return query.status();
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return Status::internal("nextval returned no row");
  return query->columnInt64(0);
}

}  // namespace npac::db
