// classifyByToken: the admin API's answer to HttpServer's classify callback — a request
// whose bearer token is a valid, unrevoked operator token is kOperator (it may use the
// connections HttpServer keeps in reserve), every other request kNormal. The refusal of
// a bad token is AccessControl's business, not this one's: this only sorts.
//
// Threading: the API thread (it reads the API's Database through the TokenStore).
#pragma once

#include "db/database.h"
#include "npac/npacd/api/http_server.h"

namespace npac::npacd {

RequestPriority classifyByToken(db::Database& db, const HttpRequest& request);

}  // namespace npac::npacd
