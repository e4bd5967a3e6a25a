#include "npac/npacd/api/http_adapter.h"

#include <string>
#include <string_view>
#include <utility>

#include <boost/beast/http.hpp>

#include "npac/npacd/api/pdu_batch.h"

namespace npac::npacd {

namespace http = boost::beast::http;
using nlohmann::json;

ApiMethod toApiMethod(http::verb verb) {
  switch (verb) {
    case http::verb::get: return ApiMethod::kGet;
    case http::verb::post: return ApiMethod::kPost;
    case http::verb::put: return ApiMethod::kPut;
    case http::verb::delete_: return ApiMethod::kDelete;
    default: return ApiMethod::kOther;
  }
}

http::verb toVerb(ApiMethod method) {
  switch (method) {
    case ApiMethod::kGet: return http::verb::get;
    case ApiMethod::kPost: return http::verb::post;
    case ApiMethod::kPut: return http::verb::put;
    case ApiMethod::kDelete: return http::verb::delete_;
    case ApiMethod::kOther: break;
  }
  return http::verb::unknown;
}

namespace {

// Every string taken in must be UTF-8 before it can be echoed into an answer or stored
// (RFC 8259 §8.1): percent-decoding can produce any byte.
Status checkTargetUtf8(const ApiRequest& r) {
  for (std::size_t i = 0; i < r.path.size(); ++i) {
    if (auto at = invalidUtf8At(r.path[i])) {
      return Status::error(StatusCode::kBadUtf8,
                           describeInvalidUtf8("path segment " + std::to_string(i + 1) + " (after percent-decoding)",
                                               r.path[i], *at));
    }
  }
  for (const auto& [key, value] : r.query) {
    if (auto at = invalidUtf8At(key)) {
      return Status::error(StatusCode::kBadUtf8,
                           describeInvalidUtf8("a query key (after percent-decoding)", key, *at));
    }
    if (auto at = invalidUtf8At(value)) {
      return Status::error(StatusCode::kBadUtf8,
                           describeInvalidUtf8("the query value of '" + key + "' (after percent-decoding)", value,
                                               *at));
    }
  }
  return Status::ok();
}

// The body: a binary PDU batch (pdu_batch.h) kept as sent — only its own route reads
// it —, else a JSON object.
Status parseBody(const HttpRequest& request, ApiRequest* out) {
  out->body = json::object();
  auto content_type = request.find(http::field::content_type);
  if (content_type != request.end() &&
      isPduBatchMediaType(std::string_view(content_type->value().data(), content_type->value().size()))) {
    out->pdu_batch = true;
    out->raw_body = request.body();
    return Status::ok();
  }
  if (request.body().empty()) return Status::ok();
  if (auto at = invalidUtf8At(request.body())) {
    return Status::error(StatusCode::kBadUtf8, describeInvalidUtf8("the request body", request.body(), *at));
  }
  out->body = json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  if (out->body.is_discarded()) return Status::error(StatusCode::kBadJson, "request body is not valid JSON");
  if (!out->body.is_object()) return Status::error(StatusCode::kBadJson, "request body must be a JSON object");
  return Status::ok();
}

// The status, Content-Type and fields of `response`, in its order.
HttpResponse headOf(const ApiResponse& response) {
  HttpResponse out{static_cast<http::status>(static_cast<unsigned>(response.status)), 11};
  if (!response.content_type.empty()) out.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.fields) out.set(name, value);
  return out;
}

}  // namespace

Status parseApiRequest(const HttpRequest& request, ApiRequest* out) {
  out->method = toApiMethod(request.method());
  const std::string target(request.target());
  out->target = target;
  if (!parseTarget(target, &out->path, &out->query)) {
    return Status::error(StatusCode::kBadTarget, "request target is not a valid path: " + printableAscii(target));
  }
  NPAC_RETURN_IF_ERROR(checkTargetUtf8(*out));
  auto actor = request.find("X-Npac-Actor");
  if (actor != request.end()) {
    out->header_actor = std::string(actor->value());
    if (auto at = invalidUtf8At(out->header_actor)) {
      return Status::error(StatusCode::kBadUtf8,
                           describeInvalidUtf8("the X-Npac-Actor header", out->header_actor, *at));
    }
  }
  return parseBody(request, out);
}

HttpResponse toHttpResponse(ApiResponse response) {
  HttpResponse out = headOf(response);
  out.body() = std::move(response.body);
  out.prepare_payload();
  return out;
}

ApiResponder toApiResponder(Responder respond) {
  return ApiResponder([respond](ApiResponse response) { respond(toHttpResponse(std::move(response))); },
                      [respond](ApiResponse head) { return respond.stream(headOf(head)); });
}

}  // namespace npac::npacd
