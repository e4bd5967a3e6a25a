// The one hex encoder and decoder: exact text both ways, every malformed input refused
// with where and why.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "common/hex.h"

using namespace npac::common;
using npac::StatusCode;
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
  auto d = decodeHex("4f0");
  REQUIRE_FALSE(d.isOk());
  CHECK(d.status().code() == StatusCode::kBadHex);
  CHECK(d.status().message() == "odd number of hex digits");
  CHECK_FALSE(fromHex("4f0").has_value());
}

TEST_CASE("A character that is not a hex digit is refused with its offset") {
  CHECK(decodeHex("4fzz").status().message() == "'z' at offset 2 is not a hex digit");
  CHECK(decodeHex(std::string("4f\x01", 3)).status().message() == "byte 0x01 at offset 2 is not a hex digit");
}

TEST_CASE("Separators are refused unless the caller allows them between octets") {
  CHECK(decodeHex("4f 0a").status().code() == StatusCode::kBadHex);
  auto d = decodeHex(" 4f:0a\n\t01 ", HexSeparators::kBetweenOctets);
  REQUIRE(d.isOk());
  CHECK(d.value() == Bytes{0x4f, 0x0a, 0x01});
}

TEST_CASE("A separator inside an octet is refused") {
  CHECK(decodeHex("4 f", HexSeparators::kBetweenOctets).status().message() ==
        "odd number of hex digits before the separator at offset 1");
}

TEST_CASE("Empty text decodes to no octets") {
  auto d = decodeHex("");
  REQUIRE(d.isOk());
  CHECK(d.value().empty());
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
