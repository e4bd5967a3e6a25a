// classifyByToken: the admin API's answer to HttpServer's classify callback — a request
// whose bearer token is valid and unrevoked is its token's role (kReader, kApplication,
// kOperator: where its connection counts, and whether it may use the connections kept
// for operators); every other request — no token, a malformed, unknown or revoked one —
// is kAnonymous, and its connection stays in the anonymous pool (connection_limits.h).
// The refusal of a bad token is AccessControl's business, not this one's: this only sorts.
//
// Threading: the API thread (it reads the API's Database through the TokenStore).
#pragma once

#include "db/database.h"
#include "npac/npacd/api/connection_limits.h"
#include "npac/npacd/api/http_message.h"

namespace npac::npacd {

RequestPriority classifyByToken(db::Database& db, const HttpRequest& request);

}  // namespace npac::npacd
