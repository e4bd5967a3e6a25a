#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "registry_fixture.h"
#include "tunables/registry.h"

namespace npac::tunables {
namespace {

using namespace std::chrono_literals;
using testing::RegistryFixture;
using testing::Recorder;
using Change = TunableRegistry::Change;

TEST_CASE("A subscriber learns the scope, old and new value and actor of a change",
          "[notify]") {
  RegistryFixture f;
  Recorder all;
  auto subscription = f.registry->subscribe(kSrr, "", all.callback());
  REQUIRE(f.registry->set("srr", "0002", "on", "alice").isOk());
  REQUIRE(all.changes.size() == 1);
  CHECK(all.changes[0].spec->name == "srr");
  CHECK(all.changes[0].spid == "0002");
  CHECK(all.changes[0].old_value == Value(false));
  CHECK(all.changes[0].new_value == Value(true));
  CHECK(all.changes[0].actor == "alice");
}

TEST_CASE("A subscriber sees the new value already in place when called", "[notify]") {
  RegistryFixture f;
  std::int64_t seen = -1;
  auto subscription = f.registry->subscribe(
      kCongestionWindow, "0001",
      [&](const Change&) { seen = f.registry->get(kCongestionWindow, "0001"); });
  REQUIRE(f.registry->set("congestion_window", "0001", "7", "alice").isOk());
  CHECK(seen == 7);
}

TEST_CASE("A provider filter passes only that provider's changes", "[notify]") {
  RegistryFixture f;
  Recorder only_0001;
  Recorder other_tunable;
  auto a = f.registry->subscribe(kSrr, "0001", only_0001.callback());
  auto b = f.registry->subscribe(kHeartbeatInterval, "0001", other_tunable.callback());
  REQUIRE(f.registry->set("srr", "0002", "on", "alice").isOk());
  CHECK(only_0001.changes.empty());
  REQUIRE(f.registry->set("srr", "0001", "on", "alice").isOk());
  REQUIRE(only_0001.changes.size() == 1);
  CHECK(only_0001.changes[0].spid == "0001");
  CHECK(other_tunable.changes.empty());
}

TEST_CASE("A global change reaches a provider's subscriber only while it has no override",
          "[notify]") {
  RegistryFixture f;
  Recorder sp1;
  Recorder sp2;
  auto a = f.registry->subscribe(kResponseTimeout, "0001", sp1.callback());
  auto b = f.registry->subscribe(kResponseTimeout, "0002", sp2.callback());
  REQUIRE(f.registry->set("response_timeout", "0002", "5m", "alice").isOk());
  REQUIRE(sp2.changes.size() == 1);

  REQUIRE(f.registry->set("response_timeout", "", "10m", "alice").isOk());
  REQUIRE(sp1.changes.size() == 1);
  CHECK(sp1.changes[0].spid.empty());
  CHECK(sp1.changes[0].old_value == Value(Duration(15min)));
  CHECK(sp1.changes[0].new_value == Value(Duration(10min)));
  CHECK(sp2.changes.size() == 1);  // 0002 keeps its own 5m

  // Clearing 0002's override makes the global 10m its value: a change for 0002.
  REQUIRE(f.registry->clear("response_timeout", "0002", "alice").isOk());
  REQUIRE(sp2.changes.size() == 2);
  CHECK(sp2.changes[1].old_value == Value(Duration(5min)));
  CHECK(sp2.changes[1].new_value == Value(Duration(10min)));
  CHECK(sp1.changes.size() == 1);
}

TEST_CASE("A set that leaves the effective value unchanged is audited but not notified",
          "[notify]") {
  RegistryFixture f;
  Recorder all;
  auto subscription = f.registry->subscribe(kRetryAttempts, "", all.callback());
  REQUIRE(f.registry->set("retry_attempts", "", "1", "alice").isOk());  // the default
  CHECK(all.changes.empty());
  CHECK(f.auditLog().size() == 1);
}

TEST_CASE("A refused set notifies nobody and persists nothing", "[notify]") {
  RegistryFixture f;
  Recorder all;
  auto subscription = f.registry->subscribe(kCongestionWindow, "", all.callback());
  CHECK(f.registry->set("congestion_window", "", "0", "alice").code() ==
        ErrorCode::kOutOfRange);
  CHECK(f.registry->set("congestion_window", "0001", "many", "alice").code() ==
        ErrorCode::kWrongType);
  CHECK(all.changes.empty());
  CHECK(f.storedOverrides().empty());
  CHECK(f.auditLog().empty());
}

TEST_CASE("A reset subscription is not called again", "[notify]") {
  RegistryFixture f;
  Recorder all;
  auto subscription = f.registry->subscribe(kSrr, "", all.callback());
  REQUIRE(f.registry->set("srr", "0001", "on", "alice").isOk());
  subscription.reset();
  CHECK_FALSE(subscription.active());
  REQUIRE(f.registry->set("srr", "0001", "off", "alice").isOk());
  CHECK(all.changes.size() == 1);
}

TEST_CASE("Subscribing by an unknown name or a bad SPID is refused", "[notify]") {
  RegistryFixture f;
  TunableRegistry::Subscription subscription;
  CHECK(f.registry->subscribe("srrr", "", [](const Change&) {}, &subscription).code() ==
        ErrorCode::kUnknownName);
  CHECK(f.registry->subscribe("srr", "1", [](const Change&) {}, &subscription).code() ==
        ErrorCode::kInvalidProvider);
  CHECK_FALSE(subscription.active());
  CHECK(f.registry->subscribe("srr", "0001", [](const Change&) {}, &subscription).isOk());
  CHECK(subscription.active());
}

TEST_CASE("A callback may unsubscribe but may not set", "[notify]") {
  RegistryFixture f;
  TunableRegistry::Subscription subscription;
  Status inner;
  int calls = 0;
  REQUIRE(f.registry
              ->subscribe("srr", "",
                          [&](const Change&) {
                            ++calls;
                            inner = f.registry->set("srr", "0009", "on", "callback");
                            subscription.reset();
                          },
                          &subscription)
              .isOk());
  REQUIRE(f.registry->set("srr", "0001", "on", "alice").isOk());
  REQUIRE(f.registry->set("srr", "0002", "on", "alice").isOk());
  CHECK(calls == 1);
  CHECK(inner.code() == ErrorCode::kReentrant);
  CHECK(f.registry->get(kSrr, "0009") == false);
}

TEST_CASE("Readers on other threads see only whole values while an operator changes them",
          "[notify]") {
  RegistryFixture f;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread reader([&] {
    while (!done.load()) {
      auto snapshot = f.registry->snapshot();
      // Every value read must be the default or one the writer wrote, never a torn one.
      const std::int64_t window = snapshot->get(kCongestionWindow, "0001");
      if (window != 100 && window != 10 && window != 20) bad.fetch_add(1);
      const std::string id = f.registry->get(kNpacSystemId);
      if (id != "NPAC" && id != "WEST" && id != "EAST") bad.fetch_add(1);
    }
  });
  for (int i = 0; i < 50; ++i) {
    REQUIRE(f.registry->set("congestion_window", "0001", i % 2 ? "10" : "20", "alice").isOk());
    REQUIRE(f.registry->set("npac_system_id", "", i % 2 ? "EAST" : "WEST", "alice")
                .isOk());
  }
  done.store(true);
  reader.join();
  CHECK(bad.load() == 0);
  CHECK(f.registry->get(kCongestionWindow, "0001") == 10);
}

}  // namespace
}  // namespace npac::tunables
