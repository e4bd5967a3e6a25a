// The admin API's HTTP messages as Beast carries them (HttpRequest, HttpResponse), the
// Responder through which a handler answers its session — once, or by turning it into a
// stream — and the JSON error body every error answer has. Below both the server
// (http_server.h) and its sessions (http_session.h); the project's own request and
// response types, which the routes see, are in api_response.h and http_adapter.h converts.
//
// Threading: a Responder must be called on the server's io_context thread (http_server.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/beast/http.hpp>

#include "npac/npacd/api/api_response.h"

namespace npac::npacd {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;
// ResponseStream, the body of a streamed response, is the project's (api_response.h):
// a session is one.

// Delivers the answer to its session (api_response.h's BasicResponder): call it exactly
// once, on the io_context's thread, with a response — or call stream() once instead.
using Responder = BasicResponder<HttpResponse>;
using HttpHandler = std::function<void(HttpRequest&& request, Responder respond)>;

// A JSON error body {"error":{"code":..,"message":..}} with `status`.
HttpResponse jsonErrorResponse(boost::beast::http::status status, const std::string& code,
                               const std::string& message, unsigned version = 11);

}  // namespace npac::npacd
