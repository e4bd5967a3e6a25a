// TokenStore: the admin API's bearer tokens (table api_tokens, schema 5). A token has a
// unique name (1–64 visible ASCII characters: the actor the audit log records for every
// change made with it), a role (reader ⊂ application ⊂ operator), who created it and when,
// and when it was revoked. The secret is shown once, by create(), and never stored: the
// table keeps only SHA-256 of its 32 random bytes (RAND_bytes), and verify() compares
// digests with CRYPTO_memcmp so the time taken says nothing about how much matched.
//
// A presented token is "npac_" followed by the 64 lowercase hex digits of the secret
// (kTokenPrefix, kTokenLength): nothing in it names its holder.
//
// create() and revoke() do not open a transaction of their own: the caller wraps them with
// their audit entry (as every audited change in the admin API does).
//
// Threading: as the Database it wraps (one thread at a time). Cheap to construct.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/clock.h"
#include "db/status.h"

namespace npac::db {

class Database;

// Ordered: a role may do everything the roles below it may (operator ⊇ application ⊇
// reader); compare with <.
enum class TokenRole { kReader = 0, kApplication = 1, kOperator = 2 };

const char* toString(TokenRole role);  // "reader", "application", "operator"
std::optional<TokenRole> parseTokenRole(std::string_view text);

inline constexpr std::string_view kTokenPrefix = "npac_";
inline constexpr std::size_t kTokenSecretBytes = 32;
inline constexpr std::size_t kTokenLength = kTokenPrefix.size() + 2 * kTokenSecretBytes;
inline constexpr std::size_t kMaxTokenNameLength = 64;

// 1–64 characters, each visible ASCII (0x21–0x7E): printable in a log line and a table
// without quoting, and never mistaken for a secret (no "npac_" + 64 hex digits).
bool isValidTokenName(std::string_view name);

struct ApiToken {
  std::string name;
  TokenRole role = TokenRole::kReader;
  TimeMs created_at = 0;
  std::string created_by;
  std::optional<TimeMs> revoked_at;  // nullopt while the token is usable

  friend bool operator==(const ApiToken&, const ApiToken&) = default;
};

struct IssuedToken {
  ApiToken token;
  std::string secret;  // "npac_<64 hex>": give it to the holder now, it is not kept
};

class TokenStore {
 public:
  explicit TokenStore(Database& db) : db_(db) {}

  // A new token with a fresh secret. kInvalidArgument for a bad name or an empty
  // created_by; kConstraint when the name exists (revoked names are not reused);
  // kInternal if OpenSSL cannot produce random bytes.
  Result<IssuedToken> create(const std::string& name, TokenRole role, const std::string& created_by,
                             TimeMs now);
  // Every token, revoked ones too, by name.
  Result<std::vector<ApiToken>> list();
  Result<ApiToken> get(const std::string& name);
  // Marks the token revoked at `now` and returns it as it now is. kNotFound for an unknown
  // name; kConstraint when it was revoked already (the first revocation time stays).
  Result<ApiToken> revoke(const std::string& name, TimeMs now);
  // The token `presented` stands for, revoked or not (the caller decides what a revoked
  // token may do). kInvalidArgument when `presented` is not "npac_" + 64 lowercase hex
  // digits; kNotFound when no token has that secret.
  Result<ApiToken> verify(std::string_view presented);

 private:
  Database& db_;
};

}  // namespace npac::db
