#include "common/hex.h"

namespace npac::common {
namespace {

bool isSeparator(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ':'; }

// "'z'" or "byte 0x01"; built by appending (g++ 12 warns, -Wrestrict PR105651, on
// "literal" + std::string).
std::string describe(char c) {
  const auto u = static_cast<unsigned char>(c);
  std::string out;
  if (u >= 0x20 && u < 0x7f) {
    out.push_back('\'');
    out.push_back(c);
    out.push_back('\'');
    return out;
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  out.append("byte 0x");
  out.push_back(kDigits[u >> 4]);
  out.push_back(kDigits[u & 0x0f]);
  return out;
}

}  // namespace

std::string toHex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0x0f]);
  }
  return out;
}

int hexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::vector<std::uint8_t>> decodeHex(std::string_view text, HexSeparators separators) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(text.size() / 2);
  int high = -1;  // the first digit of the octet being read, or -1 between octets
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const int value = hexDigitValue(c);
    if (value < 0) {
      if (separators == HexSeparators::kBetweenOctets && isSeparator(c)) {
        if (high < 0) continue;
        return Status::error(StatusCode::kBadHex,
                             "odd number of hex digits before the separator at offset " + std::to_string(i));
      }
      return Status::error(StatusCode::kBadHex, describe(c) + " at offset " + std::to_string(i) + " is not a hex digit");
    }
    if (high < 0) {
      high = value;
    } else {
      bytes.push_back(static_cast<std::uint8_t>(high << 4 | value));
      high = -1;
    }
  }
  if (high >= 0) return Status::error(StatusCode::kBadHex, "odd number of hex digits");
  return bytes;
}

std::optional<std::vector<std::uint8_t>> fromHex(std::string_view text) {
  Result<std::vector<std::uint8_t>> decoded = decodeHex(text);
  if (!decoded.isOk()) return std::nullopt;
  return std::move(decoded).value();
}

}  // namespace npac::common
