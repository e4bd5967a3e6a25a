#include "npac/npacd/api/request.h"

#include <algorithm>
#include <cctype>
#include <string_view>

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

// A message never repeats its code: a status whose text starts with its own kind
// ("unknown tunable: …", "shutting down: …") under the code saying the same
// (unknown_tunable, shutting_down) loses those words, so npacctl's "code: message" reads
// "unknown_tunable: no tunable named …", not "unknown_tunable: unknown tunable: …".
std::string withoutCodeWords(const std::string& code, const std::string& message) {
  std::string words = code;
  std::replace(words.begin(), words.end(), '_', ' ');
  words += ": ";
  if (message.size() <= words.size()) return message;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(message[i])) != words[i]) return message;
  }
  return message.substr(words.size());
}

}  // namespace

const char* toString(ApiMethod method) {
  switch (method) {
    case ApiMethod::kGet: return "GET";
    case ApiMethod::kPost: return "POST";
    case ApiMethod::kPut: return "PUT";
    case ApiMethod::kDelete: return "DELETE";
    case ApiMethod::kOther: break;
  }
  return "OTHER";
}

std::string ApiRequest::actor() const { return token_name; }

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

std::string dumpJson(const json& value) {
  // A string read back from an older database may hold bytes that are not UTF-8; they
  // are answered as U+FFFD instead of making dump() throw (the input side refuses them).
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

ApiResponse jsonResponse(ApiStatus status, const json& body) {
  ApiResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = dumpJson(body) + "\n";
  return response;
}

ApiResponse errorResponse(ApiStatus status, const std::string& code, const std::string& message) {
  // The shape of every error body, the HTTP server's own included (jsonErrorResponse).
  return jsonResponse(status, json{{"error", {{"code", code}, {"message", withoutCodeWords(code, message)}}}});
}

namespace {

// The tunables group: the code names the kind ("wrong_type"), the registry's message says
// what was wrong.
ApiResponse tunableResponse(const Status& status) {
  using Code = npac::StatusCode;
  const std::string text = status.message().empty() ? status.toString() : status.message();
  switch (status.code()) {
    case Code::kUnknownName: return errorResponse(ApiStatus::kNotFound, "unknown_tunable", text);
    case Code::kWrongType: return errorResponse(ApiStatus::kBadRequest, "wrong_type", text);
    case Code::kOutOfRange: return errorResponse(ApiStatus::kBadRequest, "out_of_range", text);
    case Code::kWrongScope: return errorResponse(ApiStatus::kBadRequest, "wrong_scope", text);
    case Code::kUnknownEnumValue: return errorResponse(ApiStatus::kBadRequest, "unknown_enum_value", text);
    case Code::kInvalidProvider: return errorResponse(ApiStatus::kBadRequest, "invalid_provider", text);
    case Code::kInconsistent: return errorResponse(ApiStatus::kBadRequest, "inconsistent", text);
    case Code::kNoActor: return errorResponse(ApiStatus::kBadRequest, "actor_required", text);
    case Code::kReentrant: return errorResponse(ApiStatus::kConflict, "reentrant", text);
    default: return errorResponse(ApiStatus::kInternalServerError, "storage", text);
  }
}

// The request group: the code is the answer's code (its description, "invalid_message"),
// the message says what in the request was wrong. A refused broadcast's recipients answer
// 404, 409 or 413 (docs/API.md "Broadcasts"); anything else the client sent wrong, 400.
ApiResponse requestResponse(const Status& status, const std::string& prefix) {
  using Code = npac::StatusCode;
  ApiStatus http = ApiStatus::kBadRequest;
  switch (status.code()) {
    case Code::kProviderNotFound: http = ApiStatus::kNotFound; break;
    case Code::kFunctionNotAllowed:
    case Code::kNoRecipients: http = ApiStatus::kConflict; break;
    case Code::kTooManyRecipients: http = ApiStatus::kPayloadTooLarge; break;
    default: break;
  }
  return errorResponse(http, describe(status.code()), prefix + status.message());
}

}  // namespace

ApiResponse statusResponse(const Status& status, const std::string& context) {
  using Code = npac::StatusCode;
  if (status.layer() == StatusLayer::kTunables) return tunableResponse(status);
  const std::string prefix = context.empty() ? std::string() : context + ": ";
  if (status.layer() == StatusLayer::kRequest) return requestResponse(status, prefix);
  switch (status.code()) {
    case Code::kNotFound: return errorResponse(ApiStatus::kNotFound, "not_found", prefix + status.message());
    case Code::kInvalidArgument:
      return errorResponse(ApiStatus::kBadRequest, "invalid_argument", prefix + status.message());
    case Code::kConstraint: return errorResponse(ApiStatus::kConflict, "conflict", prefix + status.message());
    case Code::kBusy:
    case Code::kOverloaded:
      return errorResponse(ApiStatus::kServiceUnavailable, "overloaded", prefix + status.toString());
    case Code::kShutdown:
      return errorResponse(ApiStatus::kServiceUnavailable, "shutting_down", prefix + status.toString());
    case Code::kUnavailable:
      return errorResponse(ApiStatus::kServiceUnavailable, "database_unavailable", prefix + status.toString());
    default: return errorResponse(ApiStatus::kInternalServerError, "storage", prefix + status.toString());
  }
}

ApiResponse actorRequired(const std::string& what) {
  return errorResponse(ApiStatus::kBadRequest, "actor_required",
                       what + " changes the configuration: it needs a request admitted with a token, "
                              "whose name goes to the audit log");
}

ApiResponse coreUnavailable() {
  return errorResponse(ApiStatus::kServiceUnavailable, "core_unavailable",
                       "the association core is not attached to this API (npacd is starting, "
                       "stopping or runs without it): retry later");
}

}  // namespace npac::npacd
