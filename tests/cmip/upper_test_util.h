// Helpers shared by the ACSE / ROSE / CMIP / NPAC bind tests: hex vectors and a
// deterministic generator of random values for the round-trip properties.
#pragma once

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cmip/ber.h"

namespace npac::cmip::testing {

// "60 17 80 02" → bytes; whitespace ignored. Test-only: throws on a bad digit.
inline std::vector<uint8_t> hex(std::string_view text) {
  std::vector<uint8_t> out;
  int hi = -1;
  for (char c : text) {
    int v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else if (c == ' ' || c == '\n' || c == '\t') continue;
    else throw std::invalid_argument("bad hex digit");
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<uint8_t>(hi << 4 | v));
      hi = -1;
    }
  }
  if (hi >= 0) throw std::invalid_argument("odd number of hex digits");
  return out;
}

// Random building blocks for the round-trip properties (fixed seeds in the tests).
class RandomValues {
 public:
  explicit RandomValues(uint32_t seed) : rng_(seed) {}
  std::mt19937& rng() { return rng_; }
  int64_t range(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool coin() { return range(0, 1) == 1; }
  Oid oid() {
    std::vector<uint64_t> arcs{static_cast<uint64_t>(range(0, 2)),
                               static_cast<uint64_t>(range(0, 39))};
    int n = static_cast<int>(range(1, 8));
    for (int i = 0; i < n; ++i) arcs.push_back(static_cast<uint64_t>(range(0, 1 << 20)));
    return *Oid::fromArcs(arcs);
  }
  std::string printable(size_t n) {
    static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 '()+,-./:=?";
    std::string s;
    for (size_t i = 0; i < n; ++i) s.push_back(kChars[range(0, sizeof(kChars) - 2)]);
    return s;
  }
  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(range(0, 255));
    return v;
  }
  // A well-formed opaque value: OCTET STRING, INTEGER, NULL or a small SEQUENCE.
  OpaqueBer opaque() {
    EncodeBuffer buf(0);
    BerWriter w(buf);
    switch (range(0, 3)) {
      case 0: w.writeOctetString(bytes(static_cast<size_t>(range(0, 300)))); break;
      case 1: w.writeInteger(range(INT32_MIN, INT32_MAX)); break;
      case 2: w.writeNull(); break;
      default: {
        size_t m = w.beginConstructed(kTagSequence);
        w.writeOid(oid());
        w.writeString(printable(static_cast<size_t>(range(0, 20))), kTagPrintableString);
        w.endConstructed(m);
      }
    }
    return OpaqueBer{buf.toVector()};
  }
  GeneralizedTime time() {
    return GeneralizedTime::fromUnixMillis(range(0, 4102444800LL) * 1000);
  }

 private:
  std::mt19937 rng_;
};

}  // namespace npac::cmip::testing
