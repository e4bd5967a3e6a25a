#include "db/token_store.h"

#include <catch2/catch.hpp>

#include <cctype>
#include <set>

#include "common/hex.h"
#include "fixtures.h"

using namespace npac::db;
using namespace npac::db::testing;

TEST_CASE("A created token verifies by its secret and reports its name and role") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  Result<IssuedToken> issued = tokens.create("ops-alice", TokenRole::kOperator, "npacd", 1000);
  REQUIRE(issued.isOk());
  CHECK(issued->secret.size() == kTokenLength);
  CHECK(issued->secret.rfind("npac_", 0) == 0);
  Result<ApiToken> found = tokens.verify(issued->secret);
  REQUIRE(found.isOk());
  CHECK(found->name == "ops-alice");
  CHECK(found->role == TokenRole::kOperator);
  CHECK(found->created_at == 1000);
  CHECK(found->created_by == "npacd");
  CHECK_FALSE(found->revoked_at.has_value());
}

TEST_CASE("The database holds the SHA-256 of the secret and never the secret") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  Result<IssuedToken> issued = tokens.create("app", TokenRole::kApplication, "ops", 1);
  REQUIRE(issued.isOk());
  auto row = db->prepare("SELECT secret_sha256, length(secret_sha256) FROM api_tokens WHERE name = 'app'");
  REQUIRE(row.isOk());
  REQUIRE(row->step().value());
  CHECK(row->columnInt(1) == 32);
  const std::string stored = npac::common::toHex(row->columnBlob(0));  // lower case
  std::string secret_hex = issued->secret.substr(kTokenPrefix.size());
  for (char& c : secret_hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  CHECK(stored.find(secret_hex) == std::string::npos);
  // Nor even its first 8 bytes.
  CHECK(stored.find(secret_hex.substr(0, 16)) == std::string::npos);
}

TEST_CASE("Two tokens get different secrets") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  std::set<std::string> secrets;
  for (int i = 0; i < 20; ++i) {
    Result<IssuedToken> issued = tokens.create(std::string("t").append(std::to_string(i)), TokenRole::kReader, "ops", 1);
    REQUIRE(issued.isOk());
    secrets.insert(issued->secret);
  }
  CHECK(secrets.size() == 20);
}

TEST_CASE("A secret that no token has is not found") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  REQUIRE(tokens.create("a", TokenRole::kReader, "ops", 1).isOk());
  CHECK(tokens.verify("npac_" + std::string(64, '0')).status().code() == Status::Code::kNotFound);
}

TEST_CASE("Text that is not an npacd token is refused before any lookup") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  for (const std::string& bad : {std::string(), std::string("npac_"), std::string("npac_") + std::string(63, 'a'),
                                 std::string("npac_") + std::string(65, 'a'), std::string("NPAC_") + std::string(64, 'a'),
                                 std::string("npac_") + std::string(64, 'A'), std::string("xxxx_") + std::string(64, 'a'),
                                 std::string("npac_") + std::string(63, 'a') + "g"}) {
    INFO(bad);
    Result<ApiToken> found = tokens.verify(bad);
    CHECK(found.status().code() == Status::Code::kInvalidArgument);
    CHECK(found.status().message().find("not an npacd token") != std::string::npos);
  }
}

TEST_CASE("A revoked token still verifies and says when it was revoked") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  Result<IssuedToken> issued = tokens.create("gone", TokenRole::kApplication, "ops", 1);
  REQUIRE(issued.isOk());
  Result<ApiToken> revoked = tokens.revoke("gone", 77);
  REQUIRE(revoked.isOk());
  CHECK(revoked->revoked_at == 77);
  Result<ApiToken> found = tokens.verify(issued->secret);
  REQUIRE(found.isOk());
  CHECK(found->revoked_at == 77);
}

TEST_CASE("Revoking twice is refused and keeps the first revocation time") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  REQUIRE(tokens.create("gone", TokenRole::kReader, "ops", 1).isOk());
  REQUIRE(tokens.revoke("gone", 10).isOk());
  CHECK(tokens.revoke("gone", 20).status().code() == Status::Code::kConstraint);
  CHECK(tokens.get("gone")->revoked_at == 10);
}

TEST_CASE("Revoking an unknown token is not found") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  CHECK(tokens.revoke("nobody", 1).status().code() == Status::Code::kNotFound);
}

TEST_CASE("A token name is unique even after its token is revoked") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  REQUIRE(tokens.create("ops", TokenRole::kOperator, "npacd", 1).isOk());
  CHECK(tokens.create("ops", TokenRole::kReader, "npacd", 2).status().code() == Status::Code::kConstraint);
  REQUIRE(tokens.revoke("ops", 3).isOk());
  CHECK(tokens.create("ops", TokenRole::kReader, "npacd", 4).status().code() == Status::Code::kConstraint);
}

TEST_CASE("A token name must be 1 to 64 visible ASCII characters") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  CHECK(tokens.create(std::string(64, 'n'), TokenRole::kReader, "ops", 1).isOk());
  for (const std::string& bad : {std::string(), std::string(65, 'n'), std::string("two words"),
                                 std::string("tab\there"), std::string("caf\xC3\xA9"), std::string("nl\n"),
                                 std::string("npac_") + std::string(64, 'a')}) {
    INFO(bad);
    CHECK(tokens.create(bad, TokenRole::kReader, "ops", 1).status().code() == Status::Code::kInvalidArgument);
  }
}

TEST_CASE("Tokens are listed by name with their roles and dates and revoked ones included") {
  TempDir dir;
  auto db = openFresh(dir);
  TokenStore tokens(*db);
  REQUIRE(tokens.create("b-app", TokenRole::kApplication, "ops", 2).isOk());
  REQUIRE(tokens.create("a-read", TokenRole::kReader, "ops", 1).isOk());
  REQUIRE(tokens.revoke("a-read", 5).isOk());
  Result<std::vector<ApiToken>> listed = tokens.list();
  REQUIRE(listed.isOk());
  REQUIRE(listed->size() == 2);
  CHECK((*listed)[0] == ApiToken{"a-read", TokenRole::kReader, 1, "ops", 5});
  CHECK((*listed)[1] == ApiToken{"b-app", TokenRole::kApplication, 2, "ops", std::nullopt});
}

TEST_CASE("Roles are ordered reader below application below operator and round-trip by name") {
  CHECK(TokenRole::kReader < TokenRole::kApplication);
  CHECK(TokenRole::kApplication < TokenRole::kOperator);
  for (TokenRole role : {TokenRole::kReader, TokenRole::kApplication, TokenRole::kOperator}) {
    CHECK(parseTokenRole(toString(role)) == role);
  }
  CHECK_FALSE(parseTokenRole("admin").has_value());
  CHECK_FALSE(parseTokenRole("Operator").has_value());
}

TEST_CASE("The schema refuses a token row with an unknown role or a digest of the wrong size") {
  TempDir dir;
  auto db = openFresh(dir);
  auto insert = [&](const char* role, std::size_t digest_size) {
    Result<Statement> row = db->prepare(
        "INSERT INTO api_tokens(name, role, secret_sha256, created_at, created_by) VALUES('x', ?, ?, 1, 'ops')");
    REQUIRE(row.isOk());
    row->bindText(0, role).bindBlob(1, Bytes(digest_size, 0));
    return row->run().code();
  };
  CHECK(insert("admin", 32) == Status::Code::kConstraint);
  CHECK(insert("reader", 31) == Status::Code::kConstraint);
  CHECK(insert("reader", 32) == Status::Code::kOk);
}
