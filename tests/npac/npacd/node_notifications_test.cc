// NodeNotifications (npac/npacd/node_notifications.h) on the suite's PostgreSQL cluster:
// two registries on one database play two npacd nodes, in-process and deterministic —
// the change is made exactly in the window between the second node's first read and its
// LISTEN, which a test of two npacd processes can only hit by chance.
#include "npac/npacd/node_notifications.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>
#include <chrono>
#include <thread>

#include "db/database.h"
#include "db/provider_store.h"
#include "db/queue_writer.h"
#include "tests/support/eventually.h"
#include "tests/support/postgres_test_database.h"
#include "tunables/catalogue.h"
#include "tunables/registry.h"

using namespace npac;
using npac::npacd::NodeNotifications;
using namespace std::chrono_literals;
using npac::testing::eventually;

namespace {

db::TimeMs fixedNow() { return 1'700'000'000'000; }

struct Node {
  std::unique_ptr<db::Database> db;
  std::unique_ptr<tunables::TunableRegistry> registry;
  explicit Node(const std::string& url) {
    db = db::Database::open(url).value();
    REQUIRE(tunables::TunableRegistry::open(*db, fixedNow, &registry).isOk());
  }
};

// The providers a listening node was asked to wake (Actions::wake), from its listener thread.
class WokenProviders {
 public:
  NodeNotifications::Actions actions() {
    NodeNotifications::Actions actions;
    actions.wake = [this](const std::string& spid) {
      std::lock_guard lock(mutex_);
      spids_.push_back(spid);
    };
    return actions;
  }
  std::vector<std::string> spids() const {
    std::lock_guard lock(mutex_);
    return spids_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> spids_;
};

}  // namespace

TEST_CASE("A node that starts listening reads the tunables again, so a change made while it started is applied",
          "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  Node a(database.url());
  Node b(database.url());  // b has read the overrides: none yet
  // a's change commits and notifies while b does not listen yet: nobody hears it.
  REQUIRE(a.registry->set("bind_timeout", "", "45s", "operator").isOk());
  CHECK(b.registry->get(tunables::kBindTimeout) != 45s);
  std::atomic<int> woken{0};
  NodeNotifications::Actions actions;
  actions.wake_all = [&] { ++woken; };
  auto listening = NodeNotifications::start(database.url(), *b.registry, actions, 5s);
  REQUIRE(listening.isOk());
  // Read again once the LISTEN is in force: applied without any further notification.
  CHECK(b.registry->get(tunables::kBindTimeout) == 45s);
  CHECK(woken == 1);  // and every provider's queue is looked at again
  (*listening)->stop();
}

TEST_CASE("A node listening applies a tunable another node sets afterwards", "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  Node a(database.url());
  Node b(database.url());
  auto listening = NodeNotifications::start(database.url(), *b.registry, {}, 5s);
  REQUIRE(listening.isOk());
  REQUIRE(a.registry->set("bind_timeout", "", "4s", "operator").isOk());
  CHECK(eventually([&] { return b.registry->get(tunables::kBindTimeout) == 4s; }, 10s, 10ms));
  (*listening)->stop();
}

TEST_CASE("A node listening wakes the provider another node submitted for, and applies its provider change",
          "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  Node a(database.url());
  Node b(database.url());
  std::mutex mutex;
  std::vector<std::string> woken, changed;
  NodeNotifications::Actions actions;
  actions.wake = [&](const std::string& spid) {
    std::lock_guard lock(mutex);
    woken.push_back(spid);
  };
  actions.provider_changed = [&](const std::string& spid) {
    std::lock_guard lock(mutex);
    changed.push_back(spid);
  };
  auto listening = NodeNotifications::start(database.url(), *b.registry, actions, 5s);
  REQUIRE(listening.isOk());
  REQUIRE(db::notifyNodes(*a.db, db::kSubmittedChannel, "0001").isOk());
  REQUIRE(db::notifyNodes(*a.db, db::kChangedChannel, "provider:0002").isOk());
  REQUIRE(db::notifyNodes(*a.db, db::kChangedChannel, "provider:not-a-spid").isOk());  // ignored
  CHECK(eventually([&] {
    std::lock_guard lock(mutex);
    return woken.size() == 1 && changed.size() == 1;
  }, 10s, 10ms));
  std::lock_guard lock(mutex);
  CHECK(woken == std::vector<std::string>{"0001"});
  CHECK(changed == std::vector<std::string>{"0002"});
  (*listening)->stop();
}

TEST_CASE("A node passes on the submissions of other nodes, not those its own writer announced", "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  Node a(database.url());
  Node b(database.url());
  WokenProviders woken;
  auto listening = NodeNotifications::start(database.url(), *b.registry, woken.actions(), 5s, "node-b");
  REQUIRE(listening.isOk());
  REQUIRE(db::notifyNodes(*a.db, db::kSubmittedChannel, "0001 node-b").isOk());  // b's own writer
  REQUIRE(db::notifyNodes(*a.db, db::kSubmittedChannel, "0002 node-a").isOk());
  REQUIRE(db::notifyNodes(*a.db, db::kSubmittedChannel, std::vector<std::string>{"0003", "0004 node-a"}).isOk());
  // Notifications arrive in commit order: once this last one is here, every earlier one
  // was handled before it, b's own included.
  REQUIRE(db::notifyNodes(*a.db, db::kSubmittedChannel, "0009 node-a").isOk());
  CHECK(eventually([&] {
    const std::vector<std::string> spids = woken.spids();
    return std::find(spids.begin(), spids.end(), "0009") != spids.end();
  }, 10s, 10ms));
  std::vector<std::string> spids = woken.spids();
  std::sort(spids.begin(), spids.end());
  CHECK(spids == std::vector<std::string>{"0002", "0003", "0004", "0009"});
  (*listening)->stop();
}

TEST_CASE("A queue writer's node name goes with its NOTIFY, so only the other node is woken", "[postgres]") {
  npac::testing::PostgresTestDatabase database;
  Node a(database.url());
  Node b(database.url());
  REQUIRE(db::ProviderStore(*a.db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
  REQUIRE(db::ProviderStore(*a.db).add({"0002", "Provider 0002", db::SystemType::kSoa, true}).isOk());
  WokenProviders woken;
  auto listening = NodeNotifications::start(database.url(), *b.registry, woken.actions(), 5s, "node-b");
  REQUIRE(listening.isOk());
  const auto submitAs = [&](const std::string& node, const char* spid) {
    db::QueueWriter::Options options;
    options.node = node;
    auto writer = db::QueueWriter::start(database.url(), db::OpenOptions{}, fixedNow, options);
    REQUIRE(writer.isOk());
    REQUIRE((*writer)->submit({db::NewMessage{spid, 1, 0, {0x30, 0x01, 0x01}}}).get().isOk());
    (*writer)->stop();
  };
  submitAs("node-b", "0001");  // b's own writer: b's core has the rows already
  submitAs("node-a", "0002");
  // Notifications arrive in commit order: once a's is here, b's was handled before it.
  CHECK(eventually([&] {
    const std::vector<std::string> spids = woken.spids();
    return std::find(spids.begin(), spids.end(), "0002") != spids.end();
  }, 10s, 10ms));
  CHECK(woken.spids() == std::vector<std::string>{"0002"});
  (*listening)->stop();
}
