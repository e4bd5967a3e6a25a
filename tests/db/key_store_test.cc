#include "db/key_store.h"

#include <catch2/catch.hpp>

#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

constexpr TimeMs kYearMs = 365LL * 24 * 3600 * 1000;  // key_lifetime default (the NPAC IIS key-list rule)
const std::string kPem = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n";

ProviderKey key(std::int64_t list, std::int64_t id, KeyAlgorithm algorithm = KeyAlgorithm::kEd25519) {
  return ProviderKey{"0001", list, id, algorithm, kPem, 1000, 1000 + kYearMs,
                     KeyState::kActive, std::nullopt};
}

struct KeyFixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  KeyStore keys{*db};
  KeyFixture() { addProvider(*db, "0001"); }
};

}  // namespace

TEST_CASE("RSA-SHA256 and Ed25519 keys read back as added") {
  KeyFixture f;
  ProviderKey rsa = key(1, 1, KeyAlgorithm::kRsaSha256);
  ProviderKey ed = key(1, 2, KeyAlgorithm::kEd25519);
  REQUIRE(f.keys.add(ed).isOk());
  REQUIRE(f.keys.add(rsa).isOk());
  CHECK(f.keys.get("0001", 1, 1).value() == rsa);
  CHECK(*f.keys.listForProvider("0001") == std::vector<ProviderKey>{rsa, ed});
}

TEST_CASE("A key with an empty validity window or without PEM is refused") {
  KeyFixture f;
  ProviderKey backwards = key(1, 1);
  backwards.not_after_at = backwards.not_before_at;
  CHECK(f.keys.add(backwards).code() == Status::Code::kInvalidArgument);
  ProviderKey raw = key(1, 1);
  raw.public_key_pem = "MCowBQYDK2VwAyEA";
  CHECK(f.keys.add(raw).code() == Status::Code::kInvalidArgument);
}

TEST_CASE("A key for an unknown provider or a duplicate key id is a constraint error") {
  KeyFixture f;
  ProviderKey stranger = key(1, 1);
  stranger.spid = "0009";
  CHECK(f.keys.add(stranger).code() == Status::Code::kConstraint);
  REQUIRE(f.keys.add(key(1, 1)).isOk());
  CHECK(f.keys.add(key(1, 1)).code() == Status::Code::kConstraint);
}

TEST_CASE("Keys past not-after expire and are no longer usable") {
  KeyFixture f;
  REQUIRE(f.keys.add(key(1, 1)).isOk());
  ProviderKey later = key(1, 2);
  later.not_after_at += kYearMs;
  REQUIRE(f.keys.add(later).isOk());
  CHECK(f.keys.get("0001", 1, 1)->isUsableAt(1000 + kYearMs - 1));
  auto expired = f.keys.expireDue(1000 + kYearMs);
  REQUIRE(expired.isOk());
  CHECK(*expired == 1);
  auto first = f.keys.get("0001", 1, 1);
  CHECK(first->state == KeyState::kExpired);
  CHECK_FALSE(first->isUsableAt(2000));
  CHECK(f.keys.get("0001", 1, 2)->state == KeyState::kActive);
}

TEST_CASE("A revoked key is not usable and unknown keys are not found") {
  KeyFixture f;
  REQUIRE(f.keys.add(key(1, 1)).isOk());
  REQUIRE(f.keys.setState("0001", 1, 1, KeyState::kRevoked).isOk());
  CHECK_FALSE(f.keys.get("0001", 1, 1)->isUsableAt(2000));
  CHECK(f.keys.setState("0001", 1, 9, KeyState::kRevoked).isNotFound());
  CHECK(f.keys.get("0001", 2, 1).status().isNotFound());
}

TEST_CASE("Only a bind sequence number above the last accepted one passes") {
  KeyFixture f;
  REQUIRE(f.keys.add(key(1, 1)).isOk());
  REQUIRE(f.keys.acceptSequence("0001", 1, 1, 5).isOk());
  Status replay = f.keys.acceptSequence("0001", 1, 1, 5);
  CHECK(replay.code() == Status::Code::kInvalidArgument);
  CHECK(replay.message().find("replayed") != std::string::npos);
  CHECK(f.keys.acceptSequence("0001", 1, 1, 4).code() == Status::Code::kInvalidArgument);
  REQUIRE(f.keys.acceptSequence("0001", 1, 1, 6).isOk());
  CHECK(f.keys.get("0001", 1, 1)->last_sequence == 6);
  CHECK(f.keys.acceptSequence("0001", 7, 7, 1).isNotFound());
}
