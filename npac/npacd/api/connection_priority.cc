#include "npac/npacd/api/connection_priority.h"

#include <optional>
#include <string_view>

#include "db/token_store.h"
#include "npac/npacd/api/access.h"

namespace npac::npacd {

RequestPriority classifyByToken(db::Database& db, const HttpRequest& request) {
  // Two Authorization headers never get this far (http_framing.h); the one there is used.
  auto header = request.find(boost::beast::http::field::authorization);
  if (header == request.end() || header->value().size() > kMaxAuthorizationBytes) return RequestPriority::kAnonymous;
  BearerCredentials credentials =
      parseBearerAuthorization(std::string_view(header->value().data(), header->value().size()));
  if (!credentials.ok()) return RequestPriority::kAnonymous;
  db::TokenStore store(db);
  auto token = store.verify(credentials.token);
  if (!token.isOk() || token.value().revoked_at) return RequestPriority::kAnonymous;
  switch (token.value().role) {
    case db::TokenRole::kReader: return RequestPriority::kReader;
    case db::TokenRole::kApplication: return RequestPriority::kApplication;
    case db::TokenRole::kOperator: return RequestPriority::kOperator;
  }
  return RequestPriority::kAnonymous;
}

}  // namespace npac::npacd
