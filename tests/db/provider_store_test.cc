#include "db/provider_store.h"

#include <catch2/catch.hpp>

#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

TEST_CASE("A provider reads back as added") {
  TempDir dir;
  auto db = openFresh(dir);
  ProviderStore store(*db);
  ServiceProvider acme{"A1b2", "Acme Telecom", SystemType::kSoaAndLsms, true};
  REQUIRE(store.add(acme).isOk());
  auto got = store.get("A1b2");
  REQUIRE(got.isOk());
  CHECK(*got == acme);
}

TEST_CASE("Adding a provider twice is a constraint error") {
  TempDir dir;
  auto db = openFresh(dir);
  ProviderStore store(*db);
  REQUIRE(store.add({"0001", "One", SystemType::kSoa, true}).isOk());
  CHECK(store.add({"0001", "Again", SystemType::kLsms, true}).code() == Status::Code::kConstraint);
}

TEST_CASE("A SPID that is not 4 letters or digits is refused") {
  TempDir dir;
  auto db = openFresh(dir);
  ProviderStore store(*db);
  for (const char* spid : {"", "001", "00001", "00 1", "00'1"}) {
    INFO(spid);
    CHECK(store.add({spid, "Bad", SystemType::kSoa, true}).code() == Status::Code::kInvalidArgument);
  }
  CHECK(store.list()->empty());
}

TEST_CASE("Providers can be updated, disabled, listed by SPID and removed") {
  TempDir dir;
  auto db = openFresh(dir);
  ProviderStore store(*db);
  REQUIRE(store.add({"0002", "Two", SystemType::kLsms, true}).isOk());
  REQUIRE(store.add({"0001", "One", SystemType::kSoa, true}).isOk());
  REQUIRE(store.update({"0001", "One Renamed", SystemType::kNpac, true}).isOk());
  REQUIRE(store.setEnabled("0002", false).isOk());
  auto all = store.list();
  REQUIRE(all.isOk());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0] == ServiceProvider{"0001", "One Renamed", SystemType::kNpac, true});
  CHECK((*all)[1] == ServiceProvider{"0002", "Two", SystemType::kLsms, false});
  REQUIRE(store.remove("0002").isOk());
  CHECK(store.get("0002").status().isNotFound());
}

TEST_CASE("Changing or removing an unknown provider is not found") {
  TempDir dir;
  auto db = openFresh(dir);
  ProviderStore store(*db);
  CHECK(store.update({"0009", "X", SystemType::kSoa, true}).isNotFound());
  CHECK(store.setEnabled("0009", false).isNotFound());
  CHECK(store.remove("0009").isNotFound());
  CHECK(store.get("0009").status().message().find("0009") != std::string::npos);
}

TEST_CASE("System type names parse and print") {
  CHECK(parseSystemType("soa-and-lsms") == SystemType::kSoaAndLsms);
  CHECK(std::string(toString(SystemType::kLsms)) == "lsms");
  CHECK_FALSE(parseSystemType("SOA").has_value());
}
