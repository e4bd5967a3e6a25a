// DatabaseBackup: one POST /v1/backup in progress (docs/API.md "Backup"). A worker thread
// copies npacd's SQLite file into <db>.backup.tmp beside it (db/sqlite_backup.h: VACUUM
// INTO on a read-only connection of its own, so the core and the API keep committing),
// reads the copy's schema version and SHA-256; then the API thread streams the copy to
// the client in pieces, each sent once the connection has taken the one before
// (ResponseStream::whenQueueEmpty), and the copy is removed.
//
// Its cost is bounded by the route (backup_routes.cc: one backup at a time, 429
// otherwise) and here: the worker runs at a lower CPU priority (nice 10) than npacd's
// other threads, and the stream holds at most two pieces of kPieceBytes in memory
// whatever the file's size.
//
// Lifecycle: start() → the worker copies → ready(copy or error), posted to the API thread
// → the route answers, and send()s a copy to a stream → ended(complete, why) once. The
// copy file lives as long as this object: the destructor (and cancel()) interrupts a copy
// still running, joins the worker and removes the file.
//
// Threading: start(), send(), cancel() and the callbacks run on the API thread (the
// worker posts its answer there: api_thread.h); only the copy and its digest run on the
// worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "db/sqlite_backup.h"
#include "db/status.h"
#include "npac/npacd/api/api_response.h"
#include "npac/npacd/api/api_thread.h"

namespace npac::npacd {

class DatabaseBackup : public std::enable_shared_from_this<DatabaseBackup> {
 public:
  // What the worker made.
  struct Copy {
    std::string path;         // <db>.backup.tmp
    std::uint64_t bytes = 0;
    std::string sha256;       // lower-case hex of the file
    int schema_version = 0;   // the copy's meta.version
  };
  using Ready = std::function<void(const db::Result<Copy>& copy)>;
  using Ended = std::function<void(bool complete, const std::string& why)>;

  static constexpr std::size_t kPieceBytes = 128 * 1024;

  // Starts copying the SQLite database `database`; `ready` is posted to the API thread with
  // the copy or why there is none — unless cancel() came first.
  static std::shared_ptr<DatabaseBackup> start(PostToApiThread post, std::string database, Ready ready);
  ~DatabaseBackup();
  DatabaseBackup(const DatabaseBackup&) = delete;
  DatabaseBackup& operator=(const DatabaseBackup&) = delete;

  // Streams the copy into `stream`, then finishes it; `ended` runs once when the stream
  // closes: complete when every byte was queued and the stream finished normally, with the
  // stream's reason either way.
  void send(std::shared_ptr<ResponseStream> stream, Ended ended);
  // Stops everything now: the copy (interrupted), the stream (closed, `ended` not called),
  // and removes the file. Safe to call twice.
  void cancel();

  std::uint64_t sentBytes() const { return sent_; }

 private:
  DatabaseBackup(PostToApiThread post, std::string database);
  void run(Ready ready);  // the worker
  void sendNextPiece();
  void end(bool complete, const std::string& why);

  PostToApiThread post_;
  const std::string database_;
  const std::string copy_path_;
  db::SqliteCopier copier_;
  std::thread worker_;
  bool cancelled_ = false;  // API thread
  std::atomic<bool> stopping_{false};  // cancel() → the worker's digest loop
  std::shared_ptr<ResponseStream> stream_;
  Ended ended_;
  std::FILE* file_ = nullptr;
  std::uint64_t sent_ = 0;
  bool finished_ = false;
};

}  // namespace npac::npacd
