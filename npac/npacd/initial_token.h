// The first operator token, so a new npacd needs no set-up step: at start, npacd makes sure
// an operator can reach its admin API. When `<db path>.token` exists and holds a usable
// token it is kept as it is. When it does not exist and the database has no usable
// operator token (a first start, or every operator token revoked), npacd creates one
// named "npacd-initial" (then "npacd-initial-2", … when that name was used) and writes its
// secret to the file, created with O_CREAT|O_EXCL and mode 0600 from the start (never
// chmod-ed after), so no other local user can read it. A file whose token is unknown or
// revoked is left alone with a warning: a revoked initial token must not come back on a
// restart; deleting the file and restarting asks for a new one.
//
// Threading: runs once at start-up on the thread that owns `db`, before the API starts.
#pragma once

#include <string>

#include "db/clock.h"
#include "db/database.h"
#include "db/status.h"

namespace npac::npacd {

inline constexpr const char* kInitialTokenName = "npacd-initial";

// Where npacd writes its first operator token and npacctl looks for it: --token-file when
// given (`token_file` not empty); else "<db path>.token" for an SQLite file, and
// "var/npacd.db.token" (relative to the working directory, where npacctl looks too) for a
// postgresql:// database, whose URL names no directory.
std::string tokenFilePath(const std::string& db_path, const std::string& token_file = {});

struct InitialToken {
  std::string file;     // the token file
  std::string name;     // the token it holds, "" when the file holds no usable token
  bool created = false; // true: made by this call
  std::string warning;  // set when the file exists but holds no usable token
};

// As described above. Errors: the file cannot be created or written (the message names it
// and the reason), or the database write failed.
// `token_path` is the file (tokenFilePath).
db::Result<InitialToken> ensureInitialToken(db::Database& db, const std::string& token_path, db::TimeMs now);

}  // namespace npac::npacd
