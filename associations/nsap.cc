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

std::string_view toString(NsapError error) {
  switch (error) {
    case NsapError::kBadHex: return "an NSAP is 24 hexadecimal digits (12 octets, NANC 316)";
    case NsapError::kNotInternet:
      return "not an RFC 1277 Internet NSAP (must start 54 00728722 03)";
    case NsapError::kBadDigits: return "the address digits are not decimal (BCD)";
    case NsapError::kOctetOver255: return "an address group is above 255";
    case NsapError::kBadAddress: return "not a dotted-quad IPv4 address";
    case NsapError::kIpv6: return "IPv6 peers have no 12-octet NSAP; use IPv4";
  }
  return "unknown";
}

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

Result<Nsap, NsapError> Nsap::fromAddressString(std::string_view address) {
  if (startsWithCaseless(address, kMappedPrefix)) {
    address.remove_prefix(kMappedPrefix.size());
  } else if (address.find(':') != std::string_view::npos) {
    return err(NsapError::kIpv6);
  }
  Ipv4 result{};
  const char* cursor = address.data();
  const char* end = address.data() + address.size();
  for (std::size_t i = 0; i < 4; ++i) {
    if (i > 0) {
      if (cursor == end || *cursor != '.') return err(NsapError::kBadAddress);
      ++cursor;
    }
    // One to three decimal digits, no sign, value 0..255.
    const char* start = cursor;
    unsigned value = 0;
    auto [next, ec] = std::from_chars(cursor, end, value);
    if (ec != std::errc() || next == start || next - start > 3 || value > 255) {
      return err(NsapError::kBadAddress);
    }
    result[i] = static_cast<std::uint8_t>(value);
    cursor = next;
  }
  if (cursor != end) return err(NsapError::kBadAddress);
  return fromIpv4(result);
}

Result<Nsap, NsapError> Nsap::fromHex(std::string_view hex) {
  if (hex.size() != kNsapOctets * 2) return err(NsapError::kBadHex);
  const std::optional<std::vector<std::uint8_t>> bytes = common::fromHex(hex);
  if (!bytes) return err(NsapError::kBadHex);
  Octets octets{};
  std::copy(bytes->begin(), bytes->end(), octets.begin());
  return fromOctets(octets);
}

Result<Nsap, NsapError> Nsap::fromOctets(const Octets& octets) {
  if (octets[0] != kRfc1277Afi || octets[5] != kRfc1277InternetPrefix) {
    return err(NsapError::kNotInternet);
  }
  for (std::size_t i = 0; i < kRfc1277Idi.size(); ++i) {
    if (octets[1 + i] != kRfc1277Idi[i]) return err(NsapError::kNotInternet);
  }
  unsigned group = 0;
  for (std::size_t digit = 0; digit < 12; ++digit) {
    const std::uint8_t octet = octets[kAddressOffset + digit / 2];
    const unsigned value = digit % 2 == 0 ? octet >> 4 : octet & 0x0F;
    if (value > 9) return err(NsapError::kBadDigits);
    group = group * 10 + value;
    if (digit % 3 == 2) {
      if (group > 255) return err(NsapError::kOctetOver255);
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
