#include "associations/nsap.h"

#include <algorithm>
#include <charconv>

#include "common/hex.h"

namespace npac::associations {
namespace {

constexpr std::size_t kAddressOffset = 6;  // octets 6..11 hold the 12 address digits
constexpr std::string_view kMappedPrefix = "::ffff:";

bool startsWithCaseless(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

}  // namespace

Nsap Nsap::fromIpv4(const Ipv4& address) {
  Octets octets{};
  octets[0] = kRfc1277Afi;
  for (std::size_t i = 0; i < kRfc1277Idi.size(); ++i) octets[1 + i] = kRfc1277Idi[i];
  octets[5] = kRfc1277InternetPrefix;
  // Twelve decimal digits, three per address octet, packed two per NSAP octet (BCD).
  std::array<std::uint8_t, 12> digits{};
  for (std::size_t i = 0; i < 4; ++i) {
    digits[i * 3] = address[i] / 100;
    digits[i * 3 + 1] = address[i] / 10 % 10;
    digits[i * 3 + 2] = address[i] % 10;
  }
  for (std::size_t i = 0; i < 6; ++i) {
    octets[kAddressOffset + i] = static_cast<std::uint8_t>(digits[i * 2] << 4 | digits[i * 2 + 1]);
  }
  return Nsap(octets);
}

Result<Nsap> Nsap::fromAddressString(std::string_view address) {
  if (startsWithCaseless(address, kMappedPrefix)) {
    address.remove_prefix(kMappedPrefix.size());
  } else if (address.find(':') != std::string_view::npos) {
    return Status::error(StatusCode::kNsapIpv6, {});
  }
  Ipv4 result{};
  const char* cursor = address.data();
  const char* end = address.data() + address.size();
  for (std::size_t i = 0; i < 4; ++i) {
    if (i > 0) {
      if (cursor == end || *cursor != '.') return Status::error(StatusCode::kNsapBadAddress, {});
      ++cursor;
    }
    // One to three decimal digits, no sign, value 0..255.
    const char* start = cursor;
    unsigned value = 0;
    auto [next, ec] = std::from_chars(cursor, end, value);
    if (ec != std::errc() || next == start || next - start > 3 || value > 255) {
      return Status::error(StatusCode::kNsapBadAddress, {});
    }
    result[i] = static_cast<std::uint8_t>(value);
    cursor = next;
  }
  if (cursor != end) return Status::error(StatusCode::kNsapBadAddress, {});
  return fromIpv4(result);
}

Result<Nsap> Nsap::fromHex(std::string_view hex) {
  if (hex.size() != kNsapOctets * 2) return Status::error(StatusCode::kNsapBadHex, {});
  const std::optional<std::vector<std::uint8_t>> bytes = common::fromHex(hex);
  if (!bytes) return Status::error(StatusCode::kNsapBadHex, {});
  Octets octets{};
  std::copy(bytes->begin(), bytes->end(), octets.begin());
  return fromOctets(octets);
}

Result<Nsap> Nsap::fromOctets(const Octets& octets) {
  if (octets[0] != kRfc1277Afi || octets[5] != kRfc1277InternetPrefix) {
    return Status::error(StatusCode::kNsapNotInternet, {});
  }
  for (std::size_t i = 0; i < kRfc1277Idi.size(); ++i) {
    if (octets[1 + i] != kRfc1277Idi[i]) return Status::error(StatusCode::kNsapNotInternet, {});
  }
  unsigned group = 0;
  for (std::size_t digit = 0; digit < 12; ++digit) {
    const std::uint8_t octet = octets[kAddressOffset + digit / 2];
    const unsigned value = digit % 2 == 0 ? octet >> 4 : octet & 0x0F;
    if (value > 9) return Status::error(StatusCode::kNsapBadDigits, {});
    group = group * 10 + value;
    if (digit % 3 == 2) {
      if (group > 255) return Status::error(StatusCode::kNsapOctetOver255, {});
      group = 0;
    }
  }
  return Nsap(octets);
}

Ipv4 Nsap::ipv4() const {
  Ipv4 address{};
  for (std::size_t i = 0; i < 4; ++i) {
    unsigned value = 0;
    for (std::size_t d = i * 3; d < i * 3 + 3; ++d) {
      const std::uint8_t octet = octets_[kAddressOffset + d / 2];
      value = value * 10 + (d % 2 == 0 ? octet >> 4 : octet & 0x0F);
    }
    address[i] = static_cast<std::uint8_t>(value);
  }
  return address;
}

std::string Nsap::toHex() const { return common::toHex(octets_); }

std::string Nsap::toAddressString() const {
  const Ipv4 address = ipv4();
  return std::to_string(address[0]) + "." + std::to_string(address[1]) + "." +
         std::to_string(address[2]) + "." + std::to_string(address[3]);
}

}  // namespace npac::associations
