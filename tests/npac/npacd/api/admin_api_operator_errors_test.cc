// What the admin API tells a caller who got something wrong, in-process over a real SQLite
// file: a provider key's algorithm is read from the key (given, it must agree; "rsa" is
// read as rsa-sha256), an error message never repeats its code and names no route, an
// unknown tunable comes with the nearest name, and an authenticated caller asking for a
// path no route has is told 404 (an anonymous one 401: docs/API.md "Authentication").
#include <catch2/catch.hpp>

#include "associations/signature.h"
#include "tests/npac/npacd/api/admin_api_fixture.h"

namespace npac::npacd {
namespace {

using namespace testing;

std::string publicPem(associations::SignatureAlgorithm algorithm) {
  auto pair = associations::generateKeyPair(algorithm);
  REQUIRE(pair.isOk());
  return pair.value().public_pem;
}

Reply addKey(AdminApiFixture& f, int id, const std::string& pem, const std::optional<json>& algorithm) {
  json body{{"key_list_id", 1}, {"key_id", id}, {"public_key_pem", pem}};
  if (algorithm) body["algorithm"] = *algorithm;
  return f.call(V::post, "/v1/providers/0001/keys", body);
}

}  // namespace

TEST_CASE("A provider key without an algorithm takes the one its PEM holds") {
  AdminApiFixture f;
  f.addProvider("0001");
  Reply ed = addKey(f, 1, publicPem(associations::SignatureAlgorithm::kEd25519), std::nullopt);
  INFO(ed.raw);
  CHECK(ed.status == 201);
  CHECK(ed.body["algorithm"] == "ed25519");
  Reply rsa = addKey(f, 2, publicPem(associations::SignatureAlgorithm::kRsaSha256), json(nullptr));
  INFO(rsa.raw);
  CHECK(rsa.status == 201);
  CHECK(rsa.body["algorithm"] == "rsa-sha256");
}

TEST_CASE("A provider key's algorithm is rsa-sha256 or ed25519, rsa read as rsa-sha256, and must agree with the PEM") {
  AdminApiFixture f;
  f.addProvider("0001");
  const std::string rsa_pem = publicPem(associations::SignatureAlgorithm::kRsaSha256);
  Reply alias = addKey(f, 1, rsa_pem, json("rsa"));
  CHECK(alias.status == 201);
  CHECK(alias.body["algorithm"] == "rsa-sha256");
  Reply unknown = addKey(f, 2, rsa_pem, json("dsa"));
  CHECK(unknown.status == 400);
  CHECK_THAT(unknown.errorMessage(), Catch::Contains("algorithm must be ed25519 or rsa-sha256, or left out"));
  Reply not_text = addKey(f, 3, rsa_pem, json(7));
  CHECK(not_text.status == 400);
  Reply disagrees = addKey(f, 4, publicPem(associations::SignatureAlgorithm::kEd25519), json("rsa-sha256"));
  CHECK(disagrees.status == 400);
  CHECK_THAT(disagrees.errorMessage(), Catch::Contains("the key is ed25519, but algorithm says rsa-sha256"));
  Reply no_key = addKey(f, 5, "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n", std::nullopt);
  CHECK(no_key.status == 400);
  CHECK_THAT(no_key.errorMessage(), Catch::Contains("public_key_pem"));
  CHECK(f.call(V::get, "/v1/providers/0001/keys").body["keys"].size() == 1);
}

TEST_CASE("A key of a type npacd does not take is refused naming the type") {
  AdminApiFixture f;
  f.addProvider("0001");
  // An EC P-256 key: a valid SubjectPublicKeyInfo, neither Ed25519 nor RSA.
  const std::string ec =
      "-----BEGIN PUBLIC KEY-----\n"
      "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEQiiBjtIRLr7yFuyI3NQ6BxEFoYB\n"
      "8Kmh03spI7Ty3j1rqeAudEtPi8NdXiRlr2/6kcRWKTCicfTvDp3zOHgG4Q==\n"
      "-----END PUBLIC KEY-----\n";
  Reply refused = addKey(f, 1, ec, std::nullopt);
  INFO(refused.raw);
  CHECK(refused.status == 400);
  CHECK_THAT(refused.errorMessage(), Catch::Contains("the key is id-ecPublicKey: npacd takes ed25519 or rsa-sha256 keys"));
}

TEST_CASE("An unknown tunable's error suggests the nearest name and names no route") {
  AdminApiFixture f;
  for (V method : {V::get, V::put, V::delete_}) {
    Reply r = f.call(method, "/v1/tunables/bind_timout", method == V::put ? json{{"value", "30s"}}.dump() : "");
    INFO(r.raw);
    CHECK(r.status == 404);
    CHECK(r.errorCode() == "unknown_tunable");
    CHECK(r.errorMessage() == "no tunable named \"bind_timout\" (did you mean 'bind_timeout'?)");
  }
  CHECK(f.call(V::get, "/v1/tunables/zzzzzzzz").errorMessage() == "no tunable named \"zzzzzzzz\"");
}

TEST_CASE("An error message never begins by repeating its code") {
  AdminApiFixture f;
  for (const auto& [target, value] : std::vector<std::pair<std::string, json>>{
           {"/v1/tunables/response_timeout", "soon"},
           {"/v1/tunables/congestion_window", 0},
           {"/v1/tunables/srr", "on"},
           {"/v1/tunables/egress_policy", "fastest"}}) {
    Reply r = f.call(V::put, target, json{{"value", value}});
    INFO(r.raw);
    REQUIRE(r.status == 400);
    std::string words = r.errorCode();
    std::replace(words.begin(), words.end(), '_', ' ');
    CHECK(r.errorMessage().rfind(words, 0) == std::string::npos);
    CHECK_FALSE(r.errorMessage().empty());
  }
}

TEST_CASE("An authenticated caller asking for a path no route has gets 404 naming it, an anonymous one 401") {
  AdminApiFixture f;
  const std::string reader = "Bearer " + f.token("viewer", db::TokenRole::kReader);
  const std::string application = "Bearer " + f.token("app", db::TokenRole::kApplication);
  for (const char* path : {"/", "/v1", "/v1/", "/v2/providers", "/v1/nothing-here", "/v1/providers/0001/nothing",
                           "/v1/providers/0001/keys/1/2/3", "/v1/tunables/srr/extra", "/api/v1/providers",
                           "/favicon.ico"}) {
    INFO(path);
    for (const std::string& authorization : {reader, application}) {
      Reply r = f.callWith(authorization, V::get, path);
      INFO(r.raw);
      CHECK(r.status == 404);
      CHECK(r.errorCode() == "unknown_route");
    }
    CHECK(f.callWith(std::nullopt, V::get, path).status == 401);
  }
}

}  // namespace npac::npacd
