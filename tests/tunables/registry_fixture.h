// A real SQLite file in a fresh temporary directory, and a TunableRegistry opened on it,
// for the tunables tests. The clock is a counter the test controls.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "db/audit_store.h"
#include "db/database.h"
#include "db/tunable_store.h"
#include "tunables/registry.h"

namespace npac::tunables::testing {

class RegistryFixture {
 public:
  RegistryFixture() {
    std::string pattern = (std::filesystem::temp_directory_path() / "npac-tun-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
    openAll();
  }
  ~RegistryFixture() {
    registry.reset();
    db.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  RegistryFixture(const RegistryFixture&) = delete;
  RegistryFixture& operator=(const RegistryFixture&) = delete;

  std::string path() const { return dir_ + "/npacd.db"; }

  // Closes the registry and the connection, then opens the same file again.
  void reopen() {
    registry.reset();
    db.reset();
    openAll();
  }

  std::unique_ptr<db::Database> openConnection(db::OpenOptions options = {}) const {
    auto opened = db::Database::open(path(), options);
    INFO(opened.status().toString());
    REQUIRE(opened.isOk());
    return std::move(opened).value();
  }

  std::vector<db::TunableOverride> storedOverrides() {
    db::TunableStore store(*db);
    auto rows = store.list();
    REQUIRE(rows.isOk());
    return *rows;
  }

  std::vector<db::AuditEntry> auditLog() {
    db::AuditStore audit(*db);
    auto rows = audit.between(0, INT64_MAX);
    REQUIRE(rows.isOk());
    return *rows;
  }

  db::TimeMs now = 1'700'000'000'000;  // what the injected clock returns
  std::unique_ptr<db::Database> db;
  std::unique_ptr<TunableRegistry> registry;

 private:
  void openAll() {
    db = openConnection();
    const Status status = TunableRegistry::open(*db, [this] { return now; }, &registry);
    INFO(status.toString());
    REQUIRE(status.isOk());
  }

  std::string dir_;
};

// The changes a subscription was told, in order.
struct Recorder {
  std::vector<TunableRegistry::Change> changes;
  TunableRegistry::Callback callback() {
    return [this](const TunableRegistry::Change& change) { changes.push_back(change); };
  }
};

}  // namespace npac::tunables::testing
