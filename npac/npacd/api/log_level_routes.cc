// GET /v1/log-level and PUT /v1/log-level {"level":"debug"}: npacd's log level at run time
// (docs/API.md "Log level"). The change lasts until npacd stops: the next start takes
// --log-level again (docs/OPERATIONS.md "Running it as a service"). Each change is written
// to the audit log (action "log-level.set") before it takes effect, so a change that
// cannot be audited is not made.
#include <spdlog/spdlog.h>

#include "db/audit_store.h"
#include "db/transaction.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"
#include "npac/npacd/logging.h"

namespace npac::npacd {

ApiResponse showLogLevel(ApiContext&, ApiRequest&) {
  return jsonResponse(ApiStatus::kOk, {{"level", logLevelName(currentLogLevel())}});
}

ApiResponse changeLogLevel(ApiContext& api, ApiRequest& r) {
  if (!r.body.contains("level") || !r.body["level"].is_string()) {
    return errorResponse(ApiStatus::kBadRequest, "invalid_log_level",
                         std::string("give {\"level\": one of ") + logLevelNames() + "}");
  }
  const std::string wanted = r.body["level"].get<std::string>();
  const auto level = parseLogLevel(wanted);
  if (!level) {
    return errorResponse(ApiStatus::kBadRequest, "invalid_log_level",
                         "level '" + wanted + "' is not one of " + logLevelNames());
  }
  const std::string actor = r.actor();
  if (actor.empty()) return actorRequired("changing the log level");
  const std::string old_level = logLevelName(currentLogLevel());
  db::Transaction tx(api.db);
  db::Status status = tx.begin();
  if (status.isOk()) {
    db::AuditStore audit(api.db);
    db::Result<std::int64_t> id =
        audit.append({0, api.clock(), actor, "log-level.set", "log level", old_level, logLevelName(*level)});
    status = id.isOk() ? tx.commit() : id.status();
  }
  if (!status.isOk()) return statusResponse(status);
  npacd::setLogLevel(*level);
  spdlog::info("log level {} → {} (by {})", old_level, logLevelName(*level), actor);
  return jsonResponse(ApiStatus::kOk, {{"level", logLevelName(*level)}, {"previous", old_level}});
}

}  // namespace npac::npacd
