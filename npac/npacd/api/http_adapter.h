// The admin API's boundary between Boost.Beast and the project's own request and response
// types: the one place an HTTP message becomes an ApiRequest (request.h) and an
// ApiResponse (api_response.h) becomes an HTTP message, so that the route files never see
// Beast. The AdminApi (admin_api.cc) uses it for every request; the admin API fuzz target
// drives parseApiRequest directly.
//
// Threading: pure functions; an adapted responder is used where the Responder it wraps is
// (the API thread).
#pragma once

#include <boost/beast/http/verb.hpp>

#include "npac/npacd/api/api_response.h"
#include "npac/npacd/api/http_message.h"
#include "npac/npacd/api/json.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {

ApiMethod toApiMethod(boost::beast::http::verb verb);  // kOther for any verb the routes do not use
boost::beast::http::verb toVerb(ApiMethod method);     // kOther: verb::unknown

// Parses `request` into `out`: method, target (path, query), X-Npac-Actor and the JSON
// body, each string checked to be UTF-8. An ok Status when the request is usable;
// otherwise the reason for a 400 (kBadTarget, kBadUtf8 naming the part, kBadJson). Pure:
// no I/O, no state, so the admin API fuzz target drives it directly.
Status parseApiRequest(const HttpRequest& request, ApiRequest* out);

// `response` as the message the HttpServer writes: its status, Content-Type, its fields in
// order and its body, with Content-Length.
HttpResponse toHttpResponse(ApiResponse response);
// An ApiResponder answering through `respond`: each answer converted by toHttpResponse;
// a stream's head converted the same way, without a body or Content-Length.
ApiResponder toApiResponder(Responder respond);

}  // namespace npac::npacd
