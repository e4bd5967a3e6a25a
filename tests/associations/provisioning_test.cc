// loadBindFacts / recordSequence against a real SQLite file made by db/.
#include "associations/provisioning.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "associations/bind_gate.h"
#include "db/key_store.h"
#include "db/nsap_store.h"
#include "db/provider_store.h"
#include "tests/associations/test_values.h"

using namespace npac;
using namespace npac::associations;
using namespace npac::associations::testing;
using namespace std::chrono_literals;

namespace {

struct TempDatabase {
  std::filesystem::path dir;
  std::unique_ptr<db::Database> database;
  TempDatabase() {
    std::string pattern = (std::filesystem::temp_directory_path() / "asseng-prov-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    auto opened = db::Database::open((dir / "npacd.db").string());
    REQUIRE(opened.isOk());
    database = std::move(opened).value();
  }
  ~TempDatabase() {
    database.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};


constexpr db::TimeMs kNowMs = 1'800'000'000'000;

db::Bytes octets(const Nsap& nsap) { return db::Bytes(nsap.octets().begin(), nsap.octets().end()); }

void provision(db::Database& database) {
  REQUIRE(db::ProviderStore(database).add({"1234", "Example SOA", db::SystemType::kSoa, true}).isOk());
  db::NsapStore nsaps(database);
  REQUIRE(nsaps.add({"1234", octets(Nsap::fromIpv4({127, 0, 0, 2})), 3u, 10u}).isOk());
  REQUIRE(nsaps.add({"1234", octets(Nsap::fromIpv4({127, 0, 0, 3})), std::nullopt, std::nullopt}).isOk());
  db::ProviderKey key{"1234", 7, 3, db::KeyAlgorithm::kEd25519, keys().public_pem,
                      kNowMs - 86'400'000, kNowMs + 86'400'000, db::KeyState::kActive, 41};
  REQUIRE(db::KeyStore(database).add(key).isOk());
}

BindRequest request() {
  BindRequest r;
  r.spid = "1234";
  r.system_type = SystemType::kSoa;
  r.key_list_id = 7;
  r.key_id = 3;
  r.departure_time = kNow;
  r.sequence_number = 42;
  r.functions = FunctionMask::of({AssociationFunction::kSoaManagement});
  r.signed_bytes = {1, 2, 3, 4};
  r.signature = SignatureSigner::fromPem(SignatureAlgorithm::kEd25519, keys().private_pem)
                    .value()
                    .sign(r.signed_bytes)
                    .value();
  return r;
}

}  // namespace

TEST_CASE("Provisioning facts are read from the stores") {
  TempDatabase temp;
  provision(*temp.database);
  auto facts = loadBindFacts(*temp.database, request());
  REQUIRE(facts.isOk());
  REQUIRE(facts->provider.has_value());
  CHECK(facts->provider->system_type == SystemType::kSoa);
  CHECK(facts->provider->enabled);
  CHECK(facts->provider->provisioned_nsaps.size() == 2);
  REQUIRE(facts->key.has_value());
  CHECK(facts->key->algorithm == SignatureAlgorithm::kEd25519);
  CHECK(facts->key->last_sequence_number == 41u);
  CHECK(facts->key->not_after == kNow + 24h);
  const NsapTraffic weighted = trafficFor(*facts, Nsap::fromIpv4({127, 0, 0, 2}));
  CHECK(weighted.weight == 3u);
  CHECK(weighted.relative_cost == 10u);
  CHECK(trafficFor(*facts, Nsap::fromIpv4({127, 0, 0, 3})).weight == 1u);
}

TEST_CASE("A bind checked with facts from the stores is admitted, then its number is used up") {
  TempDatabase temp;
  provision(*temp.database);
  const BindRequest bind = request();
  auto facts = loadBindFacts(*temp.database, bind);
  REQUIRE(facts.isOk());
  const Nsap peer = Nsap::fromIpv4({127, 0, 0, 2});
  const BindTunables tunables;
  const BindVerdict verdict = BindGate().check(BindInput{
      bind, peer, facts->provider ? &*facts->provider : nullptr, facts->key ? &*facts->key : nullptr,
      {}, tunables, kNow});
  INFO(verdict.reason);
  REQUIRE(verdict.admitted());
  REQUIRE(recordSequence(*temp.database, bind, *verdict.consume_sequence).isOk());
  // The same bind again: the store now holds 42, so the gate sees a replay...
  auto again = loadBindFacts(*temp.database, bind);
  REQUIRE(again.isOk());
  const BindVerdict replay = BindGate().check(BindInput{
      bind, peer, &*again->provider, &*again->key, {}, tunables, kNow});
  CHECK(replay.rejection == BindDiagnostic::kSequenceReplayed);
  // ...and a racing bind that passed the gate with the old facts is stopped by the store.
  CHECK(recordSequence(*temp.database, bind, 42).code() == db::Status::Code::kInvalidArgument);
}

TEST_CASE("An unknown SPID or key yields facts without them, not an error") {
  TempDatabase temp;
  provision(*temp.database);
  BindRequest unknown = request();
  unknown.spid = "9999";
  auto none = loadBindFacts(*temp.database, unknown);
  REQUIRE(none.isOk());
  CHECK_FALSE(none->provider.has_value());
  BindRequest other_key = request();
  other_key.key_id = 4;
  auto no_key = loadBindFacts(*temp.database, other_key);
  REQUIRE(no_key.isOk());
  CHECK(no_key->provider.has_value());
  CHECK_FALSE(no_key->key.has_value());
}

TEST_CASE("A provisioned NSAP that is not an Internet NSAP is counted as unusable") {
  TempDatabase temp;
  REQUIRE(db::ProviderStore(*temp.database).add({"5678", "OSI only", db::SystemType::kLsms, true}).isOk());
  db::Bytes gosip = {0x47, 0x00, 0x05, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  REQUIRE(db::NsapStore(*temp.database).add({"5678", gosip, std::nullopt, std::nullopt}).isOk());
  BindRequest bind = request();
  bind.spid = "5678";
  auto facts = loadBindFacts(*temp.database, bind);
  REQUIRE(facts.isOk());
  CHECK(facts->unusable_nsaps == 1);
  // Its list is not empty, so no peer address matches it.
  REQUIRE(facts->provider.has_value());
  CHECK(facts->provider->provisioned_nsaps.size() == 1);
  CHECK(facts->provider->provisioned_nsaps[0] != Nsap::fromIpv4({127, 0, 0, 2}));
}
