// Hexadecimal text for octets: NSAPs, keys, PDUs and BER values as the admin API, the
// database, npacctl, npac-pdu and the simulator write and read them. One encoder (lower
// case, no separators) and one decoder, so every program prints and accepts the same text.
//
// Threading: pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace npac::common {

// Lower-case hex, two digits an octet, no separators: {0x4f, 0x0a} → "4f0a".
std::string toHex(std::span<const std::uint8_t> bytes);

// 0..15 for 0-9, a-f, A-F; -1 for any other character.
int hexDigitValue(char c);

// What a decoder tolerates between octets. Digits of one octet are always adjacent.
enum class HexSeparators : std::uint8_t {
  kNone,           // only digits: what programs write ("4f0a")
  kBetweenOctets,  // also spaces, tabs, newlines and ':' between octets ("4f 0a", "4f:0a")
};

// The decoded octets, or kBadHex whose message names the offending character and its
// offset, or an odd digit count.
Result<std::vector<std::uint8_t>> decodeHex(std::string_view text, HexSeparators separators = HexSeparators::kNone);

// decodeHex without separators, for callers with their own message: nullopt when not hex.
std::optional<std::vector<std::uint8_t>> fromHex(std::string_view text);

}  // namespace npac::common
