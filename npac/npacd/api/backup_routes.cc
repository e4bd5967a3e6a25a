// POST /v1/backup: a consistent copy of npacd's SQLite database, made while npacd runs
// and streamed to the caller (docs/API.md "Backup"; `npacctl backup FILE` writes and
// checks it; docs/OPERATIONS.md "Backup, restore and upgrade" is the drill).
//
// The copy holds everything npacd keeps — the NPAC's private signing keys and the token
// digests too — so the route is the operator's, each backup is written to the audit log
// ("database.backup") before it starts (a backup that cannot be audited is not made), and
// logged at its start and end. One at a time: another request meanwhile is 429
// backup_in_progress with Retry-After. On PostgreSQL the database is the server's to back
// up (pg_dump, pg_basebackup): 501 backup_not_supported says so.
//
// The answer: 200, Content-Type application/vnd.sqlite3, the file as a chunked body, and
// X-Npac-Backup-Bytes, X-Npac-Backup-Sha256, X-Npac-Backup-Schema-Version so the client
// can tell a whole copy from a cut one. A copy that fails before the first byte is an
// ordinary error answer (507 no room beside the database, 503 while npacd stops, 500).
#include <optional>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "db/audit_store.h"
#include "npac/npacd/api/database_backup.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"

namespace npac::npacd {

namespace {

// Seconds a client refused for a backup in progress is told to wait.
constexpr const char* kBackupRetryAfterSeconds = "10";

// Why no backup is started for `r` now, if none is: PostgreSQL, a request that asks for
// something a backup does not do, another backup under way.
std::optional<ApiResponse> refusal(ApiContext& api, ApiRequest& r) {
  if (api.db.backend() == db::Backend::kPostgres) {
    return errorResponse(
        ApiStatus::kNotImplemented, "backup_not_supported",
        "npacd's database is PostgreSQL (" + api.db.path() +
            "): back it up with PostgreSQL's tools — pg_dump for a dump to restore with pg_restore, "
            "pg_basebackup for a base backup (docs/OPERATIONS.md \"Backup, restore and upgrade\")");
  }
  if (!r.query.empty()) {
    return errorResponse(ApiStatus::kBadRequest, "invalid_backup_request",
                         "POST /v1/backup takes no query parameters ('" + printableAscii(r.query.begin()->first) +
                             "' given): it always copies the whole database");
  }
  for (const auto& [key, value] : r.body.items()) {
    if (key == "actor") continue;  // ignored everywhere (the token names the actor)
    return errorResponse(ApiStatus::kBadRequest, "invalid_backup_request",
                         "POST /v1/backup takes no fields ('" + printableAscii(key) +
                             "' given): it always copies the whole database, and the caller "
                             "chooses where to keep it");
  }
  if (api.backup) {
    ApiResponse busy = errorResponse(ApiStatus::kTooManyRequests, "backup_in_progress",
                                     "a backup is being made or sent already (" +
                                         std::to_string(api.backup->sentBytes()) +
                                         " bytes sent so far): one at a time; retry when it is done");
    busy.set("Retry-After", kBackupRetryAfterSeconds);
    return busy;
  }
  return std::nullopt;
}

// The answer's head: what the client checks the body against.
ApiResponse backupHead(const DatabaseBackup::Copy& copy) {
  ApiResponse head;
  head.content_type = "application/vnd.sqlite3";
  head.set("Cache-Control", "no-store");
  head.set("Content-Disposition", "attachment; filename=\"npacd-backup.db\"");
  head.set("X-Npac-Backup-Bytes", std::to_string(copy.bytes));
  head.set("X-Npac-Backup-Sha256", copy.sha256);
  head.set("X-Npac-Backup-Schema-Version", std::to_string(copy.schema_version));
  return head;
}

// The copy is made (or failed): the error answer, or the head and then the file streamed.
void sendCopy(ApiContext& api, const ApiResponder& respond, const std::string& actor,
              const db::Result<DatabaseBackup::Copy>& copy) {
  if (!copy) {
    spdlog::warn("backup of {} for '{}' failed: {}", api.db.path(), actor, copy.status().toString());
    api.backup.reset();
    const bool full = copy.status().code() == db::Status::Code::kFull;
    return respond(full ? errorResponse(ApiStatus::kInsufficientStorage, "backup_no_space",
                                        "no room for the copy beside the database: " + copy.status().toString())
                        : statusResponse(copy.status(), "cannot copy the database"));
  }
  std::shared_ptr<ResponseStream> stream = respond.stream(backupHead(*copy));
  if (stream == nullptr) {
    api.backup.reset();
    return respond(errorResponse(ApiStatus::kInternalServerError, "internal",
                                 "this connection cannot stream a backup"));
  }
  const std::uint64_t bytes = copy->bytes;
  spdlog::info("backup for '{}': {} bytes copied (schema {}), sending", actor, bytes, copy->schema_version);
  api.backup->send(stream, [&api, actor, bytes](bool complete, const std::string& why) {
    const std::uint64_t sent = api.backup ? api.backup->sentBytes() : 0;
    if (complete) {
      spdlog::info("backup for '{}' sent: {} bytes", actor, bytes);
    } else {
      spdlog::warn("backup for '{}' not sent whole ({} of {} bytes): {}", actor, sent, bytes, why);
    }
    api.backup.reset();
  });
}

}  // namespace

void backupDatabase(ApiContext& api, ApiRequest& r, ApiResponder& respond) {
  if (std::optional<ApiResponse> refused = refusal(api, r)) return respond(std::move(*refused));
  const std::string actor = r.actor();
  if (actor.empty()) return respond(actorRequired("a backup"));
  // Who took a copy of the keys and tokens is recorded before the copy is made, so the
  // copy holds its own entry.
  db::AuditStore audit(api.db);
  db::Result<std::int64_t> audited =
      audit.append({0, api.clock(), actor, "database.backup", "database", std::nullopt, dumpJson({{"file", api.db.path()}})});
  if (!audited) return respond(statusResponse(audited.status(), "cannot audit the backup"));
  spdlog::info("backup of {} for '{}': copying", api.db.path(), actor);
  // The callbacks hold the context: cancelBackup() (the API stopping) silences them first.
  api.backup = DatabaseBackup::start(api.post, api.db.path(),
                                     [&api, respond, actor](const db::Result<DatabaseBackup::Copy>& copy) {
                                       sendCopy(api, respond, actor, copy);
                                     });
}

void cancelBackup(ApiContext& api) {
  // A backup still copying is interrupted; one streaming is cut by the server's stop (its
  // client sees the body end short of X-Npac-Backup-Bytes).
  if (api.backup) std::exchange(api.backup, nullptr)->cancel();
}

}  // namespace npac::npacd
