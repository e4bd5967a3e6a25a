// TunableRegistry::reload(): taking in what another npacd node sharing the database
// changed. The other node is a second connection and a second registry on the same file.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "db/database.h"
#include "db/tunable_store.h"
#include "registry_fixture.h"
#include "tunables/registry.h"

namespace npac::tunables {
namespace {

using namespace std::chrono_literals;
using testing::RegistryFixture;
using testing::Recorder;
using Change = TunableRegistry::Change;

// A second npacd node: its own connection and registry on the fixture's database file.
struct OtherNode {
  explicit OtherNode(RegistryFixture& f) : db(f.openConnection()) {
    const Status status = TunableRegistry::open(*db, [&f] { return f.now; }, &registry);
    INFO(status.toString());
    REQUIRE(status.isOk());
  }
  std::unique_ptr<db::Database> db;
  std::unique_ptr<TunableRegistry> registry;  // destroyed before its connection
};

TEST_CASE("A value another registry set is seen after reload and told once with its actor",
          "[reload]") {
  RegistryFixture f;
  OtherNode b(f);
  Recorder all;
  auto subscription = f.registry->subscribe(kCongestionWindow, "", all.callback());
  REQUIRE(b.registry->set("congestion_window", "", "42", "admin-api:bob").isOk());
  CHECK(f.registry->get(kCongestionWindow) == 100);  // not yet: A has not reloaded

  std::size_t changed = 99;
  REQUIRE(f.registry->reload(&changed).isOk());
  CHECK(changed == 1);
  CHECK(f.registry->get(kCongestionWindow) == 42);
  REQUIRE(all.changes.size() == 1);
  CHECK(all.changes[0].spec->name == "congestion_window");
  CHECK(all.changes[0].spid.empty());
  CHECK(all.changes[0].old_value == Value(std::int64_t{100}));
  CHECK(all.changes[0].new_value == Value(std::int64_t{42}));
  CHECK(all.changes[0].actor == "admin-api:bob");
}

TEST_CASE("A value another registry cleared falls back after reload and is told",
          "[reload]") {
  RegistryFixture f;
  OtherNode b(f);
  REQUIRE(f.registry->set("response_timeout", "", "10m", "alice").isOk());
  REQUIRE(b.registry->reload().isOk());
  Recorder all;
  auto subscription = f.registry->subscribe(kResponseTimeout, "", all.callback());
  REQUIRE(b.registry->clear("response_timeout", "", "admin-api:bob").isOk());

  std::size_t changed = 99;
  REQUIRE(f.registry->reload(&changed).isOk());
  CHECK(changed == 1);
  CHECK(f.registry->get(kResponseTimeout) == Duration(15min));
  CHECK(f.registry->listOverrides().empty());
  REQUIRE(all.changes.size() == 1);
  CHECK(all.changes[0].spid.empty());
  CHECK(all.changes[0].old_value == Value(Duration(10min)));
  CHECK(all.changes[0].new_value == Value(Duration(15min)));
  CHECK(all.changes[0].actor == "another npacd node");
}

TEST_CASE("A reload with nothing changed notifies nobody and reports no change",
          "[reload]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("retry_attempts", "", "3", "alice").isOk());
  REQUIRE(f.registry->set("srr", "0001", "on", "alice").isOk());
  Recorder retry;
  Recorder srr;
  auto a = f.registry->subscribe(kRetryAttempts, "", retry.callback());
  auto b = f.registry->subscribe(kSrr, "", srr.callback());

  std::size_t changed = 99;
  REQUIRE(f.registry->reload(&changed).isOk());
  CHECK(changed == 0);
  CHECK(retry.changes.empty());
  CHECK(srr.changes.empty());
  CHECK(f.registry->get(kRetryAttempts) == 3);
  CHECK(f.registry->get(kSrr, "0001") == true);
}

TEST_CASE("A per-provider override changed elsewhere is seen for that provider only",
          "[reload]") {
  RegistryFixture f;
  OtherNode b(f);
  Recorder sp1;
  Recorder sp2;
  auto a = f.registry->subscribe(kCongestionWindow, "0001", sp1.callback());
  auto c = f.registry->subscribe(kCongestionWindow, "0002", sp2.callback());
  REQUIRE(b.registry->set("congestion_window", "0001", "7", "npacctl").isOk());

  std::size_t changed = 99;
  REQUIRE(f.registry->reload(&changed).isOk());
  CHECK(changed == 1);
  CHECK(f.registry->get(kCongestionWindow, "0001") == 7);
  CHECK(f.registry->get(kCongestionWindow, "0002") == 100);
  CHECK(f.registry->get(kCongestionWindow) == 100);
  REQUIRE(sp1.changes.size() == 1);
  CHECK(sp1.changes[0].spid == "0001");
  CHECK(sp1.changes[0].old_value == Value(std::int64_t{100}));
  CHECK(sp1.changes[0].new_value == Value(std::int64_t{7}));
  CHECK(sp1.changes[0].actor == "npacctl");
  CHECK(sp2.changes.empty());
}

TEST_CASE("A reload from inside a change callback is refused as reentrant", "[reload]") {
  RegistryFixture f;
  OtherNode b(f);
  REQUIRE(b.registry->set("retry_attempts", "", "3", "bob").isOk());
  Status inner;
  std::size_t inner_changed = 99;
  int calls = 0;
  auto subscription = f.registry->subscribe(kSrr, "", [&](const Change&) {
    ++calls;
    inner = f.registry->reload(&inner_changed);
  });
  REQUIRE(f.registry->set("srr", "0001", "on", "alice").isOk());
  CHECK(calls == 1);
  CHECK(inner.code() == ErrorCode::kReentrant);
  CHECK(inner_changed == 0);
  CHECK(f.registry->get(kRetryAttempts) == 1);  // the refused reload took in nothing

  REQUIRE(f.registry->reload().isOk());  // outside a callback it works
  CHECK(f.registry->get(kRetryAttempts) == 3);
}

TEST_CASE("A reload writes neither an override nor an audit entry", "[reload]") {
  RegistryFixture f;
  OtherNode b(f);
  REQUIRE(b.registry->set("retry_attempts", "", "3", "bob").isOk());
  REQUIRE(b.registry->set("srr", "0001", "on", "bob").isOk());
  const std::vector<db::TunableOverride> stored = f.storedOverrides();
  const std::size_t audited = f.auditLog().size();
  REQUIRE(audited == 2);

  f.now += 60'000;  // a write by the reload would carry a new time
  REQUIRE(f.registry->reload().isOk());
  CHECK(f.registry->get(kRetryAttempts) == 3);
  CHECK(f.storedOverrides() == stored);
  CHECK(f.auditLog().size() == audited);
}

TEST_CASE("Several changes made elsewhere are counted and told one at a time in order",
          "[reload]") {
  RegistryFixture f;
  OtherNode b(f);
  REQUIRE(f.registry->set("response_timeout", "0002", "5m", "alice").isOk());
  REQUIRE(b.registry->reload().isOk());
  Recorder sp1;
  Recorder sp2;
  auto a = f.registry->subscribe(kResponseTimeout, "0001", sp1.callback());
  auto c = f.registry->subscribe(kResponseTimeout, "0002", sp2.callback());
  // Elsewhere: a new global value, 0001 gets its own, 0002 loses its own.
  REQUIRE(b.registry->set("response_timeout", "", "10m", "bob").isOk());
  REQUIRE(b.registry->set("response_timeout", "0001", "2m", "carol").isOk());
  REQUIRE(b.registry->clear("response_timeout", "0002", "bob").isOk());
  REQUIRE(b.registry->set("retry_attempts", "", "1", "bob").isOk());  // the default

  std::size_t changed = 0;
  REQUIRE(f.registry->reload(&changed).isOk());
  CHECK(changed == 4);  // the retry_attempts override is applied, though it alters nothing
  CHECK(f.registry->get(kResponseTimeout) == Duration(10min));
  CHECK(f.registry->get(kResponseTimeout, "0001") == Duration(2min));
  CHECK(f.registry->get(kResponseTimeout, "0002") == Duration(10min));
  // Global before providers: 0001 first follows the new global, then gets its own.
  REQUIRE(sp1.changes.size() == 2);
  CHECK(sp1.changes[0].spid.empty());
  CHECK(sp1.changes[0].old_value == Value(Duration(15min)));
  CHECK(sp1.changes[0].new_value == Value(Duration(10min)));
  CHECK(sp1.changes[0].actor == "bob");
  CHECK(sp1.changes[1].spid == "0001");
  CHECK(sp1.changes[1].old_value == Value(Duration(10min)));
  CHECK(sp1.changes[1].new_value == Value(Duration(2min)));
  CHECK(sp1.changes[1].actor == "carol");
  // 0002 kept its 5m through the global change, then falls back to the new global.
  REQUIRE(sp2.changes.size() == 1);
  CHECK(sp2.changes[0].spid == "0002");
  CHECK(sp2.changes[0].old_value == Value(Duration(5min)));
  CHECK(sp2.changes[0].new_value == Value(Duration(10min)));
  CHECK(sp2.changes[0].actor == "another npacd node");
}

TEST_CASE("A stored row the catalogue refuses is skipped at reload and reported",
          "[reload]") {
  RegistryFixture f;
  OtherNode b(f);
  REQUIRE(f.registry->set("congestion_window", "", "50", "alice").isOk());
  Recorder all;
  auto subscription = f.registry->subscribe(kCongestionWindow, "", all.callback());
  {
    db::TunableStore store(*b.db);
    REQUIRE(store.set({"congestion_window", "", "999999", 1, "newer-npacd"}).isOk());
    REQUIRE(store.set({"retired_tunable", "", "1", 1, "newer-npacd"}).isOk());
  }

  std::size_t changed = 99;
  std::vector<std::string> ignored;
  REQUIRE(f.registry->reload(&changed, &ignored).isOk());
  CHECK(ignored.size() == 2);
  CHECK(f.registry->ignoredAtLoad().empty());  // open()'s list is left alone
  // As at open(): the refused row counts as no override, so the value falls back.
  CHECK(changed == 1);
  CHECK(f.registry->get(kCongestionWindow) == 100);
  REQUIRE(all.changes.size() == 1);
  CHECK(all.changes[0].old_value == Value(std::int64_t{50}));
  CHECK(all.changes[0].new_value == Value(std::int64_t{100}));
  CHECK(all.changes[0].actor == "another npacd node");
}

TEST_CASE("A reload the database cannot answer returns a storage error and changes nothing",
          "[reload]") {
  RegistryFixture f;
  OtherNode b(f);
  Recorder all;
  auto subscription = f.registry->subscribe(kRetryAttempts, "", all.callback());
  REQUIRE(b.registry->set("retry_attempts", "", "3", "bob").isOk());
  REQUIRE(b.db->execute("ALTER TABLE tunable_overrides RENAME TO tunable_overrides_away")
              .isOk());

  std::size_t changed = 99;
  const Status status = f.registry->reload(&changed);
  CHECK(status.code() == ErrorCode::kStorage);
  CHECK(changed == 0);
  CHECK(f.registry->get(kRetryAttempts) == 1);
  CHECK(all.changes.empty());

  REQUIRE(b.db->execute("ALTER TABLE tunable_overrides_away RENAME TO tunable_overrides")
              .isOk());
  REQUIRE(f.registry->reload(&changed).isOk());
  CHECK(changed == 1);
  CHECK(f.registry->get(kRetryAttempts) == 3);
}

}  // namespace
}  // namespace npac::tunables
