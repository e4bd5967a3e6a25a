#include "db/nsap_store.h"

#include <catch2/catch.hpp>

#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

// A 12-octet NSAP (NANC 316), RFC 1277 style: 0x54 0x00 0x72 0x87 0x22 + IPv4 + padding.
Bytes nsap12(std::uint8_t last) {
  return Bytes{0x54, 0x00, 0x72, 0x87, 0x22, 127, 0, 0, last, 0x00, 0x00, 0x01};
}

}  // namespace

TEST_CASE("NSAPs with and without weight and cost read back per provider") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  addProvider(*db, "0002");
  NsapStore store(*db);
  ProvisionedNsap plain{"0001", nsap12(1), std::nullopt, std::nullopt};
  ProvisionedNsap weighted{"0001", nsap12(2), 40, 10};
  REQUIRE(store.add(weighted).isOk());
  REQUIRE(store.add(plain).isOk());
  REQUIRE(store.add({"0002", nsap12(1), 99, 0}).isOk());
  auto list = store.listForProvider("0001");
  REQUIRE(list.isOk());
  CHECK(*list == std::vector<ProvisionedNsap>{plain, weighted});
  CHECK(store.isProvisioned("0001", nsap12(2)).value());
  CHECK_FALSE(store.isProvisioned("0002", nsap12(2)).value());
}

TEST_CASE("An NSAP weight outside the EAGLE range 1 to 99 is refused") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  NsapStore store(*db);
  CHECK(store.add({"0001", nsap12(1), 0, std::nullopt}).code() == Status::Code::kInvalidArgument);
  CHECK(store.add({"0001", nsap12(1), 100, std::nullopt}).code() == Status::Code::kInvalidArgument);
  CHECK(store.add({"0001", nsap12(1), 1, std::nullopt}).isOk());
  CHECK(store.add({"0001", nsap12(2), 99, std::nullopt}).isOk());
}

TEST_CASE("An empty or over-long NSAP is refused") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  NsapStore store(*db);
  CHECK(store.add({"0001", Bytes{}, {}, {}}).code() == Status::Code::kInvalidArgument);
  CHECK(store.add({"0001", Bytes(21, 0x49), {}, {}}).code() == Status::Code::kInvalidArgument);
  CHECK(store.add({"0001", Bytes(20, 0x49), {}, {}}).isOk());
}

TEST_CASE("An NSAP for an unknown provider or provisioned twice is a constraint error") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  NsapStore store(*db);
  CHECK(store.add({"0009", nsap12(1), {}, {}}).code() == Status::Code::kConstraint);
  REQUIRE(store.add({"0001", nsap12(1), {}, {}}).isOk());
  CHECK(store.add({"0001", nsap12(1), {}, {}}).code() == Status::Code::kConstraint);
}

TEST_CASE("Updating and removing an NSAP, and removing its provider removes it") {
  TempDir dir;
  auto db = openFresh(dir);
  addProvider(*db, "0001");
  NsapStore store(*db);
  REQUIRE(store.add({"0001", nsap12(1), {}, {}}).isOk());
  REQUIRE(store.add({"0001", nsap12(2), {}, {}}).isOk());
  REQUIRE(store.update({"0001", nsap12(1), 7, 3}).isOk());
  CHECK(store.listForProvider("0001")->front() == ProvisionedNsap{"0001", nsap12(1), 7, 3});
  REQUIRE(store.remove("0001", nsap12(1)).isOk());
  CHECK(store.remove("0001", nsap12(1)).isNotFound());
  CHECK(store.update({"0001", nsap12(9), 1, 1}).isNotFound());
  REQUIRE(ProviderStore(*db).remove("0001").isOk());
  CHECK(store.listForProvider("0001")->empty());
}

TEST_CASE("NSAP hex round-trips and malformed hex is rejected") {
  CHECK(toHex(nsap12(1)) == "54007287227f000001000001");
  CHECK(fromHex("540072872227F000001000001") == std::nullopt);  // odd length
  CHECK(fromHex("54007287227F000001000001") == nsap12(1));
  CHECK(fromHex("zz") == std::nullopt);
  CHECK(fromHex("")->empty());
}
