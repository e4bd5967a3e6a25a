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
#include <functional>
#include <utility>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "db/audit_store.h"
#include "npac/npacd/api/admin_api.h"
#include "npac/npacd/api/database_backup.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {

namespace {

// Seconds a client refused for a backup in progress is told to wait.
constexpr const char* kBackupRetryAfterSeconds = "10";

}  // namespace

void AdminApi::backupDatabase(ApiRequest& r, Responder& respond) {
  if (db_.backend() == db::Backend::kPostgres) {
    return respond(errorResponse(
        http::status::not_implemented, "backup_not_supported",
        "npacd's database is PostgreSQL (" + db_.path() +
            "): back it up with PostgreSQL's tools — pg_dump for a dump to restore with pg_restore, "
            "pg_basebackup for a base backup (docs/OPERATIONS.md \"Backup, restore and upgrade\")"));
  }
  if (!r.query.empty()) {
    return respond(errorResponse(http::status::bad_request, "invalid_backup_request",
                                 "POST /v1/backup takes no query parameters ('" + printableAscii(r.query.begin()->first) +
                                     "' given): it always copies the whole database"));
  }
  for (const auto& [key, value] : r.body.items()) {
    if (key == "actor") continue;  // ignored everywhere (the token names the actor)
    return respond(errorResponse(http::status::bad_request, "invalid_backup_request",
                                 "POST /v1/backup takes no fields ('" + printableAscii(key) +
                                     "' given): it always copies the whole database, and the caller "
                                     "chooses where to keep it"));
  }
  if (backup_) {
    HttpResponse busy = errorResponse(http::status::too_many_requests, "backup_in_progress",
                                      "a backup is being made or sent already (" +
                                          std::to_string(backup_->sentBytes()) +
                                          " bytes sent so far): one at a time; retry when it is done");
    busy.set(http::field::retry_after, kBackupRetryAfterSeconds);
    return respond(std::move(busy));
  }
  const std::string actor = r.actor();
  if (actor.empty()) return respond(actorRequired("a backup"));
  // Who took a copy of the keys and tokens is recorded before the copy is made, so the
  // copy holds its own entry.
  db::AuditStore audit(db_);
  db::Result<std::int64_t> audited =
      audit.append({0, clock_(), actor, "database.backup", "database", std::nullopt, dumpJson({{"file", db_.path()}})});
  if (!audited) return respond(dbErrorResponse(audited.status(), "cannot audit the backup"));
  spdlog::info("backup of {} for '{}': copying", db_.path(), actor);
  PostToApiThread post = [io = &io_](std::function<void()> work) { boost::asio::post(*io, std::move(work)); };
  backup_ = DatabaseBackup::start(post, db_.path(), [this, respond, actor](const db::Result<DatabaseBackup::Copy>& copy) {
    if (!copy) {
      spdlog::warn("backup of {} for '{}' failed: {}", db_.path(), actor, copy.status().toString());
      backup_.reset();
      const bool full = copy.status().code() == db::Status::Code::kFull;
      return respond(full ? errorResponse(http::status::insufficient_storage, "backup_no_space",
                                          "no room for the copy beside the database: " + copy.status().toString())
                          : dbErrorResponse(copy.status(), "cannot copy the database"));
    }
    HttpResponse head{http::status::ok, 11};
    head.set(http::field::content_type, "application/vnd.sqlite3");
    head.set(http::field::cache_control, "no-store");
    head.set(http::field::content_disposition, "attachment; filename=\"npacd-backup.db\"");
    head.set("X-Npac-Backup-Bytes", std::to_string(copy->bytes));
    head.set("X-Npac-Backup-Sha256", copy->sha256);
    head.set("X-Npac-Backup-Schema-Version", std::to_string(copy->schema_version));
    std::shared_ptr<ResponseStream> stream = respond.stream(std::move(head));
    if (stream == nullptr) {
      backup_.reset();
      return respond(errorResponse(http::status::internal_server_error, "internal",
                                   "this connection cannot stream a backup"));
    }
    const std::uint64_t bytes = copy->bytes;
    spdlog::info("backup for '{}': {} bytes copied (schema {}), sending", actor, bytes, copy->schema_version);
    backup_->send(stream, [this, actor, bytes](bool complete, const std::string& why) {
      const std::uint64_t sent = backup_ ? backup_->sentBytes() : 0;
      if (complete) {
        spdlog::info("backup for '{}' sent: {} bytes", actor, bytes);
      } else {
        spdlog::warn("backup for '{}' not sent whole ({} of {} bytes): {}", actor, sent, bytes, why);
      }
      backup_.reset();
    });
  });
}

}  // namespace npac::npacd
