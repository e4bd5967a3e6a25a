// LnpBindRefusal: why the NPAC refused a bind, carried back to the provider in the
// rejecting AARE (docs/npac-bind.asn1, NPACD-BIND-PROFILE).
//
// The ACSE diagnostic of a rejected AARE (X.227 §7.1.5.5) has a handful of values, so
// seven different key and signature problems all read "authentication-failure" on the
// wire. npacd adds the exact reason: the AARE's user-information carries a CMIPUserInfo
// (X.711 §7.2) whose userInfo EXTERNAL (direct-reference kLnpBindRefusalSyntax,
// single-ASN1-type) is
//   LnpBindRefusal ::= SEQUENCE {
//     reason [0] IMPLICIT VisibleString (SIZE (1..64)),   -- stable code: "key-revoked"
//     text   [1] IMPLICIT UTF8String (SIZE (0..512)) OPTIONAL }  -- for a person
// A peer that does not know the syntax ignores it; the ACSE diagnostic stays the rule.
//
// Threading: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmip/acse.h"
#include "cmip/ber.h"
#include "cmip/result.h"

namespace npac::cmip {

inline constexpr std::size_t kMaxRefusalReason = 64;
inline constexpr std::size_t kMaxRefusalText = 512;

struct LnpBindRefusal {
  std::string reason;  // 1..64 VisibleString characters
  std::string text;    // UTF-8, at most 512 octets; empty = absent
  bool operator==(const LnpBindRefusal&) const = default;
};

// The SEQUENCE TLV. A reason or text over its bound is cut to it (the text at a UTF-8
// character boundary); a reason outside VisibleString becomes "unspecified".
std::vector<uint8_t> encodeBindRefusal(const LnpBindRefusal& refusal);
// kBindBadRefusal for a wrong structure, an empty or oversized reason, an oversized text.
Result<LnpBindRefusal> decodeBindRefusal(std::span<const uint8_t> tlv,
                                         const DecodeLimits& limits = DecodeLimits{});

// Adds the refusal to `aare` as a CMIPUserInfo EXTERNAL (protocol version 2) with the
// references of the AARQ's CMIP user information (`aarq_cmip`, else the CMIP abstract
// syntax as direct-reference).
void attachBindRefusal(Aare& aare, const LnpBindRefusal& refusal, const External* aarq_cmip);
// The refusal an AARE carries: nullopt when it carries none (a peer that does not send
// one); an error when it carries one that does not decode.
Result<std::optional<LnpBindRefusal>> bindRefusalFrom(const Aare& aare,
                                                      const DecodeLimits& limits = DecodeLimits{});

}  // namespace npac::cmip
