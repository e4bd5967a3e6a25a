// X.225 session SPDUs: hand-checked vectors, negotiation, malformed input, round trips.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "cmip/session.h"

using namespace npac::cmip;
using namespace npac::cmip::session;

namespace {
using V = std::vector<uint8_t>;
EncodeBuffer withData(const V& ud) {
  EncodeBuffer b;
  b.append(ud);
  return b;
}
Connect sampleConnect() {
  Connect c;
  c.calling_selector = {0x00, 0x01};
  c.called_selector = {0x00, 0x01};
  return c;
}
}  // namespace

TEST_CASE("CN carries the accept item, duplex, selectors and user data (X.225 8.3.1)", "[session]") {
  EncodeBuffer b = withData({0xAA, 0xBB});
  REQUIRE(prependConnect(b, sampleConnect()).isOk());
  CHECK(b.toVector() == V{0x0D, 0x18, 0x05, 0x06, 0x13, 0x01, 0x00, 0x16, 0x01, 0x02, 0x14, 0x02, 0x00, 0x02,
                          0x33, 0x02, 0x00, 0x01, 0x34, 0x02, 0x00, 0x01, 0xC1, 0x02, 0xAA, 0xBB});
  auto s = decode(b.view());
  REQUIRE(s.isOk());
  CHECK(s->type == SpduType::kConnect);
  CHECK(s->connect == sampleConnect());
  CHECK(V(s->user_data.begin(), s->user_data.end()) == V{0xAA, 0xBB});
}

TEST_CASE("CN user data over 512 octets goes in Extended User Data with a 3-octet length", "[session]") {
  V ud(600, 0x5A);
  EncodeBuffer b = withData(ud);
  REQUIRE(prependConnect(b, sampleConnect()).isOk());
  const V v = b.toVector();
  CHECK(V(v.begin(), v.begin() + 4) == V{0x0D, 0xFF, 0x02, 0x70});  // 20 + 4 + 600 = 624
  CHECK(V(v.begin() + 24, v.begin() + 28) == V{0xC2, 0xFF, 0x02, 0x58});
  auto s = decode(b.view());
  REQUIRE(s.isOk());
  CHECK(s->user_data.size() == 600);
  EncodeBuffer too_big = withData(V(kMaxExtendedUserData + 1));
  CHECK(prependConnect(too_big, sampleConnect()).code() == ErrorCode::kSessionBadParameter);
}

TEST_CASE("AC, RF, FN, DN, AB and AA encode to hand-checked bytes", "[session]") {
  EncodeBuffer ac = withData({0x01});
  REQUIRE(prependAccept(ac, sampleConnect()).isOk());
  CHECK(ac.toVector() == V{0x0E, 0x17, 0x05, 0x06, 0x13, 0x01, 0x00, 0x16, 0x01, 0x02, 0x14, 0x02, 0x00, 0x02,
                           0x33, 0x02, 0x00, 0x01, 0x34, 0x02, 0x00, 0x01, 0xC1, 0x01, 0x01});
  EncodeBuffer rf = withData({0x31, 0x00});
  REQUIRE(prependRefuse(rf, Refuse{}).isOk());
  CHECK(rf.toVector() == V{0x0C, 0x0F, 0x11, 0x01, 0x01, 0x14, 0x02, 0x00, 0x02, 0x16, 0x01, 0x02, 0x32, 0x03, 0x02, 0x31, 0x00});
  EncodeBuffer fn = withData({0x62, 0x00});
  prependFinish(fn);
  CHECK(fn.toVector() == V{0x09, 0x07, 0x11, 0x01, 0x01, 0xC1, 0x02, 0x62, 0x00});
  EncodeBuffer dn = withData({0x63, 0x00});
  prependDisconnect(dn);
  CHECK(dn.toVector() == V{0x0A, 0x04, 0xC1, 0x02, 0x63, 0x00});
  EncodeBuffer ab = withData({0x64, 0x00});
  prependAbort(ab);
  CHECK(ab.toVector() == V{0x19, 0x07, 0x11, 0x01, 0x03, 0xC1, 0x02, 0x64, 0x00});
  EncodeBuffer aa;
  prependAbortAccept(aa);
  CHECK(aa.toVector() == V{0x1A, 0x00});
}

TEST_CASE("Each SPDU type decodes back to its type and user data", "[session]") {
  struct Case {
    V bytes;
    SpduType type;
    V user;
  };
  const Case cases[] = {
      {{0x0C, 0x0F, 0x11, 0x01, 0x01, 0x14, 0x02, 0x00, 0x02, 0x16, 0x01, 0x02, 0x32, 0x03, 0x02, 0x31, 0x00}, SpduType::kRefuse, {0x31, 0x00}},
      {{0x09, 0x07, 0x11, 0x01, 0x01, 0xC1, 0x02, 0x62, 0x00}, SpduType::kFinish, {0x62, 0x00}},
      {{0x0A, 0x04, 0xC1, 0x02, 0x63, 0x00}, SpduType::kDisconnect, {0x63, 0x00}},
      {{0x19, 0x07, 0x11, 0x01, 0x03, 0xC1, 0x02, 0x64, 0x00}, SpduType::kAbort, {0x64, 0x00}},
      {{0x1A, 0x00}, SpduType::kAbortAccept, {}},
      {{0x01, 0x00, 0x01, 0x00, 0x61, 0x02, 0x05, 0x00}, SpduType::kDataTransfer, {0x61, 0x02, 0x05, 0x00}},
  };
  for (const Case& c : cases) {
    auto s = decode(c.bytes);
    REQUIRE(s.isOk());
    CHECK(s->type == c.type);
    CHECK(V(s->user_data.begin(), s->user_data.end()) == c.user);
  }
  auto rf = decode(cases[0].bytes);
  CHECK(rf->refuse.reason == kRefuseByUserWithData);
  auto ab = decode(cases[3].bytes);
  CHECK(ab->transport_disconnect == (kReleaseTransport | kUserAbort));
}

TEST_CASE("Data goes as GT followed by DT, prepended in front of the user information", "[session]") {
  EncodeBuffer b = withData({0x61, 0x00});
  prependData(b);
  CHECK(b.toVector() == V{0x01, 0x00, 0x01, 0x00, 0x61, 0x00});
}

TEST_CASE("A CN without version 2 is refused with reason 132", "[session]") {
  Connect cn = sampleConnect();
  cn.version = kVersion1;
  ConnectDecision d = respondToConnect(cn);
  CHECK_FALSE(d.accepted);
  CHECK(d.refuse_reason == kRefuseVersionNotSupported);
  CHECK(d.reason.code() == ErrorCode::kSessionUnsupportedVersion);
  cn.version = kVersion1 | kVersion2;
  cn.user_requirements = kHalfDuplex;
  CHECK(respondToConnect(cn).reason.code() == ErrorCode::kSessionBadParameter);
  cn.user_requirements = kHalfDuplex | kDuplex | 0x0040;
  d = respondToConnect(cn);
  REQUIRE(d.accepted);
  CHECK(d.accept.user_requirements == kDuplex);
  CHECK(d.accept.version == kVersion2);
}

TEST_CASE("An unknown SPDU identifier yields kSessionUnknownSpdu", "[session]") {
  CHECK(decode(V{0x07, 0x00}).status().code() == ErrorCode::kSessionUnknownSpdu);  // minor sync
  CHECK(decode(V{0x2D, 0x00}).status().code() == ErrorCode::kSessionUnknownSpdu);
}

TEST_CASE("Malformed SPDUs yield specific session errors", "[session]") {
  CHECK(decode(V{}).status().code() == ErrorCode::kSessionTruncated);
  CHECK(decode(V{0x0D}).status().code() == ErrorCode::kSessionTruncated);
  CHECK(decode(V{0x0D, 0x05, 0x14}).status().code() == ErrorCode::kSessionTruncated);
  CHECK(decode(V{0x0D, 0xFF, 0x00}).status().code() == ErrorCode::kSessionTruncated);
  CHECK(decode(V{0x0D, 0x03, 0x14, 0x05, 0x00}).status().code() == ErrorCode::kSessionBadParameter);
  CHECK(decode(V{0x0D, 0x03, 0x14, 0x01, 0x00}).status().code() == ErrorCode::kSessionBadParameter);
  CHECK(decode(V{0x01, 0x00, 0x61, 0x00}).status().code() == ErrorCode::kSessionUnexpectedSpdu);
  CHECK(decode(V{0x01, 0x00}).status().code() == ErrorCode::kSessionUnexpectedSpdu);
  CHECK(decode(V{0x0C, 0x03, 0x11, 0x01, 0x01}).status().code() == ErrorCode::kSessionMissingParameter);
  CHECK(decode(V{0x1A, 0x00, 0x00}).status().code() == ErrorCode::kSessionUnexpectedSpdu);
  V long_ssel{0x0D, 0x13, 0x33, 0x11};
  long_ssel.resize(long_ssel.size() + 17, 0x01);
  CHECK(decode(long_ssel).status().code() == ErrorCode::kSessionBadParameter);
}

TEST_CASE("Random CN and AC round-trip canonically", "[session][property]") {
  std::mt19937 rng(8327);
  for (int i = 0; i < 500; ++i) {
    Connect c;
    c.version = static_cast<uint8_t>(1 + rng() % 3);
    c.user_requirements = static_cast<uint16_t>(rng());
    c.calling_selector.resize(rng() % 17);
    c.called_selector.resize(rng() % 17);
    for (auto& b : c.calling_selector) b = static_cast<uint8_t>(rng());
    for (auto& b : c.called_selector) b = static_cast<uint8_t>(rng());
    V ud(rng() % 2 ? rng() % 300 : rng() % 3000);
    for (auto& b : ud) b = static_cast<uint8_t>(rng());
    const bool cn = rng() % 2;
    if (cn && ud.size() > kMaxUserData) c.version |= kVersion2;
    EncodeBuffer b = withData(ud);
    REQUIRE((cn ? prependConnect(b, c) : prependAccept(b, c)).isOk());
    auto s = decode(b.view());
    REQUIRE(s.isOk());
    CHECK(s->type == (cn ? SpduType::kConnect : SpduType::kAccept));
    CHECK(s->connect == c);
    CHECK(V(s->user_data.begin(), s->user_data.end()) == ud);
    EncodeBuffer again = withData(V(s->user_data.begin(), s->user_data.end()));
    REQUIRE((cn ? prependConnect(again, s->connect) : prependAccept(again, s->connect)).isOk());
    CHECK(again.toVector() == b.toVector());
  }
}
