// Shared helpers for tests/db: a fresh npacd database in a temp dir with providers.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "db/database.h"
#include "db/provider_store.h"
#include "temp_dir.h"

namespace npac::db::testing {

inline std::unique_ptr<Database> openFresh(const TempDir& dir, OpenOptions options = {}) {
  Result<std::unique_ptr<Database>> db = Database::open(dir.file("npacd.db"), options);
  INFO(db.status().toString());
  REQUIRE(db.isOk());
  return std::move(db).value();
}

inline void addProvider(Database& db, const std::string& spid,
                        SystemType type = SystemType::kSoa) {
  ProviderStore providers(db);
  Status status = providers.add({spid, "Provider " + spid, type, true});
  INFO(status.toString());
  REQUIRE(status.isOk());
}

}  // namespace npac::db::testing
