// libFuzzer target: the text npacd itself reads in a --db value and in the stores' SQL
// (db/postgres_connection.h): isPostgresUrl, redactPostgresUrl and numberPlaceholders over
// any bytes. Invariants: the redaction hides a URL's password (the userinfo after ':' and
// before '@', and every `password=` query parameter); numbering replaces exactly the '?' outside quotes, leaves none there
// and changes nothing else. (libpq parses the rest of a URL; npacd refuses what it cannot
// parse with "not a PostgreSQL connection URL".) No crash, no hang.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "db/postgres_connection.h"

namespace {

// The password of scheme://user:password@host… as redactPostgresUrl reads it, or "".
std::string passwordOf(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  const std::size_t start = scheme + 3;
  const std::size_t at = url.find('@', start);
  const std::size_t end = url.find_first_of("/?#", start);  // the authority's end (RFC 3986)
  if (at == std::string_view::npos || (end != std::string_view::npos && end < at)) return {};
  const std::size_t colon = url.find(':', start);
  if (colon == std::string_view::npos || colon > at) return {};
  return std::string(url.substr(colon + 1, at - colon - 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)npac::db::isPostgresUrl(text);
  const std::string redacted = npac::db::redactPostgresUrl(text);
  // The userinfo's password is replaced in place; no `password=` query value survives.
  const std::string password = passwordOf(text);
  if (!password.empty() && redacted.find(":***@") == std::string::npos) __builtin_trap();
  // Only a URL (scheme://…) is redacted: a file name is shown as it is.
  const std::size_t scheme = redacted.find("://");
  const std::size_t query = scheme == std::string::npos ? std::string::npos : redacted.find('?', scheme + 3);
  for (std::size_t p = query == std::string::npos ? std::string::npos : redacted.find("password=", query);
       p != std::string::npos && p < redacted.size(); p = redacted.find("password=", p + 1)) {
    const bool starts_param = p - 1 == query || redacted[p - 1] == '&';  // split at '&' only
    const std::size_t value = p + 9;
    const bool hidden = value >= redacted.size() || redacted[value] == '&' || redacted.compare(value, 3, "***") == 0;
    if (starts_param && !hidden) __builtin_trap();  // a query password survived
  }

  int count = -1;
  const std::string numbered = npac::db::numberPlaceholders(text, &count);
  int outside = 0;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?') {
      ++outside;
    }
  }
  if (count != outside) __builtin_trap();
  // Each '?' became "$n": the rest of the text is unchanged, so with no '?' the output is
  // the input.
  if (outside == 0 && numbered != text) __builtin_trap();
  if (outside > 0 && numbered.size() <= text.size()) __builtin_trap();
  return 0;
}
