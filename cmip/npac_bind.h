// The NPAC bind profile: the LnpAccessControl structure an SOA or LSMS carries in
// CMIPUserInfo.accessControl when it binds, the exact bytes its signature covers, and
// the recovery actions and heartbeat notification npacd defines.
//
// The real NPAC IIS ASN.1 for these is not public; docs/npac-bind.asn1 is npacd's own
// module (NPACD-BIND-PROFILE) under the sub-arc npacdProfile(90) of the NPAC IIS arc
// 1.3.6.1.4.1.103.7.0.0, and this file implements exactly that text. docs/PROTOCOL.md
// "NPAC bind profile" documents the bits and the signing rule.
//
// Signing (NPACD-BIND-PROFILE "What the signature covers"): signedContent(ac) is the DER
// encoding of SignedAccessControl, i.e. a SEQUENCE of components [0]..[8] of
// LnpAccessControl re-encoded from the decoded values. The simulator signs those bytes;
// the server's BindGate verifies the signature over the same bytes.
//
// Threading: plain values and pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmip/acse.h"
#include "cmip/ber.h"
#include "cmip/cmip.h"
#include "cmip/result.h"
#include "common/vocabulary.h"

namespace npac::cmip {

namespace oids {
// npacdProfile(90) under the NPAC IIS arc — our own definitions, not the IIS's.
inline const Oid kNpacdProfile{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90};
inline const Oid kNpacdBindModule{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 0, 1};
// direct-reference of the accessControl EXTERNAL holding an LnpAccessControl.
inline const Oid kLnpAccessControlSyntax{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 1};
// direct-reference of the EXTERNAL in an AARE's CMIPUserInfo.userInfo holding an
// LnpBindRefusal: why the NPAC refused the bind (cmip/npac_bind_refusal.h).
inline const Oid kLnpBindRefusalSyntax{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 2};
// managed object class of the NPAC SMS (target of recovery actions, heartbeat source).
inline const Oid kLnpNpacSmsClass{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 3, 1};
// M-EVENT-REPORT event type of the application heartbeat (NANC 404).
inline const Oid kNpacHeartbeatEvent{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 5, 1};
// M-ACTION action types of recovery (NANC 351 SWIM).
inline const Oid kLnpRecoveryRequestAction{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 6, 1};
inline const Oid kLnpRecoveryCompleteAction{1, 3, 6, 1, 4, 1, 103, 7, 0, 0, 90, 6, 2};
}  // namespace oids

// SystemType ::= ENUMERATED { soa(0), lsms(1), soa-and-lsms(2), npac(3) } and the
// AssociationFunctions bit numbers (X.690 §8.6.2: bit 0 is the first bit on the wire):
// the NPAC vocabulary every layer shares, with its one name table (common/vocabulary.h).
using common::AssociationFunction;
using common::kAssociationFunctionCount;
using common::SystemType;

// A set of association functions: bit i of `bits` is AssociationFunction i.
struct AssociationFunctionMask {
  uint32_t bits = 0;
  bool has(AssociationFunction f) const { return bits & (1u << static_cast<int>(f)); }
  AssociationFunctionMask& add(AssociationFunction f) {
    bits |= 1u << static_cast<int>(f);
    return *this;
  }
  // DER BIT STRING value: named bits, trailing zero bits removed (X.690 §11.2.2).
  BitString toBitString() const;
  // kBindBadAccessControl for a bit beyond the five defined functions.
  static Result<AssociationFunctionMask> fromBitString(const BitString& bits, size_t offset);
  bool operator==(const AssociationFunctionMask&) const = default;
};

inline constexpr size_t kSystemIdLength = 4;  // an SPID is exactly four characters
inline constexpr size_t kMaxUserIdLength = 64;

struct LnpAccessControl {
  std::string systemId;                 // [0] PrintableString (SIZE (4)) — the SPID
  SystemType systemType = SystemType::kSoa;  // [1]
  std::string userId;                   // [2] VisibleString (SIZE (1..64))
  int64_t listId = 0;                   // [3] key list id
  int64_t keyId = 0;                    // [4]
  GeneralizedTime departureTime;        // [5] cmipDepartureTime, UTC
  int64_t sequenceNumber = 0;           // [6] 0..4294967295
  AssociationFunctionMask functions;    // [7]
  bool recoveryMode = false;            // [8]
  std::vector<uint8_t> signature;       // [9] BIT STRING, 0 unused bits
  bool operator==(const LnpAccessControl&) const = default;
};

// Range and repertoire checks of every field (kBindBadAccessControl, naming the field).
Status validateAccessControl(const LnpAccessControl& ac);

// The LnpAccessControl SEQUENCE TLV.
std::vector<uint8_t> encodeAccessControl(const LnpAccessControl& ac);
void encodeAccessControl(const LnpAccessControl& ac, BerWriter& w);
// Decodes and validates. kBindBadAccessControl with the field named for a bad SPID
// length, an unknown system type, an out-of-range number, a bad function bit or a
// signature with unused bits; BER errors pass through.
Result<LnpAccessControl> decodeAccessControl(std::span<const uint8_t> tlv,
                                             const DecodeLimits& limits = DecodeLimits{});

// The bytes the signature covers: DER of SignedAccessControl (components [0]..[8]).
std::vector<uint8_t> signedContent(const LnpAccessControl& ac);

// accessControl EXTERNAL: direct-reference kLnpAccessControlSyntax, single-ASN1-type.
External toExternal(const LnpAccessControl& ac);
// kBindBadAccessControl if the EXTERNAL is not of that syntax or encoding.
Result<LnpAccessControl> accessControlFromExternal(const External& ext,
                                                   const DecodeLimits& limits = DecodeLimits{});
// CMIPUserInfo.accessControl → LnpAccessControl (kBindBadAccessControl when absent).
Result<LnpAccessControl> accessControlFromUserInfo(const CmipUserInfo& info,
                                                   const DecodeLimits& limits = DecodeLimits{});

// --- the NPAC's side of mutual authentication (NPACD-BIND-PROFILE "The NPAC's answer") ----
//
// An accepting AARE carries one CMIPUserInfo (X.711 §7.2) with protocolVersion {version2}
// and, in accessControl, the NPAC's own LnpAccessControl: systemId the NPAC's id,
// systemType npac, listId/keyId naming the NPAC key that signed, functions and
// recoveryMode as accepted, signed over signedContent() exactly as a provider's is. The
// provider verifies it with the NPAC public key it installed.

// Adds `info` to `aare` as a CMIPUserInfo EXTERNAL with protocolVersion {version2}, in the
// presentation context the AARQ used for CMIP (X.227: the references of `aarq_cmip`, else
// the CMIP abstract syntax as direct-reference). Every AARE npacd sends answers this way.
void attachCmipUserInfo(Aare& aare, CmipUserInfo info, const External* aarq_cmip);
// Adds `npac` to `aare` as that CMIPUserInfo's accessControl.
void attachNpacAccessControl(Aare& aare, const LnpAccessControl& npac, const External* aarq_cmip);
// The NPAC access control an AARE carries: nullopt when no CMIPUserInfo of the AARE has
// an accessControl; an error (kBindBadAccessControl, BER errors) when one does not decode.
Result<std::optional<LnpAccessControl>> npacAccessControlFrom(const Aare& aare,
                                                              const DecodeLimits& limits = DecodeLimits{});

// --- recovery and heartbeat values (NPACD-BIND-PROFILE) ------------------------------

// RecoveryRequest ::= CHOICE { timeRange [0] SEQUENCE { startTime [0] GeneralizedTime,
//   stopTime [1] GeneralizedTime }, allUnacknowledged [1] NULL }
struct RecoveryRequest {
  bool allUnacknowledged = false;  // true: SWIM, the times are ignored
  GeneralizedTime startTime;
  GeneralizedTime stopTime;
  bool operator==(const RecoveryRequest&) const = default;
};
OpaqueBer encodeRecoveryRequest(const RecoveryRequest& r);
Result<RecoveryRequest> decodeRecoveryRequest(std::span<const uint8_t> tlv,
                                              const DecodeLimits& limits = DecodeLimits{});

// RecoveryReply ::= SEQUENCE { messageCount [0] INTEGER }
OpaqueBer encodeRecoveryReply(int64_t messageCount);
Result<int64_t> decodeRecoveryReply(std::span<const uint8_t> tlv,
                                    const DecodeLimits& limits = DecodeLimits{});

// Heartbeat ::= SEQUENCE { sentAt [0] GeneralizedTime }
OpaqueBer encodeHeartbeat(const GeneralizedTime& sentAt);
Result<GeneralizedTime> decodeHeartbeat(std::span<const uint8_t> tlv,
                                        const DecodeLimits& limits = DecodeLimits{});

}  // namespace npac::cmip
