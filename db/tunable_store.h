// TunableStore: operator overrides of tunables, persisted (table tunable_overrides).
//
// An override is a tunable name, a scope — global, or one provider's SPID — and the
// value as text (the tunables/ catalogue owns types, parsing and validation; this store
// keeps whatever text it is given). At most one override exists per (name, scope); set()
// replaces it. Absence means "fall back": per-provider → global → the catalogue default.
//
// Writes do not open their own transaction, so a caller can make an override and its
// audit entry atomic:
//   Transaction txn(db); txn.begin(); tunables.set(...); audit.append(...); txn.commit();
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/clock.h"
#include "db/status.h"

namespace npac::db {

class Database;

// The scope of a global override. A provider scope is that provider's 4-character SPID.
inline constexpr std::string_view kGlobalScope = "";

struct TunableOverride {
  std::string name;             // catalogue name, e.g. "srr"
  std::string spid;             // kGlobalScope ("") or a provider's SPID
  std::string value;            // text as rendered by the tunables catalogue
  TimeMs updated_at = 0;
  std::string updated_by;       // actor: operator, "npacctl", "admin-api:<user>"

  bool isGlobal() const { return spid.empty(); }
  friend bool operator==(const TunableOverride&, const TunableOverride&) = default;
};

class TunableStore {
 public:
  explicit TunableStore(Database& db) : db_(db) {}

  // The override for (name, spid), or nullopt when there is none.
  Result<std::optional<TunableOverride>> get(std::string_view name,
                                             std::string_view spid = kGlobalScope);
  // Inserts or replaces the override for (override.name, override.spid).
  Status set(const TunableOverride& override);
  // Removes the override; true when one existed.
  Result<bool> clear(std::string_view name, std::string_view spid = kGlobalScope);
  // Every override, ordered by name then scope (global first).
  Result<std::vector<TunableOverride>> list();
  // Every override of one tunable (global and all providers), global first.
  Result<std::vector<TunableOverride>> listByName(std::string_view name);

 private:
  Database& db_;
};

}  // namespace npac::db
