// Nsap: the network address of an association's peer, as the 12-octet NPAC NSAP.
//
// The NPAC data model holds an NSAP of 12 octets (NANC 316 changed it from 20). An
// association is identified by where it comes from, so npacd derives the NSAP from the
// peer's IPv4 address with the "Internet" NSAP of RFC 1277 §5 (the encoding RFC 1278
// writes as TELEX+00728722+RFC-1006+03+a.b.c.d):
//
//   octet  0      AFI 0x54        F.69 (telex) IDI, decimal DSP, leading zeros significant
//   octets 1..4   IDI 00 72 87 22 the telex number 00728722, BCD
//   octet  5      DSP prefix 03   RFC 1277 well-known network "DARPA/NSF Internet" (RFC 1006)
//   octets 6..11  the IPv4 address as 12 BCD digits, each octet three digits (127 → 1 2 7)
//
// 127.0.0.2 is therefore 540072872203127000000002. RFC 1277 allows an optional TCP port
// (5 digits) and transport set after the address; the NPAC NSAP is exactly 12 octets,
// which is precisely the address without them, so npacd never includes a port: two
// associations from the same host share an NSAP (the SRR rules are about hosts, NANC 353
// "different NSAPs"). IPv6 peers cannot be expressed in this encoding; IPv4-mapped IPv6
// addresses (::ffff:a.b.c.d, as a dual-stack acceptor reports them) are accepted.
//
// Threading: a plain value type.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace npac::associations {

inline constexpr std::size_t kNsapOctets = 12;                    // NANC 316
inline constexpr std::uint8_t kRfc1277Afi = 0x54;                 // RFC 1277 §5
inline constexpr std::array<std::uint8_t, 4> kRfc1277Idi = {0x00, 0x72, 0x87, 0x22};
inline constexpr std::uint8_t kRfc1277InternetPrefix = 0x03;      // RFC 1277 §5.1

using Ipv4 = std::array<std::uint8_t, 4>;

// A refused NSAP is a Status of the association group (common/status.h): kNsapBadHex (not
// 24 hex digits), kNsapNotInternet (12 octets, but not AFI 54 / IDI 00728722 / prefix 03),
// kNsapBadDigits (an address nibble that is not a decimal digit), kNsapOctetOver255 (a
// three-digit group above 255), kNsapBadAddress (not a dotted-quad IPv4 or ::ffff: mapped
// address), kNsapIpv6 (a real IPv6 address: no 12-octet encoding exists).

class Nsap {
 public:
  using Octets = std::array<std::uint8_t, kNsapOctets>;

  static Nsap fromIpv4(const Ipv4& address);
  // "127.0.0.2" or "::ffff:127.0.0.2".
  static Result<Nsap> fromAddressString(std::string_view address);
  // 24 hex digits, upper or lower case (the form the admin API and the database use).
  static Result<Nsap> fromHex(std::string_view hex);
  // Any 12 octets that carry the RFC 1277 Internet form.
  static Result<Nsap> fromOctets(const Octets& octets);

  const Octets& octets() const { return octets_; }
  Ipv4 ipv4() const;
  std::string toHex() const;         // lower case, no separators
  std::string toAddressString() const;  // dotted quad

  auto operator<=>(const Nsap&) const = default;

 private:
  explicit Nsap(const Octets& octets) : octets_(octets) {}
  Octets octets_{};
};

}  // namespace npac::associations
