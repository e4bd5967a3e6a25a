// X.226 presentation PPDUs: hand-checked bytes, context negotiation, malformed input.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "cmip/oids.h"
#include "cmip/presentation.h"

using namespace npac::cmip;
using namespace npac::cmip::presentation;

namespace {
using V = std::vector<uint8_t>;
const V kApdu{0x60, 0x00};  // stands in for an AARQ

ConnectRequest sampleCp() {
  ConnectRequest cp;
  cp.calling_selector = {0, 0, 0, 1};
  cp.called_selector = {0, 0, 0, 1};
  cp.contexts = {{1, oids::kAcseAbstractSyntax, {oids::kBerTransferSyntax}},
                 {3, oids::kCmipAbstractSyntax, {oids::kBerTransferSyntax}}};
  return cp;
}

EncodeBuffer withApdu(const V& apdu = kApdu) {
  EncodeBuffer b;
  b.append(apdu);
  return b;
}
}  // namespace

TEST_CASE("CP is a SET of mode-selector and normal-mode parameters (X.226 8.2)", "[presentation]") {
  EncodeBuffer b = withApdu();
  prependConnectRequest(b, sampleCp(), 1);
  const V expected{0x31, 0x46, 0xA0, 0x03, 0x80, 0x01, 0x01, 0xA2, 0x3F, 0x80, 0x02, 0x07, 0x80,
                   0x81, 0x04, 0x00, 0x00, 0x00, 0x01, 0x82, 0x04, 0x00, 0x00, 0x00, 0x01,
                   0xA4, 0x22,
                   0x30, 0x0F, 0x02, 0x01, 0x01, 0x06, 0x04, 0x52, 0x01, 0x00, 0x01, 0x30, 0x04, 0x06, 0x02, 0x51, 0x01,
                   0x30, 0x0F, 0x02, 0x01, 0x03, 0x06, 0x04, 0x59, 0x01, 0x01, 0x04, 0x30, 0x04, 0x06, 0x02, 0x51, 0x01,
                   0x61, 0x09, 0x30, 0x07, 0x02, 0x01, 0x01, 0xA0, 0x02, 0x60, 0x00};
  CHECK(b.toVector() == expected);
  auto cp = decodeConnectRequest(b.view());
  REQUIRE(cp.isOk());
  CHECK(cp->contexts == sampleCp().contexts);
  CHECK(cp->calling_selector == V{0, 0, 0, 1});
  REQUIRE(cp->user_data.size() == 1);
  CHECK(cp->user_data[0].context_id == 1);
  CHECK(V(cp->user_data[0].value.begin(), cp->user_data[0].value.end()) == kApdu);
}

TEST_CASE("ACSE and CMIP over BER are accepted and other syntaxes refused per context", "[presentation]") {
  ConnectRequest cp = sampleCp();
  cp.contexts.push_back({5, Oid{1, 0, 9506, 2, 1}, {oids::kBerTransferSyntax}});  // MMS
  cp.contexts.push_back({7, oids::kCmipAbstractSyntax, {Oid{2, 1, 2, 1}}});       // PER only
  cp.user_data = {Pdv{1, std::nullopt, kApdu}};
  ConnectDecision d = respondToConnect(cp);
  REQUIRE(d.accepted);
  REQUIRE(d.accept.results.size() == 4);
  CHECK(d.accept.results[0] == ContextResult{kAcceptance, oids::kBerTransferSyntax, std::nullopt});
  CHECK(d.accept.results[1] == ContextResult{kAcceptance, oids::kBerTransferSyntax, std::nullopt});
  CHECK(d.accept.results[2] == ContextResult{kProviderRejection, std::nullopt, kAbstractSyntaxNotSupported});
  CHECK(d.accept.results[3] == ContextResult{kProviderRejection, std::nullopt, kTransferSyntaxesNotSupported});
  CHECK(d.contexts.size() == 2);
  CHECK(d.contexts.abstractSyntaxOf(3) != nullptr);
  CHECK(d.contexts.abstractSyntaxOf(5) == nullptr);

  EncodeBuffer b = withApdu();
  prependConnectAccept(b, d.accept, 1);
  auto cpa = decodeConnectAccept(b.view());
  REQUIRE(cpa.isOk());
  CHECK(cpa->results == d.accept.results);
  CHECK(cpa->responding_selector == V{0, 0, 0, 1});
  auto ctx = contextsFromAccept(cp, *cpa);
  REQUIRE(ctx.isOk());
  CHECK(ctx->idFor(oids::kCmipAbstractSyntax) == 3);
}

TEST_CASE("CPA encodes the result list with transfer syntax names", "[presentation]") {
  ConnectAccept cpa;
  cpa.results = {{kAcceptance, oids::kBerTransferSyntax, std::nullopt}, {kProviderRejection, std::nullopt, kAbstractSyntaxNotSupported}};
  EncodeBuffer b;
  prependConnectAccept(b, cpa, 1);
  CHECK(b.toVector() == V{0x31, 0x1E, 0xA0, 0x03, 0x80, 0x01, 0x01, 0xA2, 0x17, 0x80, 0x02, 0x07, 0x80, 0xA5, 0x11,
                          0x30, 0x07, 0x80, 0x01, 0x00, 0x81, 0x02, 0x51, 0x01, 0x30, 0x06, 0x80, 0x01, 0x02, 0x82, 0x01, 0x01});
}

TEST_CASE("A CP without an acceptable ACSE context is refused with a CPR", "[presentation]") {
  ConnectRequest cp = sampleCp();
  cp.contexts[0].transfer_syntaxes = {Oid{2, 1, 2, 1}};
  ConnectDecision d = respondToConnect(cp);
  CHECK_FALSE(d.accepted);
  CHECK(d.reason.code() == ErrorCode::kPresentationNoAcceptableContext);
  EncodeBuffer b = withApdu();
  prependConnectReject(b, d.reject, 1);
  auto cpr = decodeConnectReject(b.view());
  REQUIRE(cpr.isOk());
  CHECK(cpr->provider_reason == kCprLocalLimitExceeded);
  CHECK(cpr->results == d.reject.results);
  REQUIRE(cpr->user_data.size() == 1);
}

TEST_CASE("A CP in X.410 mode or without version 1 is refused", "[presentation]") {
  ConnectRequest cp = sampleCp();
  cp.mode = 0;
  CHECK(respondToConnect(cp).reason.code() == ErrorCode::kPresentationUnsupportedMode);
  cp.mode = kNormalMode;
  cp.version1 = false;
  ConnectDecision d = respondToConnect(cp);
  CHECK_FALSE(d.accepted);
  CHECK(d.reject.provider_reason == kCprProtocolVersionNotSupported);
}

TEST_CASE("Data on a presentation context that was not negotiated yields kPresentationContextNotNegotiated", "[presentation]") {
  DefinedContexts ctx;
  ctx.add(1, oids::kAcseAbstractSyntax);
  ctx.add(3, oids::kCmipAbstractSyntax);
  EncodeBuffer b = withApdu({0xA1, 0x03, 0x02, 0x01, 0x07});
  prependUserData(b, 5);
  CHECK(b.toVector() == V{0x61, 0x0C, 0x30, 0x0A, 0x02, 0x01, 0x05, 0xA0, 0x05, 0xA1, 0x03, 0x02, 0x01, 0x07});
  auto ud = decodeUserData(b.view());
  REQUIRE(ud.isOk());
  CHECK(ctx.check(*ud).code() == ErrorCode::kPresentationContextNotNegotiated);
  ConnectRequest cp = sampleCp();
  cp.user_data = {Pdv{9, std::nullopt, kApdu}};
  CHECK(respondToConnect(cp).reason.code() == ErrorCode::kPresentationContextNotNegotiated);
}

TEST_CASE("ARU carries user data and ARP a provider reason", "[presentation]") {
  EncodeBuffer aru = withApdu({0x64, 0x03, 0x80, 0x01, 0x01});
  prependUserAbort(aru, 1);
  CHECK(aru.toVector() == V{0xA0, 0x0E, 0x61, 0x0C, 0x30, 0x0A, 0x02, 0x01, 0x01, 0xA0, 0x05, 0x64, 0x03, 0x80, 0x01, 0x01});
  auto a = decodeAbort(aru.view());
  REQUIRE(a.isOk());
  CHECK(a->user_abort);
  REQUIRE(a->user_data.size() == 1);
  EncodeBuffer arp;
  encodeProviderAbort(arp, kAbortUnexpectedPpdu);
  CHECK(arp.toVector() == V{0x30, 0x03, 0x80, 0x01, 0x02});
  auto p = decodeAbort(arp.view());
  REQUIRE(p.isOk());
  CHECK_FALSE(p->user_abort);
  CHECK(p->provider_reason == kAbortUnexpectedPpdu);
}

TEST_CASE("Malformed PPDUs yield kPresentationBadPpdu with no exception", "[presentation]") {
  CHECK(decodeUserData(V{0x60, 0x00}).status().code() == ErrorCode::kPresentationBadPpdu);
  CHECK(decodeUserData(V{0x40, 0x01, 0x00}).status().code() == ErrorCode::kPresentationBadPpdu);  // simply-encoded
  CHECK(decodeUserData(V{0x61, 0x00}).status().code() == ErrorCode::kPresentationBadPpdu);
  CHECK(decodeUserData(V{0x61, 0x05, 0x30, 0x03, 0x02, 0x01, 0x01}).status().code() == ErrorCode::kPresentationBadPpdu);
  CHECK(decodeUserData(V{0x61, 0x07, 0x30, 0x05, 0x02, 0x01, 0x01, 0x82, 0x00}).status().code() == ErrorCode::kPresentationBadPpdu);
  CHECK(decodeUserData(V{0x61, 0x09, 0x30}).status().code() == ErrorCode::kPresentationBadPpdu);
  CHECK(decodeConnectRequest(V{0x30, 0x00}).status().code() == ErrorCode::kPresentationBadPpdu);
  CHECK(decodeConnectRequest(V{0x31, 0x00}).status().code() == ErrorCode::kPresentationBadPpdu);
  CHECK(decodeConnectAccept(V{0x31, 0x05, 0xA0, 0x03, 0x80, 0x01, 0x00}).status().code() == ErrorCode::kPresentationUnsupportedMode);
  CHECK(decodeAbort(V{0x31, 0x00}).status().code() == ErrorCode::kPresentationBadPpdu);
  // Duplicate context identifiers.
  ConnectRequest cp = sampleCp();
  cp.contexts[1].id = 1;
  EncodeBuffer b;
  prependConnectRequest(b, cp, 1);
  CHECK(decodeConnectRequest(b.view()).status().code() == ErrorCode::kPresentationBadPpdu);
  // Nesting bomb inside the user data stops at the depth limit.
  V bomb;
  for (int i = 0; i < 100; ++i) bomb.insert(bomb.end(), {0x30, 0x80});
  CHECK(decodeUserData(bomb).status().code() == ErrorCode::kBerDepthExceeded);
}

TEST_CASE("Random CPs round-trip and re-encode to the same bytes", "[presentation][property]") {
  std::mt19937 rng(8823);
  for (int i = 0; i < 300; ++i) {
    ConnectRequest cp;
    cp.calling_selector.resize(rng() % 5);
    cp.called_selector.resize(rng() % 5);
    for (auto& b : cp.calling_selector) b = static_cast<uint8_t>(rng());
    for (size_t k = 1 + rng() % 4; k > 0; --k) {
      ContextProposal p{static_cast<int64_t>(2 * cp.contexts.size() + 1), Oid{2, rng() % 40, rng() % 1000}, {}};
      for (size_t t = 1 + rng() % 3; t > 0; --t) p.transfer_syntaxes.push_back(Oid{2, 1, rng() % 3});
      cp.contexts.push_back(p);
    }
    V apdu{0x30, static_cast<uint8_t>(rng() % 100)};
    apdu.resize(2 + apdu[1], 0x42);
    EncodeBuffer b = withApdu(apdu);
    prependConnectRequest(b, cp, 1);
    auto d = decodeConnectRequest(b.view());
    REQUIRE(d.isOk());
    CHECK(d->contexts == cp.contexts);
    CHECK(d->calling_selector == cp.calling_selector);
    REQUIRE(d->user_data.size() == 1);
    EncodeBuffer again = withApdu(V(d->user_data[0].value.begin(), d->user_data[0].value.end()));
    prependConnectRequest(again, *d, d->user_data[0].context_id);
    CHECK(again.toVector() == b.toVector());
  }
}
