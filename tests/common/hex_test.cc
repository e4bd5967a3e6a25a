// The one hex encoder and decoder: exact text both ways, every malformed input refused
// with where and why.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "common/hex.h"

using namespace npac::common;
using Bytes = std::vector<std::uint8_t>;

TEST_CASE("Octets are written as lower-case hex without separators") {
  CHECK(toHex(Bytes{0x00, 0x4f, 0xab, 0xff}) == "004fabff");
  CHECK(toHex(Bytes{}).empty());
}

TEST_CASE("Every octet value round-trips through hex") {
  Bytes all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<std::uint8_t>(i));
  const std::string text = toHex(all);
  REQUIRE(text.size() == 512);
  CHECK(fromHex(text) == all);
}

TEST_CASE("Upper-case hex digits are read") {
  CHECK(fromHex("4F0A") == Bytes{0x4f, 0x0a});
}

TEST_CASE("An odd number of hex digits is refused") {
  HexDecoded d = decodeHex("4f0");
  CHECK_FALSE(d.ok());
  CHECK(d.error == "odd number of hex digits");
  CHECK(d.bytes.empty());
  CHECK_FALSE(fromHex("4f0").has_value());
}

TEST_CASE("A character that is not a hex digit is refused with its offset") {
  HexDecoded d = decodeHex("4fzz");
  CHECK(d.error == "'z' at offset 2 is not a hex digit");
  CHECK(decodeHex(std::string("4f\x01", 3)).error == "byte 0x01 at offset 2 is not a hex digit");
}

TEST_CASE("Separators are refused unless the caller allows them between octets") {
  CHECK_FALSE(decodeHex("4f 0a").ok());
  HexDecoded d = decodeHex(" 4f:0a\n\t01 ", HexSeparators::kBetweenOctets);
  REQUIRE(d.ok());
  CHECK(d.bytes == Bytes{0x4f, 0x0a, 0x01});
}

TEST_CASE("A separator inside an octet is refused") {
  HexDecoded d = decodeHex("4 f", HexSeparators::kBetweenOctets);
  CHECK(d.error == "odd number of hex digits before the separator at offset 1");
}

TEST_CASE("Empty text decodes to no octets") {
  HexDecoded d = decodeHex("");
  CHECK(d.ok());
  CHECK(d.bytes.empty());
}

TEST_CASE("Hex digit values cover exactly 0-9 a-f A-F") {
  int digits = 0;
  for (int c = 0; c < 256; ++c) {
    if (hexDigitValue(static_cast<char>(c)) >= 0) ++digits;
  }
  CHECK(digits == 22);
  CHECK(hexDigitValue('F') == 15);
  CHECK(hexDigitValue('g') == -1);
}
