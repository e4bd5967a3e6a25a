#include "db/throttle_group_store.h"

#include <map>
#include <set>

#include "db/database.h"
#include "db/postgres_array.h"
#include "db/statement.h"
#include "db/transaction.h"

namespace npac::db {
namespace {

constexpr const char* kGroupColumns =
    "name, max_rate, max_pending, onset_1, abatement_1, onset_2, abatement_2, onset_3, abatement_3, "
    "min_abatement_ms, peer_loss_reduction_percent, updated_at, updated_by";

// Milliseconds since the Unix epoch by the database server's clock (SQLite's is the host's
// of the one node using the file): a report's age is measured by the clock that stamped it,
// whatever the nodes' own clocks say. julianday 2440587.5 is 1970-01-01T00:00:00Z.
std::string databaseNowMs(Backend backend) {
  return backend == Backend::kPostgres ? "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint"
                                       : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
}

Status groupNotFound(std::string_view name) {
  return Status::notFound("no throttle group named " + std::string(name));
}

ThrottleGroupDefinition readGroup(const Statement& row) {
  ThrottleGroupDefinition group;
  group.name = row.columnText(0);
  group.max_rate = row.columnInt64(1);
  group.max_pending = row.columnInt64(2);
  for (int level = 0; level < 3; ++level) {
    group.onset[level] = row.columnInt(3 + 2 * level);
    group.abatement[level] = row.columnInt(4 + 2 * level);
  }
  group.min_abatement_ms = row.columnInt64(9);
  group.peer_loss_reduction_percent = row.columnInt(10);
  group.updated_at = row.columnInt64(11);
  group.updated_by = row.columnText(12);
  return group;
}

// Binds everything of kGroupColumns but the name, in its order, from parameter `first` on.
void bindLimits(Statement& statement, int first, const ThrottleGroupDefinition& group) {
  statement.bindInt64(first, group.max_rate).bindInt64(first + 1, group.max_pending);
  for (int level = 0; level < 3; ++level) {
    statement.bindInt(first + 2 + 2 * level, group.onset[level])
        .bindInt(first + 3 + 2 * level, group.abatement[level]);
  }
  statement.bindInt64(first + 8, group.min_abatement_ms)
      .bindInt(first + 9, group.peer_loss_reduction_percent)
      .bindInt64(first + 10, group.updated_at)
      .bindText(first + 11, group.updated_by);
}

// Adds `group`'s members. A SPID already in a group is not written over (ON CONFLICT DO
// NOTHING: on PostgreSQL a failed statement would abort the caller's transaction, and a
// SPID another node is adding meanwhile is waited for, then found); the group holding it
// is named in the kConstraint. The caller rolls back what was written before.
Status insertMembers(Database& db, const ThrottleGroupDefinition& group) {
  Result<Statement> insert =
      db.prepare("INSERT INTO throttle_group_members(spid, name) VALUES(?, ?) ON CONFLICT(spid) DO NOTHING");
  if (!insert) return insert.status();
  for (const std::string& spid : group.members) {
    insert->reset();
    insert->bindText(0, spid).bindText(1, group.name);
    if (Status status = insert->run(); !status) return status;
    if (db.changes() == 1) continue;
    Result<Statement> holder = db.prepare("SELECT name FROM throttle_group_members WHERE spid = ?");
    if (!holder) return holder.status();
    holder->bindText(0, spid);
    Result<bool> row = holder->step();
    if (!row) return row.status();
    const std::string held_by = *row ? holder->columnText(0) : std::string();
    if (held_by == group.name) {
      return Status::invalidArgument("SPID " + spid + " is listed twice in throttle group " + group.name);
    }
    const std::string where = held_by.empty() ? "another throttle group" : "throttle group " + held_by;
    return Status::make(Status::Code::kConstraint, "SPID " + spid + " is a member of " + where, db.path(),
                        "a SPID is a member of one throttle group at most: take it out of " + where + " first");
  }
  return Status::ok();
}

Result<std::vector<std::string>> readMembers(Database& db, std::string_view name) {
  Result<Statement> query = db.prepare("SELECT spid FROM throttle_group_members WHERE name = ? ORDER BY spid");
  if (!query) return query.status();
  query->bindText(0, name);
  std::vector<std::string> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(query->columnText(0));
  }
}

// SQLite: one upsert per report, all in one commit. The group's row is the SELECT's source,
// so a report for a group that is gone inserts nothing (one writer: it cannot go meanwhile).
Status reportEach(Database& db, std::string_view node, const std::vector<ThrottleReport>& reports) {
  Transaction txn(db);  // one commit for the node's reports, not one per group
  if (Status status = txn.begin(); !status) return status;
  Result<Statement> upsert = db.prepare(
      "INSERT INTO throttle_reports(name, node, rate, pending, wanting, at) "
      "SELECT name, ?, ?, ?, ?, " + databaseNowMs(db.backend()) + " FROM throttle_groups WHERE name = ? "
      "ON CONFLICT(name, node) DO UPDATE SET rate = excluded.rate, pending = excluded.pending, "
      "wanting = excluded.wanting, at = excluded.at");
  if (!upsert) return upsert.status();
  for (const ThrottleReport& report : reports) {
    upsert->reset();
    upsert->bindText(0, node)
        .bindDouble(1, report.rate)
        .bindInt64(2, report.pending)
        .bindBool(3, report.wanting)
        .bindText(4, report.group);
    if (Status status = upsert->run(); !status) return status;
  }
  return txn.commit();
}

// PostgreSQL: every report in one statement over arrays (db/postgres_array.h). FOR KEY
// SHARE: a group another node is removing is waited for and then skipped, where the foreign
// key's own check would fail the statement.
Status reportAll(Database& db, std::string_view node, const std::vector<ThrottleReport>& reports) {
  PostgresArray names(PostgresArray::Type::kText), rates(PostgresArray::Type::kFloat8),
      pending(PostgresArray::Type::kInt8), wanting(PostgresArray::Type::kInt8);
  for (const ThrottleReport& report : reports) {
    names.addText(report.group);
    rates.addDouble(report.rate);
    pending.addInt64(report.pending);
    wanting.addInt64(report.wanting ? 1 : 0);
  }
  Result<Statement> upsert = db.prepare(
      "INSERT INTO throttle_reports(name, node, rate, pending, wanting, at) "
      "SELECT u.name, ?, u.rate, u.pending, u.wanting, " + databaseNowMs(db.backend()) +
      " FROM unnest(CAST(? AS text[]), CAST(? AS float8[]), CAST(? AS bigint[]), CAST(? AS bigint[])) "
      "AS u(name, rate, pending, wanting) "
      "WHERE EXISTS (SELECT 1 FROM throttle_groups AS g WHERE g.name = u.name FOR KEY SHARE) "
      "ON CONFLICT(name, node) DO UPDATE SET rate = excluded.rate, pending = excluded.pending, "
      "wanting = excluded.wanting, at = excluded.at");
  if (!upsert) return upsert.status();
  upsert->bindText(0, node)
      .bindBlob(1, names.encoded())
      .bindBlob(2, rates.encoded())
      .bindBlob(3, pending.encoded())
      .bindBlob(4, wanting.encoded());
  return upsert->run();
}

}  // namespace

Result<std::vector<ThrottleGroupDefinition>> ThrottleGroupStore::list() {
  Result<Statement> groups =
      db_.prepare(std::string("SELECT ") + kGroupColumns + " FROM throttle_groups ORDER BY name");
  if (!groups) return groups.status();
  std::vector<ThrottleGroupDefinition> out;
  std::map<std::string, std::size_t, std::less<>> index;
  for (;;) {
    Result<bool> row = groups->step();
    if (!row) return row.status();
    if (!*row) break;
    out.push_back(readGroup(*groups));
    index.emplace(out.back().name, out.size() - 1);
  }
  Result<Statement> members = db_.prepare("SELECT name, spid FROM throttle_group_members ORDER BY name, spid");
  if (!members) return members.status();
  for (;;) {
    Result<bool> row = members->step();
    if (!row) return row.status();
    if (!*row) return out;
    if (auto it = index.find(members->columnText(0)); it != index.end()) {
      out[it->second].members.push_back(members->columnText(1));
    }
  }
}

Result<ThrottleGroupDefinition> ThrottleGroupStore::get(std::string_view name) {
  Result<Statement> query =
      db_.prepare(std::string("SELECT ") + kGroupColumns + " FROM throttle_groups WHERE name = ?");
  if (!query) return query.status();
  query->bindText(0, name);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return groupNotFound(name);
  ThrottleGroupDefinition group = readGroup(*query);
  query->reset();
  Result<std::vector<std::string>> members = readMembers(db_, name);
  if (!members) return members.status();
  group.members = std::move(*members);
  return group;
}

Status ThrottleGroupStore::create(const ThrottleGroupDefinition& group) {
  // The group's row and its members, all or none: a savepoint of the caller's transaction.
  Transaction txn(db_);
  if (Status status = txn.begin(); !status) return status;
  Result<Statement> insert = db_.prepare(std::string("INSERT INTO throttle_groups(") + kGroupColumns +
                                         ") VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                                         "ON CONFLICT(name) DO NOTHING");
  if (!insert) return insert.status();
  insert->bindText(0, group.name);
  bindLimits(*insert, 1, group);
  if (Status status = insert->run(); !status) return status;
  if (db_.changes() != 1) {
    return Status::make(Status::Code::kConstraint, "throttle group " + group.name + " exists", db_.path(),
                        "choose another name, or change the group that has it");
  }
  if (Status status = insertMembers(db_, group); !status) return status;
  return txn.commit();
}

Status ThrottleGroupStore::replace(const ThrottleGroupDefinition& group) {
  Transaction txn(db_);  // as create(): limits and members together or not at all
  if (Status status = txn.begin(); !status) return status;
  Result<Statement> update = db_.prepare(
      "UPDATE throttle_groups SET max_rate = ?, max_pending = ?, onset_1 = ?, abatement_1 = ?, onset_2 = ?, "
      "abatement_2 = ?, onset_3 = ?, abatement_3 = ?, min_abatement_ms = ?, peer_loss_reduction_percent = ?, "
      "updated_at = ?, updated_by = ? WHERE name = ?");
  if (!update) return update.status();
  bindLimits(*update, 0, group);
  update->bindText(12, group.name);
  if (Status status = update->run(); !status) return status;
  if (db_.changes() != 1) return groupNotFound(group.name);
  Result<Statement> erase = db_.prepare("DELETE FROM throttle_group_members WHERE name = ?");
  if (!erase) return erase.status();
  erase->bindText(0, group.name);
  if (Status status = erase->run(); !status) return status;
  if (Status status = insertMembers(db_, group); !status) return status;
  return txn.commit();
}

Status ThrottleGroupStore::remove(std::string_view name) {
  // Its members and reports go with it (ON DELETE CASCADE, enforced on both engines).
  Result<Statement> erase = db_.prepare("DELETE FROM throttle_groups WHERE name = ?");
  if (!erase) return erase.status();
  erase->bindText(0, name);
  if (Status status = erase->run(); !status) return status;
  return db_.changes() == 1 ? Status::ok() : groupNotFound(name);
}

Status ThrottleGroupStore::report(std::string_view node, const std::vector<ThrottleReport>& reports) {
  if (reports.empty()) return Status::ok();
  std::set<std::string_view> groups;
  for (const ThrottleReport& report : reports) {
    if (!groups.insert(report.group).second) {
      return Status::invalidArgument("two reports of node " + std::string(node) + " for throttle group " +
                                     report.group);
    }
  }
  return db_.backend() == Backend::kPostgres ? reportAll(db_, node, reports) : reportEach(db_, node, reports);
}

Result<std::vector<ThrottleReport>> ThrottleGroupStore::reports() {
  const bool pg = db_.backend() == Backend::kPostgres;
  Result<Statement> query = db_.prepare(std::string("SELECT name, node, rate, pending, wanting, ") +
                                        (pg ? "GREATEST" : "max") + "(0, " + databaseNowMs(db_.backend()) +
                                        " - at) FROM throttle_reports ORDER BY name, node");
  if (!query) return query.status();
  std::vector<ThrottleReport> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(ThrottleReport{query->columnText(0), query->columnText(1), query->columnDouble(2),
                                 query->columnInt64(3), query->columnBool(4), query->columnInt64(5)});
  }
}

Status ThrottleGroupStore::forgetNode(std::string_view node) {
  Result<Statement> erase = db_.prepare("DELETE FROM throttle_reports WHERE node = ?");
  if (!erase) return erase.status();
  erase->bindText(0, node);
  return erase->run();
}

}  // namespace npac::db
