#include "npac/npacd/api/admin_api.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "db/provider_store.h"
#include "npac/npacd/api/request.h"

namespace npac::npacd {

using nlohmann::json;

namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percentDecode(std::string_view in, std::string* out, bool plus_is_space) {
  out->clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = hexDigit(in[i + 1]), lo = hexDigit(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (in[i] == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(in[i]);
    }
  }
  return true;
}

}  // namespace

std::string ApiRequest::actor() const {
  if (body.is_object() && body.contains("actor") && body["actor"].is_string()) {
    return body["actor"].get<std::string>();
  }
  if (!header_actor.empty()) return header_actor;
  return queryValue("actor").value_or("");
}

bool parseTarget(const std::string& target, std::vector<std::string>* path,
                 std::map<std::string, std::string>* query) {
  if (target.empty() || target[0] != '/') return false;
  std::size_t q = target.find('?');
  std::string_view p = std::string_view(target).substr(0, q);
  std::size_t start = 1;
  while (start <= p.size()) {
    std::size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    if (end > start) {
      std::string segment;
      if (!percentDecode(p.substr(start, end - start), &segment, false)) return false;
      path->push_back(std::move(segment));
    }
    start = end + 1;
  }
  if (q == std::string::npos) return true;
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    std::size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    std::size_t eq = pair.find('=');
    std::string key, value;
    if (!percentDecode(pair.substr(0, eq), &key, true)) return false;
    if (eq != std::string_view::npos && !percentDecode(pair.substr(eq + 1), &value, true)) return false;
    if (!key.empty()) (*query)[key] = value;
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return true;
}

std::optional<ApiError> parseApiRequest(const HttpRequest& request, ApiRequest* out) {
  out->method = request.method();
  const std::string target(request.target());
  if (!parseTarget(target, &out->path, &out->query)) {
    return ApiError{"bad_target", "request target is not a valid path: " + printableAscii(target)};
  }
  // Every string taken in must be UTF-8 before it can be echoed into an answer or stored
  // (RFC 8259 §8.1): percent-decoding can produce any byte.
  for (std::size_t i = 0; i < out->path.size(); ++i) {
    if (auto at = invalidUtf8At(out->path[i])) {
      return ApiError{"bad_utf8", describeInvalidUtf8("path segment " + std::to_string(i + 1) +
                                                          " (after percent-decoding)", out->path[i], *at)};
    }
  }
  for (const auto& [key, value] : out->query) {
    if (auto at = invalidUtf8At(key)) {
      return ApiError{"bad_utf8", describeInvalidUtf8("a query key (after percent-decoding)", key, *at)};
    }
    if (auto at = invalidUtf8At(value)) {
      return ApiError{"bad_utf8",
                      describeInvalidUtf8("the query value of '" + key + "' (after percent-decoding)", value, *at)};
    }
  }
  auto actor = request.find("X-Npac-Actor");
  if (actor != request.end()) {
    out->header_actor = std::string(actor->value());
    if (auto at = invalidUtf8At(out->header_actor)) {
      return ApiError{"bad_utf8", describeInvalidUtf8("the X-Npac-Actor header", out->header_actor, *at)};
    }
  }
  out->body = json::object();
  if (!request.body().empty()) {
    if (auto at = invalidUtf8At(request.body())) {
      return ApiError{"bad_utf8", describeInvalidUtf8("the request body", request.body(), *at)};
    }
    out->body = json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
    if (out->body.is_discarded()) return ApiError{"bad_json", "request body is not valid JSON"};
    if (!out->body.is_object()) return ApiError{"bad_json", "request body must be a JSON object"};
  }
  return std::nullopt;
}

std::string dumpJson(const json& value) {
  // A string read back from an older database may hold bytes that are not UTF-8; they
  // are answered as U+FFFD instead of making dump() throw (the input side refuses them).
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpResponse jsonResponse(http::status status, const json& body) {
  HttpResponse response{status, 11};
  response.set(http::field::content_type, "application/json");
  response.body() = dumpJson(body) + "\n";
  response.prepare_payload();
  return response;
}

HttpResponse errorResponse(http::status status, const std::string& code, const std::string& message) {
  return jsonErrorResponse(status, code, message);
}

HttpResponse dbErrorResponse(const db::Status& status) {
  using Code = db::Status::Code;
  switch (status.code()) {
    case Code::kNotFound: return errorResponse(http::status::not_found, "not_found", status.message());
    case Code::kInvalidArgument:
      return errorResponse(http::status::bad_request, "invalid_argument", status.message());
    case Code::kConstraint: return errorResponse(http::status::conflict, "conflict", status.message());
    case Code::kBusy:
    case Code::kOverloaded:
      return errorResponse(http::status::service_unavailable, "overloaded", status.toString());
    case Code::kShutdown:
      return errorResponse(http::status::service_unavailable, "shutting_down", status.toString());
    default: return errorResponse(http::status::internal_server_error, "storage", status.toString());
  }
}

HttpResponse tunableErrorResponse(const tunables::Status& status) {
  using tunables::ErrorCode;
  const std::string text = status.toString();
  switch (status.code()) {
    case ErrorCode::kUnknownName: return errorResponse(http::status::not_found, "unknown_tunable", text);
    case ErrorCode::kWrongType: return errorResponse(http::status::bad_request, "wrong_type", text);
    case ErrorCode::kOutOfRange: return errorResponse(http::status::bad_request, "out_of_range", text);
    case ErrorCode::kWrongScope: return errorResponse(http::status::bad_request, "wrong_scope", text);
    case ErrorCode::kUnknownEnumValue:
      return errorResponse(http::status::bad_request, "unknown_enum_value", text);
    case ErrorCode::kInvalidProvider:
      return errorResponse(http::status::bad_request, "invalid_provider", text);
    case ErrorCode::kInconsistent: return errorResponse(http::status::bad_request, "inconsistent", text);
    case ErrorCode::kNoActor: return errorResponse(http::status::bad_request, "actor_required", text);
    case ErrorCode::kReentrant: return errorResponse(http::status::conflict, "reentrant", text);
    default: return errorResponse(http::status::internal_server_error, "storage", text);
  }
}

HttpResponse actorRequired(const std::string& what) {
  return errorResponse(http::status::bad_request, "actor_required",
                       what + " changes the configuration: give \"actor\" in the body or an "
                              "X-Npac-Actor header (it goes to the audit log)");
}

AdminApi::AdminApi(boost::asio::io_context& io, db::Database& db, tunables::TunableRegistry& registry,
                   db::Clock clock)
    : io_(io), db_(db), registry_(registry), clock_(std::move(clock)) {}

AdminApi::~AdminApi() {
  if (server_) server_->stop();
}

db::Result<std::unique_ptr<AdminApi>> AdminApi::start(boost::asio::io_context& io, Options options,
                                                      db::Database& db,
                                                      tunables::TunableRegistry& registry,
                                                      db::Clock clock) {
  std::unique_ptr<AdminApi> api(new AdminApi(io, db, registry, std::move(clock)));
  AdminApi* self = api.get();
  db::Result<std::unique_ptr<HttpServer>> server = HttpServer::start(
      io, options.http,
      [self](HttpRequest&& request, Responder respond) { self->handle(std::move(request), std::move(respond)); });
  if (!server.isOk()) return server.status();
  api->server_ = std::move(server.value());
  return api;
}

void AdminApi::handle(HttpRequest&& request, Responder respond) {
  // At --log-level debug (or PUT /v1/log-level), each request is logged as it arrives.
  spdlog::debug("admin API: {} {}", std::string(http::to_string(request.method())), std::string(request.target()));
  ApiRequest r;
  if (std::optional<ApiError> error = parseApiRequest(request, &r)) {
    return respond(errorResponse(http::status::bad_request, error->code, error->message));
  }
  route(r, respond);
}

// Route table: method + path shape → handler. Paths are matched segment by segment.
void AdminApi::route(ApiRequest& r, Responder& respond) {
  using V = http::verb;
  const auto& p = r.path;
  const std::size_t n = p.size();
  auto is = [&](std::initializer_list<const char*> shape) {
    if (shape.size() != n) return false;
    std::size_t i = 0;
    for (const char* s : shape) {
      if (s[0] != '*' && p[i] != s) return false;
      ++i;
    }
    return true;
  };
  auto method_not_allowed = [&]() {
    respond(errorResponse(http::status::method_not_allowed, "method_not_allowed",
                          std::string(http::to_string(r.method)) + " is not allowed on this route"));
  };
  auto reply = [&](V allowed, auto&& fn) {
    if (r.method != allowed) return method_not_allowed();
    respond(fn());
  };
  if (n >= 1 && p[0] == "v1") {
    if (is({"v1", "providers"})) {
      if (r.method == V::post) return respond(addProvider(r));
      if (r.method == V::get) return respond(listProviders(r));
      return method_not_allowed();
    }
    if (is({"v1", "providers", "*"})) return reply(V::get, [&] { return showProvider(r, p[2]); });
    if (is({"v1", "providers", "*", "disable"})) return reply(V::post, [&] { return setProviderEnabled(r, p[2], false); });
    if (is({"v1", "providers", "*", "enable"})) return reply(V::post, [&] { return setProviderEnabled(r, p[2], true); });
    if (is({"v1", "providers", "*", "srr"})) return reply(V::put, [&] { return setSrr(r, p[2]); });
    if (is({"v1", "providers", "*", "queue"})) {
      if (r.method != V::get) return method_not_allowed();
      return providerQueue(r, p[2], respond);
    }
    if (is({"v1", "providers", "*", "nsaps"})) {
      if (r.method == V::post) return respond(addNsap(r, p[2]));
      if (r.method == V::get) return respond(listNsaps(r, p[2]));
      return method_not_allowed();
    }
    if (is({"v1", "providers", "*", "nsaps", "*"})) return reply(V::delete_, [&] { return removeNsap(r, p[2], p[4]); });
    if (is({"v1", "providers", "*", "keys"})) {
      if (r.method == V::post) return respond(addKey(r, p[2]));
      if (r.method == V::get) return respond(listKeys(r, p[2]));
      return method_not_allowed();
    }
    if (is({"v1", "providers", "*", "keys", "*", "*", "revoke"})) {
      return reply(V::post, [&] { return revokeKey(r, p[2], p[4], p[5]); });
    }
    if (is({"v1", "npac-keys"})) {
      if (r.method == V::post) return respond(addNpacKey(r));
      if (r.method == V::get) return respond(listNpacKeys(r));
      return method_not_allowed();
    }
    if (is({"v1", "npac-keys", "*", "*", "public"})) return reply(V::get, [&] { return exportNpacKey(r, p[2], p[3]); });
    if (is({"v1", "npac-keys", "*", "*", "revoke"})) return reply(V::post, [&] { return revokeNpacKey(r, p[2], p[3]); });
    if (is({"v1", "tunables"})) return reply(V::get, [&] { return listTunables(r); });
    if (is({"v1", "tunables", "*"})) {
      if (r.method == V::get) return respond(getTunable(r, p[2]));
      if (r.method == V::put) return respond(setTunable(r, p[2]));
      if (r.method == V::delete_) return respond(clearTunable(r, p[2]));
      return method_not_allowed();
    }
    if (is({"v1", "messages"})) {
      if (r.method != V::post) return method_not_allowed();
      return submitMessages(r, respond);
    }
    if (is({"v1", "messages", "*"})) {
      if (r.method != V::get) return method_not_allowed();
      return messageStatus(r, p[2], respond);
    }
    if (is({"v1", "inbound"})) {
      if (r.method != V::get) return method_not_allowed();
      return pollInbound(r, respond);
    }
    if (is({"v1", "inbound", "*", "response"})) {
      if (r.method != V::post) return method_not_allowed();
      return respondInbound(r, p[2], respond);
    }
    if (is({"v1", "associations"})) {
      if (r.method != V::get) return method_not_allowed();
      return listAssociations(r, respond);
    }
    if (is({"v1", "association-log"})) return reply(V::get, [&] { return associationLog(r); });
    if (is({"v1", "audit-log"})) return reply(V::get, [&] { return auditLog(r); });
    if (is({"v1", "log-level"})) {
      if (r.method == V::get) return respond(getLogLevel(r));
      if (r.method == V::put) return respond(setLogLevel(r));
      return method_not_allowed();
    }
    if (is({"v1", "associations", "*", "abort"})) {
      if (r.method != V::post) return method_not_allowed();
      return abortAssociation(r, p[2], respond);
    }
  }
  std::string path;
  for (const std::string& s : p) path += "/" + s;
  respond(errorResponse(http::status::not_found, "unknown_route",
                        "no route " + std::string(http::to_string(r.method)) + " " + (path.empty() ? "/" : path) +
                            " (see docs/API.md)"));
}

bool AdminApi::requireProvider(ApiRequest&, const std::string& spid, HttpResponse* error) {
  if (!db::isValidSpid(spid)) {
    *error = errorResponse(http::status::bad_request, "invalid_spid",
                           "'" + spid + "' is not a SPID: 4 ASCII letters or digits");
    return false;
  }
  db::ProviderStore providers(db_);
  db::Result<db::ServiceProvider> provider = providers.get(spid);
  if (provider.isOk()) return true;
  if (provider.status().isNotFound()) {
    *error = errorResponse(http::status::not_found, "provider_not_found", "no provider " + spid + " is provisioned");
  } else {
    *error = dbErrorResponse(provider.status());
  }
  return false;
}

}  // namespace npac::npacd
