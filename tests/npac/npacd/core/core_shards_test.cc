// AssociationManagers in-process, one per io_context thread, on a real SQLite file, with
// npac-soa-sim binding over real loopback TCP: the bind's one transaction (sequence
// number, NPAC key sequence, association-log row) and the hand-over of a connection to
// the core thread of its provider (core_shards.h). Results are taken on the test thread
// through the CoreService callbacks (futures); Catch2 runs only here.
#include <catch2/catch.hpp>

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <future>
#include <memory>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "common/time_source.h"
#include "db/database.h"
#include "db/key_store.h"
#include "db/provider_store.h"
#include "db/queue_writer.h"
#include "npac/npacd/core/association_manager.h"
#include "npac/npacd/core/core_shards.h"
#include "npac/npacd/npac_keys.h"
#include "tests/npac/npacd/npacd_fixture.h"
#include "tests/support/eventually.h"
#include "tunables/catalogue.h"
#include "tunables/registry.h"

namespace {

namespace asio = boost::asio;
using namespace npac;
using npac::testing::eventually;
using npacd_test::binDir;
using npacd_test::spawn;
using npacd_test::waitFor;

// One core thread: its io_context, connections and manager.
struct Core {
  asio::io_context io;
  std::unique_ptr<db::Database> db, progress;
  std::unique_ptr<npacd::AssociationManager> manager;
  std::thread thread;
};

class CoresFixture {
 public:
  explicit CoresFixture(std::size_t threads) {
    std::string pattern = (std::filesystem::temp_directory_path() / "npac-cores-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir_ = pattern;
    path_ = dir_ + "/npacd.db";
    registry_db_ = open();
    REQUIRE(tunables::TunableRegistry::open(*registry_db_, db::systemClock(), &registry_).isOk());
    auto writer = db::QueueWriter::start(path_, {}, db::systemClock());
    REQUIRE(writer.isOk());
    writer_ = std::move(writer).value();
    std::vector<npacd::AssociationManager*> managers;
    for (std::size_t i = 0; i < threads; ++i) {
      auto core = std::make_unique<Core>();
      core->db = open();
      core->progress = open();
      core->manager = std::make_unique<npacd::AssociationManager>(core->io, *core->db, *core->progress, *writer_,
                                                                  *registry_, clock_);
      managers.push_back(core->manager.get());
      cores_.push_back(std::move(core));
    }
    REQUIRE(npacd::ensureNpacKey(db(0), db::systemClock()(), 3600 * 1000).isOk());
    REQUIRE(cores_[0]->manager->recoverInterrupted().isOk());
    if (threads > 1) {
      shards_ = std::make_unique<npacd::CoreShards>(managers, *writer_, cores_[0]->manager->lastAssociationId());
    }
    REQUIRE(cores_[0]->manager->listen({asio::ip::make_address("127.0.0.1"), 0}).isOk());
    for (std::size_t i = 1; i < threads; ++i) cores_[i]->manager->startTimer();
  }
  ~CoresFixture() {
    stop();
    writer_->stop();
    std::filesystem::remove_all(dir_);
  }

  db::Database& db(std::size_t core) { return *cores_[core]->db; }
  npacd::AssociationManager& manager(std::size_t core) { return *cores_[core]->manager; }
  npacd::CoreService& service() {
    return shards_ ? static_cast<npacd::CoreService&>(*shards_) : cores_[0]->manager->service();
  }
  void run() {
    for (auto& core : cores_) {
      guards_.push_back(asio::make_work_guard(core->io));
      core->thread = std::thread([&io = core->io] { io.run(); });
    }
  }
  void stop() {
    guards_.clear();
    for (auto& core : cores_) {
      core->io.stop();
      if (core->thread.joinable()) core->thread.join();
    }
  }

  // A provisioned SOA provider with SRR on and an Ed25519 key (list 1, key 1) made by the
  // sim's keygen; its private key file.
  std::string provision(const std::string& spid) {
    db::ProviderStore providers(*registry_db_);
    REQUIRE(providers.add({spid, "P" + spid, db::SystemType::kSoa, true}).isOk());
    const std::string key = dir_ + "/key-" + spid + ".pem";
    REQUIRE(waitFor(spawn({binDir() + "/npac-soa-sim", "keygen", "--out", key}, dir_ + "/keygen.log"),
                    std::chrono::seconds(20)) == 0);
    db::ProviderKey k;
    k.spid = spid;
    k.list_id = 1;
    k.key_id = 1;
    k.algorithm = db::KeyAlgorithm::kEd25519;
    k.public_key_pem = npacd_test::slurp(key + ".pub");
    k.not_before_at = 0;
    k.not_after_at = db::systemClock()() + 3600 * 1000;
    REQUIRE(db::KeyStore(*registry_db_).add(k).isOk());
    REQUIRE(registry_->set("srr", spid, "true", "test").isOk());
    return key;
  }

  // npac-soa-sim binding `spid` from `from`, staying bound until `seconds` have passed.
  pid_t bind(const std::string& spid, const std::string& key, const std::string& from, int seconds = 10) {
    return spawn({binDir() + "/npac-soa-sim", "--npac", "127.0.0.1:" + std::to_string(cores_[0]->manager->port()),
                  "--spid", spid, "--key", key, "--no-npac-verify", "--from", from, "--keep-running",
                  "--duration", std::to_string(seconds) + "s", "--log-level", "warn"},
                 dir_ + "/sim-" + spid + ".log");
  }

  std::vector<npacd::AssociationInfo> associations() {
    std::promise<std::vector<npacd::AssociationInfo>> listed;
    service().listAssociations([&](db::Result<std::vector<npacd::AssociationInfo>> list) {
      listed.set_value(list.isOk() ? list.value() : std::vector<npacd::AssociationInfo>{});
    });
    return listed.get_future().get();
  }
  // Polls the association list (bounded) until it holds `count`.
  std::vector<npacd::AssociationInfo> waitForAssociations(std::size_t count) {
    std::vector<npacd::AssociationInfo> list;
    eventually(
        [&] {
          list = associations();
          return list.size() >= count;
        },
        std::chrono::seconds(15));
    return list;
  }

 private:
  std::unique_ptr<db::Database> open() {
    auto opened = db::Database::open(path_);
    REQUIRE(opened.isOk());
    return std::move(opened).value();
  }

  std::string dir_, path_;
  common::RealTimeSource clock_;
  std::unique_ptr<db::Database> registry_db_;
  std::unique_ptr<tunables::TunableRegistry> registry_;
  std::unique_ptr<db::QueueWriter> writer_;
  std::vector<std::unique_ptr<Core>> cores_;
  std::unique_ptr<npacd::CoreShards> shards_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
};

// Which tables each commit on one connection changed (sqlite3_update_hook and
// sqlite3_commit_hook, on the connection's own thread; read after it stopped).
struct CommitRecorder {
  std::set<std::string> changing;
  std::vector<std::set<std::string>> commits;

  void attach(sqlite3* handle) {
    sqlite3_update_hook(
        handle,
        [](void* self, int, const char*, const char* table, sqlite3_int64) {
          static_cast<CommitRecorder*>(self)->changing.insert(table);
        },
        this);
    sqlite3_commit_hook(
        handle,
        [](void* self) {
          auto* r = static_cast<CommitRecorder*>(self);
          if (!r->changing.empty()) r->commits.push_back(std::move(r->changing));
          r->changing.clear();
          return 0;
        },
        this);
    sqlite3_rollback_hook(handle, [](void* self) { static_cast<CommitRecorder*>(self)->changing.clear(); }, this);
  }
  static void detach(sqlite3* handle) {
    sqlite3_update_hook(handle, nullptr, nullptr);
    sqlite3_commit_hook(handle, nullptr, nullptr);
    sqlite3_rollback_hook(handle, nullptr, nullptr);
  }
};

}  // namespace

TEST_CASE("An admitted bind commits its sequence number, the NPAC key's and its log row in one transaction") {
  CoresFixture cores(1);
  const std::string key = cores.provision("0001");
  CommitRecorder recorder;
  recorder.attach(cores.db(0).handle());  // the core's own decisions
  cores.run();
  pid_t sim = cores.bind("0001", key, "127.0.0.2", 2);
  REQUIRE(cores.waitForAssociations(1).size() == 1);
  cores.stop();
  CommitRecorder::detach(cores.db(0).handle());
  waitFor(sim, std::chrono::seconds(10));
  // Every commit that changed any of the three tables changed all three.
  const std::set<std::string> decisions{"provider_keys", "npac_keys", "association_log"};
  std::size_t with_decisions = 0;
  for (const auto& tables : recorder.commits) {
    if (std::none_of(decisions.begin(), decisions.end(), [&](const auto& t) { return tables.count(t) != 0; })) continue;
    ++with_decisions;
    for (const std::string& table : decisions) CHECK(tables.count(table) == 1);
  }
  CHECK(with_decisions == 1);
}

TEST_CASE("A bind accepted on thread 0 for a provider of thread 1 is handed over and bound on thread 1") {
  std::string spid1, spid0;
  for (const char* candidate : {"0001", "0002", "0003", "0004", "0005", "0006"}) {
    std::string& slot = npacd::coreThreadOf(candidate, 2) == 1 ? spid1 : spid0;
    if (slot.empty()) slot = candidate;
  }
  REQUIRE(!spid1.empty());
  REQUIRE(!spid0.empty());
  CoresFixture cores(2);
  const std::string key1 = cores.provision(spid1);
  const std::string key0 = cores.provision(spid0);
  cores.run();
  pid_t sim1 = cores.bind(spid1, key1, "127.0.0.2");
  pid_t sim0 = cores.bind(spid0, key0, "127.0.0.3");
  auto list = cores.waitForAssociations(2);
  REQUIRE(list.size() == 2);
  for (const auto& a : list) {
    INFO(a.spid);
    CHECK(a.core_thread == (a.spid == spid1 ? 1u : 0u));
    CHECK(a.state == "bound");
  }
  CHECK(list[0].id != list[1].id);
  kill(sim1, SIGTERM);
  kill(sim0, SIGTERM);
  waitFor(sim1, std::chrono::seconds(10));
  waitFor(sim0, std::chrono::seconds(10));
  // Both released (the sims end with RLRQ): thread 1 heard of its association's end.
  eventually([&] { return cores.associations().empty(); }, std::chrono::seconds(10));
  CHECK(cores.associations().empty());
}

// The inbox (core_inbox.h) without a peer: what another thread posts reaches the core
// thread's parts, seen through the CoreService the application calls.
namespace {

std::vector<npacd::InboundRequest> pollNow(npacd::CoreService& service) {
  std::promise<std::vector<npacd::InboundRequest>> polled;
  service.pollInbound({"", 100, std::chrono::milliseconds(0)}, [&](db::Result<std::vector<npacd::InboundRequest>> r) {
    polled.set_value(r.isOk() ? r.value() : std::vector<npacd::InboundRequest>{});
  });
  return polled.get_future().get();
}

}  // namespace

TEST_CASE("A provider's request posted to thread 0's inbox from another thread reaches the application's poll") {
  CoresFixture f(2);
  f.run();
  npacd::InboundRequest request;
  request.spid = "0002";
  request.association_id = 7;
  request.invoke_id = 41;
  f.manager(0).inbox().postInbound(request);
  std::vector<npacd::InboundRequest> polled;
  eventually(
      [&] {
        polled = pollNow(f.service());
        return !polled.empty();
      },
      std::chrono::seconds(5));
  REQUIRE(polled.size() == 1);
  CHECK(polled[0].spid == "0002");
  CHECK(polled[0].association_id == 7);
  CHECK(polled[0].invoke_id == 41);
}

TEST_CASE("A change of a provider that never bound on this thread, posted to its inbox, releases nothing") {
  CoresFixture f(1);
  f.run();
  f.manager(0).inbox().postProviderChanged("0001");
  f.manager(0).inbox().postWakeAll();
  f.manager(0).inbox().postSubmittedElsewhere("0001");
  CHECK(f.associations().empty());  // answered after the posts ran, on the same thread
}
