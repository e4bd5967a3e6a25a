// Small JSON accessors shared by npac-pdu's converters: each throws a Status of
// kBadDocument naming the field that is missing or of the wrong type (json_upper.h says
// why these converters throw; encodeFrames() turns it back into a value).
#pragma once

#include <string>
#include <vector>

#include "cmip/ber.h"
#include "npac/npac-pdu/json_upper.h"

namespace npac::pdu::json_util {

using namespace npac::cmip;

[[noreturn]] inline void fail(const std::string& what) { throw Status::badDocument(what); }

// fromHex, throwing its refusal.
inline std::vector<uint8_t> hexOrFail(const std::string& text) {
  Result<std::vector<uint8_t>> bytes = fromHex(text);
  if (!bytes.isOk()) fail(bytes.status().message());
  return std::move(bytes).value();
}

inline const Json& need(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) fail(std::string("missing field \"") + key + "\"");
  return j.at(key);
}

inline int64_t num(const Json& j, const char* key) {
  const Json& v = need(j, key);
  if (!v.is_number_integer()) fail(std::string("field \"") + key + "\" must be an integer");
  return v.get<int64_t>();
}

inline std::string str(const Json& j, const char* key) {
  const Json& v = need(j, key);
  if (!v.is_string()) fail(std::string("field \"") + key + "\" must be a string");
  return v.get<std::string>();
}

inline bool has(const Json& j, const char* key) { return j.is_object() && j.contains(key) && !j.at(key).is_null(); }

inline Oid oidFrom(const std::string& s) {
  auto r = Oid::parse(s);
  if (!r.isOk()) fail("bad OBJECT IDENTIFIER \"" + s + "\"");
  return *r;
}

inline std::vector<uint8_t> hexField(const Json& j, const char* key) { return hexOrFail(str(j, key)); }

inline OpaqueBer opaqueField(const Json& j, const char* key) {
  OpaqueBer v{hexField(j, key)};
  if (!decodeSingleTlv(v.bytes).isOk()) fail(std::string("\"") + key + "\" is not one BER TLV");
  return v;
}

// BIT STRING as a string of '0'/'1', bit 0 first.
inline std::string bitsToString(const BitString& b) {
  std::string s;
  for (size_t i = 0; i < b.bitCount(); ++i) s.push_back(b.bit(i) ? '1' : '0');
  return s;
}

inline BitString bitsFromString(const std::string& s) {
  BitString b = BitString::withBits(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '0' && s[i] != '1') fail("bit string must contain only 0 and 1: \"" + s + "\"");
    b.setBit(i, s[i] == '1');
  }
  return b;
}

inline GeneralizedTime timeFrom(const std::string& s) {
  auto r = GeneralizedTime::parse(s);
  if (!r.isOk()) fail("bad GeneralizedTime \"" + s + "\"");
  return *r;
}


}  // namespace npac::pdu::json_util
