// ProgressFence: the lease check on progress writes on its own — what it refuses, what it
// reports and in which order, and when a provider stops reading fenced.
#include "npac/npacd/core/progress_fence.h"

#include <catch2/catch.hpp>

#include "db/lease_store.h"
#include "db/provider_store.h"
#include "tests/db/temp_dir.h"

using namespace npac;
using namespace npac::npacd;

namespace {

struct FenceFixture {
  db::testing::TempDir dir;
  std::unique_ptr<db::Database> db;
  std::vector<std::string> calls;  // "refused:<spid>" and "fenced:<spid>", in order
  std::unique_ptr<ProgressFence> fence;

  FenceFixture() {
    db = db::Database::open(dir.file("npacd.db")).value();
    REQUIRE(db::ProviderStore(*db).add({"0001", "Provider 0001", db::SystemType::kSoa, true}).isOk());
    fence = std::make_unique<ProgressFence>(*db,
                                            [this](const std::string& spid) { calls.push_back("refused:" + spid); });
  }
  // This node ("a") takes 0001's lease; returns its epoch.
  std::optional<std::int64_t> lease() {
    auto taken = db::LeaseStore(*db).acquire("0001", "a", 1000, 5000);
    REQUIRE(taken.isOk());
    return taken->lease.epoch;
  }
  void setLease(std::optional<std::int64_t> epoch) {
    ProgressFence::Lease lease;
    lease.owner = "a";
    lease.epoch_of = [epoch](const std::string&) { return epoch; };
    lease.on_fenced = [this](const std::string& spid, const db::Status&) { calls.push_back("fenced:" + spid); };
    fence->set(std::move(lease));
  }
};

}  // namespace

TEST_CASE("Without a lease set nothing is checked or fenced") {
  FenceFixture f;
  CHECK_FALSE(f.fence->active());
  CHECK(f.fence->check("0001").isOk());
  CHECK_FALSE(f.fence->fenced("0001"));
}

TEST_CASE("A provider whose lease this node holds at the reported epoch passes the check") {
  FenceFixture f;
  f.setLease(f.lease());
  CHECK(f.fence->active());
  CHECK(f.fence->check("0001").isOk());
  std::map<std::string, db::Status> checked;
  std::vector<ProgressWrite> writes{ProgressWrite{ProgressWrite::Kind::kSent, "0001", {1}, 1, 2000, {}},
                                    ProgressWrite{ProgressWrite::Kind::kAcknowledged, "0001", {1}, 0, 2100, {}}};
  CHECK_FALSE(f.fence->checkAll(writes, checked).has_value());
  REQUIRE(checked.size() == 1);
  CHECK(checked.at("0001").isOk());
}

TEST_CASE("A provider this node holds no lease on is refused and reads fenced until one of its writes commits") {
  FenceFixture f;
  f.setLease(std::nullopt);
  db::Status why = f.fence->check("0001");
  CHECK(why.code() == db::Status::Code::kFenced);
  f.fence->reportFenced("0001", why, 2);
  CHECK(f.calls == std::vector<std::string>{"refused:0001", "fenced:0001"});
  CHECK(f.fence->fenced("0001"));
  CHECK(f.fence->fencedWrites() == 2);
  f.fence->committed({ProgressWrite{ProgressWrite::Kind::kSent, "0001", {1}, 1, 2000, {}}}, {{"0001", 1}});
  CHECK(f.fence->fenced("0001"));  // its writes of that turn were dropped
  f.fence->committed("0001");
  CHECK_FALSE(f.fence->fenced("0001"));
}

TEST_CASE("After a turn each fenced provider is reported once with the count of its dropped writes") {
  FenceFixture f;
  f.setLease(std::nullopt);
  std::map<std::string, db::Status> checked;
  std::vector<ProgressWrite> writes{ProgressWrite{ProgressWrite::Kind::kSent, "0001", {1}, 1, 2000, {}},
                                    ProgressWrite{ProgressWrite::Kind::kSent, "0002", {2}, 1, 2000, {}}};
  REQUIRE_FALSE(f.fence->checkAll(writes, checked).has_value());
  f.fence->reportDropped(checked, {{"0001", 3}, {"0002", 1}});
  CHECK(f.calls == std::vector<std::string>{"refused:0001", "fenced:0001", "refused:0002", "fenced:0002"});
  CHECK(f.fence->fencedWrites() == 4);
}
