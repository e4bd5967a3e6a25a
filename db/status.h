// Status and Result<T> in db/: the project's one error family (common/status.h).
//
// Every database path returns errors as values. A storage Status carries a code from the
// storage group of NPAC_STATUS_CODES (kNotFound … kInternal), the SQLite primary and
// extended result codes when SQLite produced the error (and the errno of the system call
// behind it, sqlite3_system_errno()) or the SQLSTATE when PostgreSQL did, the database
// file (or redacted PostgreSQL URL) it concerns, the engine's own message, and an
// operator hint ("free disk space", "restore from backup"…). toString() renders all of
// it on one line for logs and for npacd's refusal to start.
//
// Threading: plain values; copyable, movable, no threading concerns.
#pragma once

#include "common/status.h"

namespace npac::db {

using npac::Result;
using npac::Status;

// "database full", "not found"…: the category a Status's toString() opens with.
inline const char* toString(Status::Code code) { return npac::describe(code); }

}  // namespace npac::db
