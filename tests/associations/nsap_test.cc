// Nsap: RFC 1277 Internet NSAP of a peer's IPv4 address, 12 octets (NANC 316).
#include "associations/nsap.h"

#include <catch2/catch.hpp>

using namespace npac::associations;
using npac::StatusCode;
using npac::StatusLayer;

TEST_CASE("127.0.0.2 encodes as the RFC 1277 Internet NSAP 540072872203127000000002") {
  auto nsap = Nsap::fromAddressString("127.0.0.2");
  REQUIRE(nsap.isOk());
  CHECK(nsap.value().toHex() == "540072872203127000000002");
  const Nsap::Octets expected = {0x54, 0x00, 0x72, 0x87, 0x22, 0x03,
                                 0x12, 0x70, 0x00, 0x00, 0x00, 0x02};
  CHECK(nsap.value().octets() == expected);
}

TEST_CASE("127.0.0.3 encodes as 540072872203127000000003 and differs from 127.0.0.2") {
  auto three = Nsap::fromAddressString("127.0.0.3");
  auto two = Nsap::fromAddressString("127.0.0.2");
  REQUIRE(three.isOk());
  REQUIRE(two.isOk());
  CHECK(three.value().toHex() == "540072872203127000000003");
  CHECK(three.value() != two.value());
}

TEST_CASE("Every address octet takes three decimal digits") {
  CHECK(Nsap::fromIpv4({10, 0, 0, 6}).toHex() == "540072872203010000000006");
  CHECK(Nsap::fromIpv4({255, 255, 255, 255}).toHex() == "540072872203255255255255");
  CHECK(Nsap::fromIpv4({0, 0, 0, 0}).toHex() == "540072872203000000000000");
  CHECK(Nsap::fromIpv4({192, 168, 1, 100}).toHex() == "540072872203192168001100");
}

TEST_CASE("Hex parses back to the same NSAP and address, in either case") {
  auto parsed = Nsap::fromHex("540072872203127000000002");
  REQUIRE(parsed.isOk());
  CHECK(parsed.value().toAddressString() == "127.0.0.2");
  CHECK(parsed.value().ipv4() == Ipv4{127, 0, 0, 2});
  auto upper = Nsap::fromHex("540072872203192168001100");
  REQUIRE(upper.isOk());
  CHECK(upper.value().toAddressString() == "192.168.1.100");
  for (unsigned a : {0u, 1u, 9u, 10u, 99u, 100u, 127u, 200u, 255u}) {
    const Nsap nsap = Nsap::fromIpv4({static_cast<std::uint8_t>(a), 7, 42, 255});
    auto again = Nsap::fromHex(nsap.toHex());
    REQUIRE(again.isOk());
    CHECK(again.value() == nsap);
  }
}

TEST_CASE("An IPv4-mapped IPv6 address gives the IPv4 NSAP") {
  auto mapped = Nsap::fromAddressString("::ffff:127.0.0.3");
  REQUIRE(mapped.isOk());
  CHECK(mapped.value().toHex() == "540072872203127000000003");
  CHECK(Nsap::fromAddressString("::FFFF:127.0.0.3").isOk());
}

TEST_CASE("A real IPv6 address is refused with its own error") {
  auto v6 = Nsap::fromAddressString("::1");
  REQUIRE_FALSE(v6.isOk());
  CHECK(v6.status().code() == StatusCode::kNsapIpv6);
}

TEST_CASE("Malformed addresses are refused as bad addresses") {
  for (const char* bad : {"", "127.0.0", "127.0.0.256", "127.0.0.2.", "127..0.2", "a.b.c.d",
                          "127.0.0.2x", "1270.0.0.2", "-1.0.0.2", " 127.0.0.2"}) {
    INFO(bad);
    auto nsap = Nsap::fromAddressString(bad);
    REQUIRE_FALSE(nsap.isOk());
    CHECK(nsap.status().code() == StatusCode::kNsapBadAddress);
  }
}

TEST_CASE("Malformed hex NSAPs are refused with a specific error") {
  CHECK(Nsap::fromHex("5400728722031270000000").status().code() == StatusCode::kNsapBadHex);    // 11 octets
  CHECK(Nsap::fromHex("54007287220312700000000200").status().code() == StatusCode::kNsapBadHex);  // 13
  CHECK(Nsap::fromHex("54007287220312700000000g").status().code() == StatusCode::kNsapBadHex);
  CHECK(Nsap::fromHex("470005800000000000000001").status().code() == StatusCode::kNsapNotInternet);  // GOSIP
  CHECK(Nsap::fromHex("540072872206127000000002").status().code() == StatusCode::kNsapNotInternet);  // IXI
  CHECK(Nsap::fromHex("5400728723031270000000a2").status().code() == StatusCode::kNsapNotInternet);
  CHECK(Nsap::fromHex("5400728722031270000000a2").status().code() == StatusCode::kNsapBadDigits);
  CHECK(Nsap::fromHex("540072872203256000000002").status().code() == StatusCode::kNsapOctetOver255);
}

TEST_CASE("Every error has an operator sentence") {
  for (auto e : {StatusCode::kNsapBadHex, StatusCode::kNsapNotInternet, StatusCode::kNsapBadDigits,
                 StatusCode::kNsapOctetOver255, StatusCode::kNsapBadAddress, StatusCode::kNsapIpv6}) {
    CHECK(std::string(describe(e)) != "unknown");
    CHECK(layerOf(e) == StatusLayer::kAssociation);
  }
}
