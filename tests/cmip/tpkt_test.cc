// TPKT (RFC 1006 §6) framing and the stream deframer.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "cmip/tpkt.h"

using namespace npac::cmip;

TEST_CASE("A TPKT header is 03 00 and the length including the header", "[tpkt]") {
  EncodeBuffer b;
  b.append(std::vector<uint8_t>{0x02, 0xF0, 0x80});
  REQUIRE(tpkt::prependHeader(b).isOk());
  CHECK(b.toVector() == std::vector<uint8_t>{0x03, 0x00, 0x00, 0x07, 0x02, 0xF0, 0x80});
  auto tpdu = tpkt::parseFrame(b.view());
  REQUIRE(tpdu.isOk());
  CHECK(tpdu->size() == 3);
}

TEST_CASE("A TPKT with version other than 3 yields kTpktBadVersion", "[tpkt]") {
  std::vector<uint8_t> v{0x02, 0x00, 0x00, 0x07, 0x02, 0xF0, 0x80};
  CHECK(tpkt::parseFrame(v).status().code() == ErrorCode::kTpktBadVersion);
  v[0] = 3;
  v[1] = 1;
  CHECK(tpkt::parseFrame(v).status().code() == ErrorCode::kTpktBadReserved);
}

TEST_CASE("A TPKT length below 7 yields kTpktLengthTooShort", "[tpkt]") {
  std::vector<uint8_t> v{0x03, 0x00, 0x00, 0x06, 0x02, 0xF0};
  CHECK(tpkt::parseFrame(v).status().code() == ErrorCode::kTpktLengthTooShort);
}

TEST_CASE("A TPKT longer than the configured maximum yields kTpktLengthTooLong", "[tpkt]") {
  std::vector<uint8_t> v{0x03, 0x00, 0x10, 0x00};
  CHECK(tpkt::parseHeader(v, 2048).status().code() == ErrorCode::kTpktLengthTooLong);
  CHECK(*tpkt::parseHeader(v) == 4096);
  EncodeBuffer huge;
  huge.appendUninitialized(tpkt::kMaxTpduLength + 1);
  CHECK(tpkt::prependHeader(huge).code() == ErrorCode::kTpktLengthTooLong);
}

TEST_CASE("A truncated TPKT or one with trailing bytes is refused", "[tpkt]") {
  CHECK(tpkt::parseFrame(std::vector<uint8_t>{0x03, 0x00}).status().code() == ErrorCode::kTpktTruncated);
  CHECK(tpkt::parseFrame(std::vector<uint8_t>{0x03, 0x00, 0x00, 0x08, 0x02, 0xF0, 0x80}).status().code() == ErrorCode::kTpktTruncated);
  CHECK(tpkt::parseFrame(std::vector<uint8_t>{0x03, 0x00, 0x00, 0x07, 0x02, 0xF0, 0x80, 0x00}).status().code() == ErrorCode::kTpktTrailingData);
}

TEST_CASE("The deframer yields whole packets from arbitrary TCP chunks", "[tpkt][property]") {
  std::mt19937 rng(1006);
  std::vector<std::vector<uint8_t>> packets;
  std::vector<uint8_t> stream;
  for (int i = 0; i < 200; ++i) {
    EncodeBuffer b;
    const size_t n = 3 + rng() % 3000;
    for (size_t k = 0; k < n; ++k) b.append(static_cast<uint8_t>(rng()));
    REQUIRE(tpkt::prependHeader(b).isOk());
    packets.push_back(b.toVector());
    stream.insert(stream.end(), packets.back().begin(), packets.back().end());
  }
  tpkt::Deframer d;
  size_t pos = 0, got = 0;
  while (pos < stream.size()) {
    const size_t n = std::min<size_t>(1 + rng() % 1500, stream.size() - pos);
    d.feed(Bytes(stream.data() + pos, n));
    pos += n;
    for (;;) {
      auto f = d.next();
      REQUIRE(f.isOk());
      if (!f->has_value()) break;
      REQUIRE(got < packets.size());
      CHECK(std::vector<uint8_t>((*f)->begin(), (*f)->end()) == packets[got]);
      ++got;
    }
  }
  CHECK(got == packets.size());
  CHECK(d.bufferedBytes() == 0);
}

TEST_CASE("The deframer keeps a bad header as a sticky error", "[tpkt]") {
  tpkt::Deframer d;
  d.feed(std::vector<uint8_t>{0x47});  // "GET ..." is not RFC 1006
  CHECK(d.next().status().code() == ErrorCode::kTpktBadVersion);
  d.feed(std::vector<uint8_t>{0x03, 0x00, 0x00, 0x07, 0x02, 0xF0, 0x80});
  CHECK(d.next().status().code() == ErrorCode::kTpktBadVersion);
}
