#include "npac/npacd/api/api_context.h"

#include <algorithm>

#include "db/provider_store.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

bool requireProvider(ApiContext& api, const std::string& spid, ApiResponse* error) {
  if (!db::isValidSpid(spid)) {
    *error = errorResponse(ApiStatus::kBadRequest, "invalid_spid",
                           "'" + spid + "' is not a SPID: 4 ASCII letters or digits");
    return false;
  }
  db::ProviderStore providers(api.db);
  db::Result<db::ServiceProvider> provider = providers.get(spid);
  if (provider.isOk()) return true;
  if (provider.status().isNotFound()) {
    *error = errorResponse(ApiStatus::kNotFound, "provider_not_found", "no provider " + spid + " is provisioned");
  } else {
    *error = statusResponse(provider.status());
  }
  return false;
}

bool requireProviders(ApiContext& api, const std::vector<OutboundMessage>& messages, ApiResponse* error) {
  std::vector<std::string> checked;
  for (const OutboundMessage& message : messages) {
    const std::string& spid = message.message.spid;
    if (std::find(checked.begin(), checked.end(), spid) != checked.end()) continue;
    if (!requireProvider(api, spid, error)) return false;
    checked.push_back(spid);
  }
  return true;
}

}  // namespace npac::npacd
