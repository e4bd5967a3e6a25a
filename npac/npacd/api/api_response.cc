#include "npac/npacd/api/api_response.h"

#include <algorithm>
#include <cctype>

namespace npac::npacd {

namespace {

// Header field names compare without regard to case (RFC 9110 §5.1).
bool sameFieldName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

void ApiResponse::set(std::string_view name, std::string value) {
  std::erase_if(fields, [name](const auto& field) { return sameFieldName(field.first, name); });
  fields.emplace_back(std::string(name), std::move(value));
}

const std::string* ApiResponse::field(std::string_view name) const {
  for (const auto& [field_name, value] : fields) {
    if (sameFieldName(field_name, name)) return &value;
  }
  return nullptr;
}

std::string printableAscii(std::string_view text) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace npac::npacd
