#include "npac/npacd/api/connection_priority.h"

#include <optional>
#include <string_view>

#include "db/token_store.h"
#include "npac/npacd/api/access.h"

namespace npac::npacd {

RequestPriority classifyByToken(db::Database& db, const HttpRequest& request) {
  auto header = request.find(boost::beast::http::field::authorization);
  if (header == request.end() || header->value().size() > kMaxAuthorizationBytes) return RequestPriority::kNormal;
  BearerCredentials credentials =
      parseBearerAuthorization(std::string_view(header->value().data(), header->value().size()));
  if (!credentials.ok()) return RequestPriority::kNormal;
  db::TokenStore store(db);
  auto token = store.verify(credentials.token);
  if (!token.isOk() || token.value().revoked_at || token.value().role != db::TokenRole::kOperator) {
    return RequestPriority::kNormal;
  }
  return RequestPriority::kOperator;
}

}  // namespace npac::npacd
