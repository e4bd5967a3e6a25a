#include "db/transaction.h"

#include <libpq-fe.h>
#include <sqlite3.h>

#include "db/database.h"
#include "db/postgres_connection.h"
#include "db/storage_health.h"

namespace npac::db {

Transaction::Transaction(Database& db) : db_(db) {}

Transaction::~Transaction() {
  if (active_) rollback();
}

Status Transaction::begin() {
  if (active_) return Status::internal("Transaction::begin() called twice");
  depth_ = db_.transaction_depth_;
  const std::string savepoint = "SAVEPOINT npac_" + std::to_string(depth_);
  if (PostgresConnection* pg = db_.postgres(); pg != nullptr) {
    // PostgreSQL takes row locks as rows are written (READ COMMITTED): BEGIN and a
    // SAVEPOINT go with the first statement, in its round trip. A savepoint inside a
    // failed transaction is refused: that is said now, as SQLite's path does.
    if (depth_ == 0) {
      pg->sendWithNext("BEGIN");
      pg->setTransactionOpen(true);
    } else if (pg->transactionFailed()) {
      if (Status status = db_.execute(savepoint); !status) return status;
    } else {
      pg->sendWithNext(savepoint);
    }
  } else if (Status status = db_.execute(depth_ == 0 ? "BEGIN IMMEDIATE" : savepoint); !status) {
    // BEGIN IMMEDIATE is SQLite's way of taking its one write lock up front.
    return status;
  }
  active_ = true;
  ++db_.transaction_depth_;
  return Status::ok();
}

Status Transaction::commit() {
  if (!active_) return Status::internal("Transaction::commit() without an active transaction");
  if (db_.transaction_depth_ != depth_ + 1) {
    return Status::internal("Transaction::commit() while a nested transaction is still open");
  }
  PostgresConnection* pg = db_.postgres();
  if (pg != nullptr && depth_ == 0 && pg->beginUnsent()) {
    // Nothing reached the server: there is nothing to commit and nothing was lost.
    (void)pg->commit();
    return finished();
  }
  // On PostgreSQL a lost connection has rolled it back: that is the server being
  // unreachable (kUnavailable, 503 database_unavailable), not an internal error.
  if (PostgresConnection* pg = db_.postgres(); pg != nullptr && PQstatus(pg->handle()) != CONNECTION_OK) {
    rollback();
    return Status::make(Status::Code::kUnavailable,
                        "the connection to PostgreSQL was lost inside the transaction; it was rolled back",
                        db_.path(), "PostgreSQL is restarting or unreachable: retry once pg_isready -d <url> answers");
  }
  // SQLite may already have rolled the whole transaction back on its own (SQLITE_FULL,
  // SQLITE_IOERR, SQLITE_BUSY during a write): committing now would silently do nothing.
  if (!db_.inTransaction()) {
    rollback();
    return Status::internal("transaction was rolled back by SQLite after an earlier error")
        .withFile(db_.path());
  }
  // PostgreSQL keeps a failed transaction open, refusing every statement, and answers
  // COMMIT with a silent ROLLBACK: say it instead.
  if (depth_ == 0 && db_.postgres() != nullptr && db_.postgres()->transactionFailed()) {
    rollback();
    return Status::internal("transaction was aborted by PostgreSQL after an earlier error")
        .withFile(db_.path());
  }
  const std::string release = "RELEASE npac_" + std::to_string(depth_);
  Status status;
  if (pg != nullptr && depth_ > 0 && !pg->transactionFailed()) {
    pg->sendWithNext(release);  // with the next statement, at the latest the COMMIT
  } else if (pg != nullptr && depth_ == 0) {
    status = pg->commit();
  } else {
    status = db_.execute(depth_ == 0 ? "COMMIT" : release);
  }
  if (!status) {
    rollback();
    return status;
  }
  return finished();
}

Status Transaction::finished() {
  active_ = false;
  --db_.transaction_depth_;
  if (depth_ == 0 && db_.postgres() != nullptr) db_.postgres()->setTransactionOpen(false);
  if (depth_ == 0) db_.health().reportWritten(db_.path());
  return Status::ok();
}

void Transaction::rollback() {
  if (!active_) return;
  active_ = false;
  --db_.transaction_depth_;
  PostgresConnection* pg = db_.postgres();
  if (depth_ == 0 && pg != nullptr) {
    pg->setTransactionOpen(false);
    (void)pg->rollback();  // a lost connection has rolled it back already
    return;
  }
  if (!db_.inTransaction()) return;  // SQLite rolled back already
  const std::string name = "npac_" + std::to_string(depth_);
  // A rollback that fails has nothing left to undo: SQLite ends the transaction itself
  // when it cannot roll back (inTransaction() above is then false at the next use).
  if (depth_ == 0) {
    (void)db_.execute("ROLLBACK");
  } else if (pg != nullptr) {
    pg->rollbackTo(name);
  } else {
    (void)db_.execute("ROLLBACK TO " + name);
    (void)db_.execute("RELEASE " + name);
  }
}

}  // namespace npac::db
