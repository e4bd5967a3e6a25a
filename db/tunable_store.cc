#include "db/tunable_store.h"

#include "db/notification_listener.h"
#include "db/database.h"

namespace npac::db {
namespace {

constexpr const char* kColumns = "name, spid, value, updated_at, updated_by";

TunableOverride readOverride(const Statement& row) {
  return TunableOverride{row.columnText(0), row.columnText(1), row.columnText(2),
                         row.columnInt64(3), row.columnText(4)};
}

Result<std::vector<TunableOverride>> readOverrides(Statement& query) {
  std::vector<TunableOverride> out;
  for (;;) {
    Result<bool> row = query.step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(readOverride(query));
  }
}

}  // namespace

Result<std::optional<TunableOverride>> TunableStore::get(std::string_view name,
                                                         std::string_view spid) {
  Result<Statement> query = db_.prepare(std::string("SELECT ") + kColumns +
                                        " FROM tunable_overrides WHERE name = ? AND spid = ?");
  if (!query) return query.status();
  query->bindText(0, name).bindText(1, spid);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return std::optional<TunableOverride>();
  return std::optional<TunableOverride>(readOverride(*query));
}

Status TunableStore::set(const TunableOverride& override) {
  if (override.name.empty()) return Status::invalidArgument("tunable override needs a name");
  if (!override.spid.empty() && override.spid.size() != 4) {
    return Status::invalidArgument("tunable scope must be global or a 4-character SPID, got '" +
                                   override.spid + "'");
  }
  Result<Statement> upsert = db_.prepare(
      "INSERT INTO tunable_overrides(name, spid, value, updated_at, updated_by) "
      "VALUES(?, ?, ?, ?, ?) ON CONFLICT(name, spid) DO UPDATE SET value = excluded.value, "
      "updated_at = excluded.updated_at, updated_by = excluded.updated_by");
  if (!upsert) return upsert.status();
  upsert->bindText(0, override.name)
      .bindText(1, override.spid)
      .bindText(2, override.value)
      .bindInt64(3, override.updated_at)
      .bindText(4, override.updated_by);
  if (Status status = upsert->run(); !status) return status;
  // The other npacd nodes on this database reload their tunables (at COMMIT).
  return notifyNodes(db_, kChangedChannel, kTunablesChanged);
}

Result<bool> TunableStore::clear(std::string_view name, std::string_view spid) {
  Result<Statement> erase = db_.prepare("DELETE FROM tunable_overrides WHERE name = ? AND spid = ?");
  if (!erase) return erase.status();
  erase->bindText(0, name).bindText(1, spid);
  if (Status status = erase->run(); !status) return status;
  const bool erased = db_.changes() > 0;
  if (erased) {
    if (Status status = notifyNodes(db_, kChangedChannel, kTunablesChanged); !status) return status;
  }
  return erased;
}

Result<std::vector<TunableOverride>> TunableStore::list() {
  Result<Statement> query = db_.prepare(std::string("SELECT ") + kColumns +
                                        " FROM tunable_overrides ORDER BY name, spid");
  if (!query) return query.status();
  return readOverrides(*query);
}

Result<std::vector<TunableOverride>> TunableStore::listByName(std::string_view name) {
  Result<Statement> query = db_.prepare(std::string("SELECT ") + kColumns +
                                        " FROM tunable_overrides WHERE name = ? ORDER BY spid");
  if (!query) return query.status();
  query->bindText(0, name);
  return readOverrides(*query);
}

}  // namespace npac::db
