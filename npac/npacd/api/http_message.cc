#include "npac/npacd/api/http_message.h"

#include <nlohmann/json.hpp>

namespace npac::npacd {

namespace http = boost::beast::http;

HttpResponse jsonErrorResponse(http::status status, const std::string& code,
                               const std::string& message, unsigned version) {
  HttpResponse response{status, version};
  response.set(http::field::content_type, "application/json");
  nlohmann::json body = {{"error", {{"code", code}, {"message", message}}}};
  // `message` may echo client input: bytes that are not UTF-8 become U+FFFD, never a throw.
  response.body() = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  response.prepare_payload();
  return response;
}

}  // namespace npac::npacd
