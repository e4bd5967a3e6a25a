#include "tunables/registry.h"

#include <catch2/catch.hpp>

#include "db/transaction.h"
#include "registry_fixture.h"

namespace npac::tunables {
namespace {

using namespace std::chrono_literals;
using testing::RegistryFixture;

TEST_CASE("An empty database reads every tunable at its default", "[registry]") {
  RegistryFixture f;
  CHECK(f.registry->get(kSrr, "0001") == false);
  CHECK(f.registry->get(kResponseTimeout) == 15min);
  CHECK(f.registry->get(kRetryAttempts, "0001") == 1);
  CHECK(f.registry->get(kDuplicateBind) == DuplicateBind::kReplace);
  CHECK(f.registry->get(kEgressPolicy, "0001") == EgressPolicy::kRoundRobin);
  CHECK(f.registry->get(kNpacSystemId) == "NPAC");
  CHECK(f.registry->ignoredAtLoad().empty());
}

TEST_CASE("A read resolves provider override, then global override, then default",
          "[registry]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("congestion_window", "", "50", "alice").isOk());
  CHECK(f.registry->get(kCongestionWindow) == 50);
  CHECK(f.registry->get(kCongestionWindow, "0001") == 50);

  REQUIRE(f.registry->set("congestion_window", "0001", "200", "alice").isOk());
  CHECK(f.registry->get(kCongestionWindow, "0001") == 200);
  CHECK(f.registry->get(kCongestionWindow, "0002") == 50);
  CHECK(f.registry->get(kCongestionWindow) == 50);

  REQUIRE(f.registry->clear("congestion_window", "0001", "alice").isOk());
  CHECK(f.registry->get(kCongestionWindow, "0001") == 50);
  REQUIRE(f.registry->clear("congestion_window", "", "alice").isOk());
  CHECK(f.registry->get(kCongestionWindow, "0001") == 100);
}

TEST_CASE("A per-provider tunable set for one provider leaves the others at the default",
          "[registry]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("srr", "0001", "on", "alice").isOk());
  CHECK(f.registry->get(kSrr, "0001") == true);
  CHECK(f.registry->get(kSrr, "0002") == false);
  REQUIRE(f.registry->set("egress_policy", "0001", "LRTM", "alice").isOk());
  CHECK(f.registry->get(kEgressPolicy, "0001") == EgressPolicy::kLrtm);
  std::string text;
  REQUIRE(f.registry->getText("egress_policy", "0001", &text).isOk());
  CHECK(text == "lrtm");
  REQUIRE(f.registry->getText("srr", "0002", &text).isOk());
  CHECK(text == "off");
}

TEST_CASE("Two registries read on one thread never show each other's values", "[registry]") {
  RegistryFixture a;
  RegistryFixture b;
  REQUIRE(a.registry->set("srr", "0001", "on", "alice").isOk());
  for (int i = 0; i < 3; ++i) {
    CHECK(a.registry->get(kSrr, "0001") == true);
    CHECK(b.registry->get(kSrr, "0001") == false);
  }
  REQUIRE(b.registry->set("srr", "0001", "on", "alice").isOk());
  REQUIRE(a.registry->set("srr", "0001", "off", "alice").isOk());
  CHECK(b.registry->get(kSrr, "0001") == true);
  CHECK(a.registry->get(kSrr, "0001") == false);
}

TEST_CASE("Each kind of refused set has its own error and changes nothing", "[registry]") {
  RegistryFixture f;
  struct Case {
    const char* name;
    const char* spid;
    const char* text;
    const char* actor;
    ErrorCode expected;
  };
  const Case cases[] = {
      {"no_such_tunable", "", "1", "alice", ErrorCode::kUnknownName},
      {"srr", "0001", "maybe", "alice", ErrorCode::kWrongType},
      {"response_timeout", "", "15", "alice", ErrorCode::kWrongType},
      {"congestion_window", "0001", "0", "alice", ErrorCode::kOutOfRange},
      {"key_lifetime", "", "20y", "alice", ErrorCode::kWrongType},
      {"key_lifetime", "", "3651d", "alice", ErrorCode::kOutOfRange},
      {"srr", "", "on", "alice", ErrorCode::kWrongScope},
      {"duplicate_bind", "0001", "reject", "alice", ErrorCode::kWrongScope},
      {"egress_policy", "0001", "random", "alice", ErrorCode::kUnknownEnumValue},
      {"srr", "00001", "on", "alice", ErrorCode::kInvalidProvider},
      {"throttle_abatement_1", "", "100", "alice", ErrorCode::kInconsistent},
      {"srr", "0001", "on", "", ErrorCode::kNoActor},
  };
  for (const Case& c : cases) {
    INFO(c.name << "@" << c.spid << " = " << c.text);
    const auto before = f.registry->snapshot();
    const Status status = f.registry->set(c.name, c.spid, c.text, c.actor);
    CHECK(status.code() == c.expected);
    CHECK_FALSE(status.message().empty());
    CHECK(f.registry->snapshot() == before);  // nothing published
  }
  CHECK(f.storedOverrides().empty());
  CHECK(f.auditLog().empty());
}

TEST_CASE("Overrides survive closing and reopening the database file", "[registry]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("srr", "0001", "true", "alice").isOk());
  REQUIRE(f.registry->set("response_timeout", "", "900s", "alice").isOk());
  REQUIRE(f.registry->set("response_timeout", "0002", "1h30m", "alice").isOk());
  REQUIRE(f.registry->set("duplicate_bind", "", "reject", "alice").isOk());
  REQUIRE(f.registry->set("npac_system_id", "", "EAST", "alice").isOk());
  REQUIRE(f.registry->set("congestion_window", "", "42", "alice").isOk());
  REQUIRE(f.registry->clear("congestion_window", "", "alice").isOk());

  f.reopen();
  CHECK(f.registry->get(kSrr, "0001") == true);
  CHECK(f.registry->get(kResponseTimeout) == 15min);
  CHECK(f.registry->get(kResponseTimeout, "0002") == 90min);
  CHECK(f.registry->get(kDuplicateBind) == DuplicateBind::kReject);
  CHECK(f.registry->get(kNpacSystemId) == "EAST");
  CHECK(f.registry->get(kCongestionWindow) == 100);
  CHECK(f.registry->ignoredAtLoad().empty());
}

TEST_CASE("The overrides in force are listed in catalogue order, global first",
          "[registry]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("response_timeout", "0002", "5m", "alice").isOk());
  REQUIRE(f.registry->set("srr", "0001", "on", "alice").isOk());
  REQUIRE(f.registry->set("response_timeout", "", "600s", "alice").isOk());
  using Override = TunableRegistry::Override;
  const std::vector<Override> expected = {
      {"srr", "0001", "on"}, {"response_timeout", "", "10m"}, {"response_timeout", "0002", "5m"}};
  CHECK(f.registry->listOverrides() == expected);
  f.reopen();
  CHECK(f.registry->listOverrides() == expected);
}

TEST_CASE("Values are stored in their canonical text form", "[registry]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("response_timeout", "", " 900s ", "alice").isOk());
  REQUIRE(f.registry->set("srr", "0001", "TRUE", "alice").isOk());
  REQUIRE(f.registry->set("egress_policy", "", "Weighted", "alice").isOk());
  const auto rows = f.storedOverrides();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].name == "egress_policy");
  CHECK(rows[0].value == "weighted");
  CHECK(rows[1].name == "response_timeout");
  CHECK(rows[1].value == "15m");
  CHECK(rows[2].name == "srr");
  CHECK(rows[2].spid == "0001");
  CHECK(rows[2].value == "on");
}

TEST_CASE("Every set and clear writes an audit entry with who, old, new and when",
          "[registry]") {
  RegistryFixture f;
  f.now = 1000;
  REQUIRE(f.registry->set("srr", "0001", "on", "alice").isOk());
  f.now = 2000;
  REQUIRE(f.registry->set("srr", "0001", "off", "bob").isOk());
  f.now = 3000;
  REQUIRE(f.registry->clear("srr", "0001", "carol").isOk());
  f.now = 4000;
  REQUIRE(f.registry->clear("srr", "0001", "carol").isOk());  // nothing left: no entry
  REQUIRE(f.registry->set("retry_attempts", "", "3", "dave").isOk());

  const auto log = f.auditLog();
  REQUIRE(log.size() == 4);
  CHECK(log[0].at == 1000);
  CHECK(log[0].actor == "alice");
  CHECK(log[0].action == "tunable.set");
  CHECK(log[0].subject == "srr@0001");
  CHECK_FALSE(log[0].old_value.has_value());
  CHECK(log[0].new_value == std::optional<std::string>("on"));
  CHECK(log[1].actor == "bob");
  CHECK(log[1].old_value == std::optional<std::string>("on"));
  CHECK(log[1].new_value == std::optional<std::string>("off"));
  CHECK(log[2].at == 3000);
  CHECK(log[2].action == "tunable.clear");
  CHECK(log[2].old_value == std::optional<std::string>("off"));
  CHECK_FALSE(log[2].new_value.has_value());
  CHECK(log[3].subject == "retry_attempts");
  CHECK(log[3].at == 4000);
  const auto rows = f.storedOverrides();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].updated_by == "dave");
  CHECK(rows[0].updated_at == 4000);
}

TEST_CASE("Stored rows the catalogue refuses are skipped at load and reported",
          "[registry]") {
  RegistryFixture f;
  {
    db::TunableStore store(*f.db);
    REQUIRE(store.set({"retired_tunable", "", "1", 1, "old-npacd"}).isOk());
    REQUIRE(store.set({"congestion_window", "", "999999", 1, "old-npacd"}).isOk());
    REQUIRE(store.set({"duplicate_bind", "0001", "reject", 1, "old-npacd"}).isOk());
    REQUIRE(store.set({"retry_attempts", "", "2", 1, "old-npacd"}).isOk());
  }
  f.reopen();
  CHECK(f.registry->ignoredAtLoad().size() == 3);
  CHECK(f.registry->get(kCongestionWindow) == 100);
  CHECK(f.registry->get(kRetryAttempts) == 2);
}

TEST_CASE("A set the database cannot store returns a storage error and changes nothing",
          "[registry]") {
  RegistryFixture f;
  REQUIRE(f.registry->set("retry_attempts", "", "2", "alice").isOk());
  // The registry's connection gives up quickly; a second connection holds the write lock.
  f.registry.reset();
  f.db.reset();
  db::OpenOptions quick;
  quick.busy_timeout = std::chrono::milliseconds(10);
  f.db = f.openConnection(quick);
  REQUIRE(TunableRegistry::open(*f.db, [&f] { return f.now; }, &f.registry).isOk());
  int notified = 0;
  auto subscription =
      f.registry->subscribe(kRetryAttempts, "", [&](const TunableRegistry::Change&) {
        ++notified;
      });
  auto blocker = f.openConnection();
  {
    db::Transaction hold(*blocker);
    REQUIRE(hold.begin().isOk());
    const Status status = f.registry->set("retry_attempts", "", "5", "alice");
    CHECK(status.code() == ErrorCode::kStorage);
    CHECK(status.message().find("retry_attempts") != std::string::npos);
    CHECK(f.registry->get(kRetryAttempts) == 2);
  }
  CHECK(notified == 0);
  CHECK(f.storedOverrides().size() == 1);
  CHECK(f.storedOverrides()[0].value == "2");
  CHECK(f.auditLog().size() == 1);
}

}  // namespace
}  // namespace npac::tunables
