// NpacKeyStore on a real SQLite file: the NPAC's own key lists, the choice of the signing
// key and the persisted sequence numbers of its bind responses.
#include "db/npac_key_store.h"

#include <catch2/catch.hpp>

#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

namespace {

constexpr TimeMs kDayMs = 24LL * 3600 * 1000;
const std::string kPublic = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n";
const std::string kPrivate = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI\n-----END PRIVATE KEY-----\n";

NpacKey npacKey(std::int64_t list, std::int64_t id, TimeMs not_before = 1000, TimeMs created = 1000) {
  return NpacKey{list, id, KeyAlgorithm::kEd25519, kPublic, kPrivate, not_before,
                 not_before + 365 * kDayMs, KeyState::kActive, created, 0};
}

struct NpacKeyFixture {
  TempDir dir;
  std::unique_ptr<Database> db = openFresh(dir);
  NpacKeyStore keys{*db};
};

}  // namespace

TEST_CASE("NPAC keys read back as added, both halves included") {
  NpacKeyFixture f;
  NpacKey rsa = npacKey(1, 2);
  rsa.algorithm = KeyAlgorithm::kRsaSha256;
  REQUIRE(f.keys.add(rsa).isOk());
  REQUIRE(f.keys.add(npacKey(1, 1)).isOk());
  CHECK(f.keys.get(1, 2).value() == rsa);
  CHECK(*f.keys.list() == std::vector<NpacKey>{npacKey(1, 1), rsa});
}

TEST_CASE("An NPAC key without PEM, with an empty window or an out-of-range id is refused") {
  NpacKeyFixture f;
  NpacKey no_pem = npacKey(1, 1);
  no_pem.private_key_pem = "not pem";
  CHECK(f.keys.add(no_pem).code() == Status::Code::kInvalidArgument);
  NpacKey empty = npacKey(1, 1);
  empty.not_after_at = empty.not_before_at;
  CHECK(f.keys.add(empty).code() == Status::Code::kInvalidArgument);
  CHECK(f.keys.add(npacKey(2147483648LL, 1)).code() == Status::Code::kInvalidArgument);
  CHECK(f.keys.list()->empty());
}

TEST_CASE("A duplicate NPAC key is a constraint error") {
  NpacKeyFixture f;
  REQUIRE(f.keys.add(npacKey(1, 1)).isOk());
  CHECK(f.keys.add(npacKey(1, 1)).code() == Status::Code::kConstraint);
}

TEST_CASE("An unknown NPAC key is not found for get, revoke and sequence") {
  NpacKeyFixture f;
  CHECK(f.keys.get(9, 9).status().code() == Status::Code::kNotFound);
  CHECK(f.keys.setState(9, 9, KeyState::kRevoked).code() == Status::Code::kNotFound);
  CHECK(f.keys.nextSequence(9, 9).status().code() == Status::Code::kNotFound);
}

TEST_CASE("The signing key is the newest active key valid at the moment") {
  NpacKeyFixture f;
  REQUIRE(f.keys.add(npacKey(1, 1, 1000)).isOk());
  REQUIRE(f.keys.add(npacKey(1, 2, 5 * kDayMs)).isOk());   // valid from day 5
  REQUIRE(f.keys.add(npacKey(2, 1, 10 * kDayMs)).isOk());  // valid from day 10
  CHECK(f.keys.signingKeyAt(2 * kDayMs)->key_id == 1);
  CHECK(f.keys.signingKeyAt(6 * kDayMs)->key_id == 2);
  CHECK(f.keys.signingKeyAt(11 * kDayMs)->list_id == 2);
  REQUIRE(f.keys.setState(2, 1, KeyState::kRevoked).isOk());
  auto now = f.keys.signingKeyAt(11 * kDayMs);
  REQUIRE(now.isOk());
  CHECK(now->list_id == 1);
  CHECK(now->key_id == 2);
}

TEST_CASE("Without a usable NPAC key there is no signing key") {
  NpacKeyFixture f;
  CHECK(f.keys.signingKeyAt(2000).status().code() == Status::Code::kNotFound);
  REQUIRE(f.keys.add(npacKey(1, 1)).isOk());
  CHECK(f.keys.signingKeyAt(500).status().code() == Status::Code::kNotFound);  // not yet valid
  CHECK(f.keys.signingKeyAt(1000 + 365 * kDayMs).status().code() == Status::Code::kNotFound);
  REQUIRE(f.keys.setState(1, 1, KeyState::kRevoked).isOk());
  CHECK(f.keys.signingKeyAt(2000).status().code() == Status::Code::kNotFound);
}

TEST_CASE("NPAC sequence numbers increase per key and survive reopening the database") {
  NpacKeyFixture f;
  REQUIRE(f.keys.add(npacKey(1, 1)).isOk());
  REQUIRE(f.keys.add(npacKey(1, 2)).isOk());
  CHECK(f.keys.nextSequence(1, 1).value() == 1);
  CHECK(f.keys.nextSequence(1, 1).value() == 2);
  CHECK(f.keys.nextSequence(1, 2).value() == 1);
  f.db.reset();
  f.db = openFresh(f.dir);
  NpacKeyStore reopened(*f.db);
  CHECK(reopened.nextSequence(1, 1).value() == 3);
  CHECK(reopened.get(1, 1)->last_sequence == 3);
}

TEST_CASE("An NPAC key whose sequence numbers are used up refuses the next one") {
  NpacKeyFixture f;
  NpacKey full = npacKey(1, 1);
  full.last_sequence = 4294967295LL;
  REQUIRE(f.keys.add(full).isOk());
  auto next = f.keys.nextSequence(1, 1);
  REQUIRE_FALSE(next.isOk());
  CHECK(next.status().code() == Status::Code::kInvalidArgument);
  CHECK(f.keys.get(1, 1)->last_sequence == 4294967295LL);
}
