// The operator's console, server side (docs/API.md "The console"):
//
//   GET /v1/whoami        reader: {"name","role"} of the caller's token, so the page
//                         enables only the controls its role may use (the routes refuse
//                         the others anyway: access.h)
//   GET /console          308 to /console/, so the page's relative URLs resolve under it
//   GET /console/         the page, index.html
//   GET /console/{file}   one of the page's files, compiled into npacd from
//                         npac/npacd/console/ (embedded_files.h): nothing is read from
//                         disk at run time, nothing comes from another origin
//
// The files are public: they hold no data, and every data request the page makes
// carries the token. Each answer forbids what the page does not need (Content Security
// Policy Level 3: scripts, styles, images and connections from npacd only, no framing,
// no <base>, no form posts), stops MIME sniffing (Fetch standard
// "X-Content-Type-Options") and sends no Referer (Referrer Policy "no-referrer").
#include <string>

#include "npac/npacd/api/embedded_files.h"
#include "npac/npacd/api/request.h"
#include "npac/npacd/api/routes.h"

namespace npac::npacd {

namespace {

constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

void setConsoleHeaders(ApiResponse& response) {
  // no-cache: the browser may keep a copy but asks again each time, so a new npacd's
  // page is seen at the next load.
  response.set("Cache-Control", "no-cache");
  response.set("X-Content-Type-Options", "nosniff");
  response.set("Content-Security-Policy", kContentSecurityPolicy);
  response.set("Referrer-Policy", "no-referrer");
}

const EmbeddedFile* findConsoleFile(const std::string& name) {
  for (const EmbeddedFile& file : consoleFiles()) {
    if (file.name == name) return &file;
  }
  return nullptr;
}

std::string consoleFileNames() {
  std::string names;
  for (const EmbeddedFile& file : consoleFiles()) names += (names.empty() ? "" : ", ") + std::string(file.name);
  return names.empty() ? "none (npacd was built without its console)" : names;
}

}  // namespace

ApiResponse whoami(ApiContext&, ApiRequest& r) {
  // The route needs a reader, so an admitted request always has a token and its role.
  const db::TokenRole role = r.token_role.value_or(db::TokenRole::kReader);
  return jsonResponse(ApiStatus::kOk, {{"name", r.token_name}, {"role", db::toString(role)}});
}

ApiResponse consoleIndex(ApiContext& api, ApiRequest& r) {
  // "/console" and "/console/" parse to the same segments: only the target tells them apart.
  const std::string path = r.target.substr(0, r.target.find('?'));
  if (!path.ends_with('/')) {
    // 308 keeps the method (RFC 9110 §15.4.9); the query, if any, goes along.
    ApiResponse response;
    response.status = ApiStatus::kPermanentRedirect;
    const std::size_t query = r.target.find('?');
    response.set("Location", "/console/" + (query == std::string::npos ? "" : r.target.substr(query)));
    setConsoleHeaders(response);
    return response;
  }
  return consoleFile(api, r, "index.html");
}

ApiResponse consoleFile(ApiContext&, ApiRequest&, const std::string& name) {
  const EmbeddedFile* file = findConsoleFile(name);
  if (file == nullptr) {
    ApiResponse response = errorResponse(ApiStatus::kNotFound, "console_file_not_found",
                                         "the console has no file '" + printableAscii(name) +
                                             "'; it has: " + consoleFileNames());
    setConsoleHeaders(response);
    return response;
  }
  ApiResponse response;
  response.content_type = std::string(file->content_type);
  setConsoleHeaders(response);
  response.body.assign(file->bytes.data(), file->bytes.size());
  return response;
}

}  // namespace npac::npacd
