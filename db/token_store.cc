#include "db/token_store.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>

#include "common/hex.h"
#include "db/database.h"

namespace npac::db {
namespace {

using Digest = std::array<std::uint8_t, 32>;

constexpr const char* kSelectTokens =
    "SELECT name, role, created_at, created_by, revoked_at FROM api_tokens ";

std::optional<Digest> sha256(std::span<const std::uint8_t> bytes) {
  Digest out{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != out.size()) {
    return std::nullopt;
  }
  return out;
}

ApiToken readToken(const Statement& row) {
  ApiToken token;
  token.name = row.columnText(0);
  // The CHECK constraint admits only the three names; reader is the least a damaged row
  // could be granted.
  token.role = parseTokenRole(row.columnText(1)).value_or(TokenRole::kReader);
  token.created_at = row.columnInt64(2);
  token.created_by = row.columnText(3);
  token.revoked_at = row.columnOptionalInt64(4);
  return token;
}

// The secret's 32 bytes from "npac_" + 64 lowercase hex digits, or nullopt.
std::optional<Bytes> secretOf(std::string_view presented) {
  if (presented.size() != kTokenLength || presented.substr(0, kTokenPrefix.size()) != kTokenPrefix) {
    return std::nullopt;
  }
  std::string_view hex = presented.substr(kTokenPrefix.size());
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  return common::fromHex(hex);
}

}  // namespace

const char* toString(TokenRole role) {
  switch (role) {
    case TokenRole::kReader: return "reader";
    case TokenRole::kApplication: return "application";
    case TokenRole::kOperator: return "operator";
  }
  return "reader";
}

std::optional<TokenRole> parseTokenRole(std::string_view text) {
  if (text == "reader") return TokenRole::kReader;
  if (text == "application") return TokenRole::kApplication;
  if (text == "operator") return TokenRole::kOperator;
  return std::nullopt;
}

bool isValidTokenName(std::string_view name) {
  if (name.empty() || name.size() > kMaxTokenNameLength) return false;
  for (char c : name) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return !secretOf(name).has_value();
}

Result<IssuedToken> TokenStore::create(const std::string& name, TokenRole role, const std::string& created_by,
                                       TimeMs now) {
  if (!isValidTokenName(name)) {
    return Status::invalidArgument("a token name is 1 to " + std::to_string(kMaxTokenNameLength) +
                                   " visible ASCII characters (no spaces)");
  }
  if (created_by.empty()) return Status::invalidArgument("a token needs the name of who creates it");
  Bytes secret(kTokenSecretBytes);
  if (RAND_bytes(secret.data(), static_cast<int>(secret.size())) != 1) {
    return Status::internal("OpenSSL RAND_bytes could not produce a token secret");
  }
  std::optional<Digest> digest = sha256(secret);
  if (!digest) return Status::internal("OpenSSL could not compute SHA-256");
  Result<Statement> insert = db_.prepare(
      "INSERT INTO api_tokens(name, role, secret_sha256, created_at, created_by) VALUES(?, ?, ?, ?, ?)");
  if (!insert) return insert.status();
  insert->bindText(0, name).bindText(1, toString(role)).bindBlob(2, *digest).bindInt64(3, now).bindText(4, created_by);
  if (Status status = insert->run(); !status) {
    if (status.code() == Status::Code::kConstraint) {
      return Status::make(Status::Code::kConstraint, "a token named '" + name + "' exists (or existed)");
    }
    return status;
  }
  IssuedToken issued;
  issued.token = ApiToken{name, role, now, created_by, std::nullopt};
  issued.secret = std::string(kTokenPrefix) + common::toHex(secret);
  return issued;
}

Result<std::vector<ApiToken>> TokenStore::list() {
  Result<Statement> query = db_.prepare(std::string(kSelectTokens) + "ORDER BY name");
  if (!query) return query.status();
  std::vector<ApiToken> out;
  for (;;) {
    Result<bool> row = query->step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(readToken(*query));
  }
}

Result<ApiToken> TokenStore::get(const std::string& name) {
  Result<Statement> query = db_.prepare(std::string(kSelectTokens) + "WHERE name = ?");
  if (!query) return query.status();
  query->bindText(0, name);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return Status::notFound("no token named '" + name + "'");
  return readToken(*query);
}

Result<ApiToken> TokenStore::revoke(const std::string& name, TimeMs now) {
  Result<ApiToken> token = get(name);
  if (!token) return token.status();
  if (token->revoked_at) {
    return Status::make(Status::Code::kConstraint, "token '" + name + "' is revoked already");
  }
  Result<Statement> update = db_.prepare("UPDATE api_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL");
  if (!update) return update.status();
  update->bindInt64(0, now).bindText(1, name);
  if (Status status = update->run(); !status) return status;
  token->revoked_at = now;
  return token;
}

Result<ApiToken> TokenStore::verify(std::string_view presented) {
  std::optional<Bytes> secret = secretOf(presented);
  if (!secret) {
    return Status::invalidArgument("not an npacd token: \"" + std::string(kTokenPrefix) + "\" and " +
                                   std::to_string(2 * kTokenSecretBytes) + " lowercase hex digits expected");
  }
  std::optional<Digest> digest = sha256(*secret);
  if (!digest) return Status::internal("OpenSSL could not compute SHA-256");
  Result<Statement> query = db_.prepare(
      "SELECT name, role, created_at, created_by, revoked_at, secret_sha256 FROM api_tokens "
      "WHERE secret_sha256 = ?");
  if (!query) return query.status();
  query->bindBlob(0, *digest);
  Result<bool> row = query->step();
  if (!row) return row.status();
  if (!*row) return Status::notFound("no token has this secret");
  // The lookup went by digest; the comparison that admits the caller is constant-time.
  const Bytes stored = query->columnBlob(5);
  if (stored.size() != digest->size() || CRYPTO_memcmp(stored.data(), digest->data(), digest->size()) != 0) {
    return Status::notFound("no token has this secret");
  }
  return readToken(*query);
}

}  // namespace npac::db
