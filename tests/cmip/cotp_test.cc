// X.224 class 0 TPDUs: known-answer vectors, negotiation, segmentation, malformed input.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "cmip/cotp.h"
#include "cmip/tpkt.h"

using namespace npac::cmip;
using namespace npac::cmip::cotp;

namespace {
std::vector<uint8_t> vec(const EncodeBuffer& b) { return b.toVector(); }
cotp::Connect sampleCr() {
  Connect cr;
  cr.src_ref = 0x0001;
  cr.calling_tsap = {0x00, 0x01};
  cr.called_tsap = {0x00, 0x01};
  cr.tpdu_size_code = 0x0B;
  return cr;
}
}  // namespace

TEST_CASE("CR encodes its fixed part then TSAPs and TPDU size (X.224 13.3)", "[cotp]") {
  EncodeBuffer b;
  encodeConnect(TpduCode::kConnectionRequest, sampleCr(), b);
  REQUIRE(tpkt::prependHeader(b).isOk());
  CHECK(vec(b) == std::vector<uint8_t>{0x03, 0x00, 0x00, 0x16, 0x11, 0xE0, 0x00, 0x00, 0x00, 0x01, 0x00, 0xC1, 0x02,
                                       0x00, 0x01, 0xC2, 0x02, 0x00, 0x01, 0xC0, 0x01, 0x0B});
  auto t = decode(tpkt::parseFrame(b.view()).value());
  REQUIRE(t.isOk());
  CHECK(t->code == TpduCode::kConnectionRequest);
  CHECK(t->connect == sampleCr());
}

TEST_CASE("A class 0 CR is answered by a CC with the smaller TPDU size", "[cotp]") {
  Connect cr = sampleCr();
  cr.tpdu_size_code = 0x0D;  // 8192 proposed
  ConnectResponse r = respondToConnect(cr, 0x4242, 1024);
  REQUIRE(r.accepted);
  CHECK(r.tpdu_size == 1024);
  EncodeBuffer b;
  encodeConnect(TpduCode::kConnectionConfirm, r.confirm, b);
  CHECK(vec(b) == std::vector<uint8_t>{0x11, 0xD0, 0x00, 0x01, 0x42, 0x42, 0x00, 0xC1, 0x02, 0x00, 0x01, 0xC2, 0x02,
                                       0x00, 0x01, 0xC0, 0x01, 0x0A});
  CHECK(*confirmedTpduSize(cr, r.confirm) == 1024);
}

TEST_CASE("A CR without a TPDU size settles on 128 octets", "[cotp]") {
  Connect cr = sampleCr();
  cr.tpdu_size_code.reset();
  ConnectResponse r = respondToConnect(cr, 1);
  REQUIRE(r.accepted);
  CHECK(r.tpdu_size == 128);
}

TEST_CASE("A CR proposing class 2 without class 0 is refused with DR negotiation failed", "[cotp]") {
  Connect cr = sampleCr();
  cr.protocol_class = 2;
  ConnectResponse r = respondToConnect(cr, 7);
  CHECK_FALSE(r.accepted);
  CHECK(r.reason.code() == ErrorCode::kCotpClassNotSupported);
  EncodeBuffer b;
  encodeDisconnect(r.refusal, b);
  CHECK(vec(b) == std::vector<uint8_t>{0x06, 0x80, 0x00, 0x01, 0x00, 0x07, 0x82});
  cr.alternative_classes = {0};
  CHECK(respondToConnect(cr, 7).accepted);
}

TEST_CASE("A CC selecting a class other than 0 is refused by the initiator", "[cotp]") {
  Connect cc;
  cc.protocol_class = 4;
  CHECK(confirmedTpduSize(sampleCr(), cc).status().code() == ErrorCode::kCotpClassNotSupported);
  cc.protocol_class = 0;
  cc.tpdu_size_code = 0x0C;
  CHECK(confirmedTpduSize(sampleCr(), cc).status().code() == ErrorCode::kCotpBadTpduSize);
}

TEST_CASE("DR, DT and ER decode to their fields", "[cotp]") {
  auto dr = decode(std::vector<uint8_t>{0x06, 0x80, 0x12, 0x34, 0x56, 0x78, 0x80});
  REQUIRE(dr.isOk());
  CHECK(dr->disconnect == Disconnect{0x1234, 0x5678, kReasonNormal});
  std::vector<uint8_t> dtv{0x02, 0xF0, 0x00, 0xAA, 0xBB};
  auto dt = decode(dtv);
  REQUIRE(dt.isOk());
  CHECK_FALSE(dt->data.eot);
  CHECK(dt->data.user_data.size() == 2);
  EncodeBuffer b;
  encodeError(Error{0x0102, kCauseInvalidTpduType, {0x02, 0x10}}, b);
  CHECK(vec(b) == std::vector<uint8_t>{0x08, 0x70, 0x01, 0x02, 0x02, 0xC1, 0x02, 0x02, 0x10});
  auto er = decode(b.view());
  REQUIRE(er.isOk());
  CHECK(er->error == Error{0x0102, kCauseInvalidTpduType, {0x02, 0x10}});
}

TEST_CASE("A user SDU larger than the TPDU size is sent as several DT with EOT on the last", "[cotp]") {
  std::vector<uint8_t> sdu(300);
  for (size_t i = 0; i < sdu.size(); ++i) sdu[i] = static_cast<uint8_t>(i);
  EncodeBuffer b;
  b.append(sdu);
  REQUIRE(frameUserData(b, 128).isOk());
  // 125 payload octets per DT: 125 + 125 + 50; each packet 7 octets of headers.
  REQUIRE(b.size() == 300 + 3 * 7);
  const auto v = vec(b);
  CHECK(std::vector<uint8_t>(v.begin(), v.begin() + 7) == std::vector<uint8_t>{0x03, 0x00, 0x00, 0x84, 0x02, 0xF0, 0x00});
  CHECK(std::vector<uint8_t>(v.begin() + 264, v.begin() + 271) == std::vector<uint8_t>{0x03, 0x00, 0x00, 0x39, 0x02, 0xF0, 0x80});

  tpkt::Deframer d;
  d.feed(b.view());
  DtReassembler r;
  std::optional<std::vector<uint8_t>> out;
  int packets = 0;
  for (;;) {
    auto f = d.next();
    REQUIRE(f.isOk());
    if (!f->has_value()) break;
    ++packets;
    auto t = decode(tpkt::parseFrame(**f).value());
    REQUIRE(t.isOk());
    auto s = r.add(t->data);
    REQUIRE(s.isOk());
    if (s->has_value()) out.emplace((*s)->begin(), (*s)->end());
  }
  CHECK(packets == 3);
  REQUIRE(out.has_value());
  CHECK(*out == sdu);
}

TEST_CASE("Reassembly beyond the cap yields kCotpReassemblyTooLarge", "[cotp]") {
  DtReassembler r(100);
  std::vector<uint8_t> part(60);
  Data dt{false, part};
  REQUIRE(r.add(dt).isOk());
  CHECK(r.add(dt).status().code() == ErrorCode::kCotpReassemblyTooLarge);
  CHECK(r.pendingBytes() == 0);
}

TEST_CASE("Malformed TPDUs yield specific COTP errors", "[cotp]") {
  CHECK(decode(std::vector<uint8_t>{0x02}).status().code() == ErrorCode::kCotpTruncated);
  CHECK(decode(std::vector<uint8_t>{0x09, 0xF0, 0x80}).status().code() == ErrorCode::kCotpBadLengthIndicator);
  CHECK(decode(std::vector<uint8_t>{0x03, 0xF0, 0x80, 0x00}).status().code() == ErrorCode::kCotpBadLengthIndicator);
  CHECK(decode(std::vector<uint8_t>{0x04, 0x60, 0x00, 0x00, 0x00}).status().code() == ErrorCode::kCotpUnknownTpdu);
  CHECK(decode(std::vector<uint8_t>{0x06, 0xE0, 0x00, 0x00, 0x00, 0x01, 0x00, 0xAA}).status().code() == ErrorCode::kCotpBadParameter);
  CHECK(decode(std::vector<uint8_t>{0x09, 0xE0, 0x00, 0x00, 0x00, 0x01, 0x00, 0xC0, 0x01, 0x05}).status().code() == ErrorCode::kCotpBadTpduSize);
  CHECK(decode(std::vector<uint8_t>{0x08, 0xE0, 0x00, 0x00, 0x00, 0x01, 0x00, 0xC1, 0x05}).status().code() == ErrorCode::kCotpBadParameter);
  CHECK(decode(std::vector<uint8_t>{0xFF, 0xE0}).status().code() == ErrorCode::kCotpBadLengthIndicator);
}

TEST_CASE("Random CR and CC round-trip canonically", "[cotp][property]") {
  std::mt19937 rng(8073);
  for (int i = 0; i < 500; ++i) {
    Connect c;
    c.dst_ref = static_cast<uint16_t>(rng());
    c.src_ref = static_cast<uint16_t>(rng());
    if (rng() % 2) c.tpdu_size_code = static_cast<uint8_t>(7 + rng() % 7);
    c.calling_tsap.resize(rng() % 5);
    c.called_tsap.resize(rng() % 5);
    for (auto& b : c.calling_tsap) b = static_cast<uint8_t>(rng());
    for (auto& b : c.called_tsap) b = static_cast<uint8_t>(rng());
    const TpduCode code = rng() % 2 ? TpduCode::kConnectionRequest : TpduCode::kConnectionConfirm;
    EncodeBuffer b;
    encodeConnect(code, c, b);
    auto t = decode(b.view());
    REQUIRE(t.isOk());
    CHECK(t->code == code);
    CHECK(t->connect == c);
    EncodeBuffer again;
    encodeConnect(code, t->connect, again);
    CHECK(vec(again) == vec(b));
  }
}
