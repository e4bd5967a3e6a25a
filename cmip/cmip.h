// CMIP (ITU-T X.711) vocabulary shared by every CMIP operation: operation and error
// codes, managed object class and instance, attributes, the typed identifiers of
// actions and events, and the association-time user information (CMIPUserInfo,
// CMIPAbortInfo). The operation arguments and results are in cmip/cmip_operations.h.
//
// Tags follow X.711 (10/1997) module CMIP-1 and CMIP-A-ASSOCIATE-Information, as read by
// Wireshark's CMIP dissector. Values CMIP leaves open (attribute values, action and event
// information) stay opaque BER (OpaqueBer): the codec checks they are one well-formed
// TLV and never interprets them.
//
// Threading: plain values and pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cmip/ber.h"
#include "cmip/result.h"

namespace npac::cmip {

// X.711 §7.4 CMIP-1 operation codes (Code local:n).
enum class CmipOpcode : int32_t {
  kEventReport = 0,
  kEventReportConfirmed = 1,
  kLinkedReply = 2,
  kGet = 3,
  kSet = 4,
  kSetConfirmed = 5,
  kAction = 6,
  kActionConfirmed = 7,
  kCreate = 8,
  kDelete = 9,
  kCancelGet = 10,
};
inline constexpr int32_t kMaxCmipOpcode = 10;
const char* cmipOpcodeName(CmipOpcode op);  // "m-EventReport", ...
bool isKnownCmipOpcode(int32_t code);
// True for the operations X.711 defines with a RESULT (the confirmed ones).
bool isConfirmedCmipOpcode(CmipOpcode op);

// X.711 §7.4 CMISE error codes (ERROR … CODE local:n).
enum class CmipError : int32_t {
  kNoSuchObjectClass = 0,
  kNoSuchObjectInstance = 1,
  kAccessDenied = 2,
  kSyncNotSupported = 3,
  kInvalidFilter = 4,
  kNoSuchAttribute = 5,
  kInvalidAttributeValue = 6,
  kGetListError = 7,
  kSetListError = 8,
  kNoSuchAction = 9,
  kProcessingFailure = 10,
  kDuplicateManagedObjectInstance = 11,
  kNoSuchReferenceObject = 12,
  kNoSuchEventType = 13,
  kNoSuchArgument = 14,
  kInvalidArgumentValue = 15,
  kInvalidScope = 16,
  kInvalidObjectInstance = 17,
  kMissingAttributeValue = 18,
  kClassInstanceConflict = 19,
  kComplexityLimitation = 20,
  kMistypedOperation = 21,
  kNoSuchInvokeId = 22,
  kOperationCancelled = 23,
};
inline constexpr int32_t kMaxCmipError = 23;
const char* cmipErrorName(CmipError e);  // "noSuchObjectClass", ...
bool isKnownCmipError(int32_t code);

// ObjectClass ::= CHOICE { globalForm [0] IMPLICIT OID, localForm [1] IMPLICIT INTEGER }
// The same two-form shape (different tags) serves AttributeId ([0]/[1]),
// ActionTypeId ([2]/[3]) and EventTypeId ([6]/[7]).
struct GlobalOrLocal {
  std::variant<Oid, int64_t> value;
  static GlobalOrLocal global(Oid oid) { return {std::move(oid)}; }
  static GlobalOrLocal local(int64_t v) { return {v}; }
  bool isGlobal() const { return std::holds_alternative<Oid>(value); }
  const Oid& oid() const { return std::get<Oid>(value); }
  int64_t localValue() const { return std::get<int64_t>(value); }
  bool operator==(const GlobalOrLocal&) const = default;
};
using ObjectClass = GlobalOrLocal;
using AttributeId = GlobalOrLocal;
using ActionTypeId = GlobalOrLocal;
using EventTypeId = GlobalOrLocal;

// The context tag numbers of each two-form identifier: {global, local}.
struct IdTags {
  uint32_t global;
  uint32_t local;
};
inline constexpr IdTags kObjectClassTags{0, 1};
inline constexpr IdTags kAttributeIdTags{0, 1};
inline constexpr IdTags kActionTypeTags{2, 3};
inline constexpr IdTags kEventTypeTags{6, 7};

// AttributeValueAssertion ::= SEQUENCE { id OBJECT IDENTIFIER, value ANY }
struct Ava {
  Oid id;
  OpaqueBer value;
  bool operator==(const Ava&) const = default;
};
using RelativeDistinguishedName = std::vector<Ava>;      // SET OF Ava
using RdnSequence = std::vector<RelativeDistinguishedName>;  // SEQUENCE OF RDN

// ObjectInstance ::= CHOICE { distinguishedName [2] IMPLICIT DistinguishedName,
//   nonSpecificForm [3] IMPLICIT OCTET STRING, localDistinguishedName [4] IMPLICIT RDNSequence }
struct ObjectInstance {
  enum class Form : uint8_t { kDistinguishedName = 2, kNonSpecific = 3, kLocalDistinguishedName = 4 };
  Form form = Form::kDistinguishedName;
  RdnSequence rdns;               // distinguishedName and localDistinguishedName
  std::vector<uint8_t> nonSpecific;  // nonSpecificForm
  bool operator==(const ObjectInstance&) const = default;
};

// Attribute ::= SEQUENCE { id AttributeId, value ANY }
struct Attribute {
  AttributeId id;
  OpaqueBer value;
  bool operator==(const Attribute&) const = default;
};

// The instance of the NPAC SMS managed object (class lnpNpacSms, docs/PROTOCOL.md "The
// NPAC SMS object"): distinguishedName { { commonName (X.520 id-at-commonName 2.5.4.3) =
// PrintableString "NPAC" } }. The provider's recovery actions address it, npacd's
// heartbeat reports on it. The NPAC IIS names this object too, but its naming attribute
// was not available to us; this is npacd's own profile, like the bind's.
ObjectInstance npacSmsInstance();
inline constexpr const char* kNpacSmsCommonName = "NPAC";

// Codec for the building blocks (used by cmip_operations.cc and the npac_bind layer).
void writeId(BerWriter& w, const GlobalOrLocal& id, IdTags tags);
Result<GlobalOrLocal> readId(BerReader& r, IdTags tags, const char* what);
bool nextIsId(const BerReader& r, IdTags tags);
void writeObjectInstance(BerWriter& w, const ObjectInstance& inst);
Result<ObjectInstance> readObjectInstance(BerReader& r);
bool nextIsObjectInstance(const BerReader& r);
void writeAttribute(BerWriter& w, const Attribute& a, Tag tag = kTagSequence);
Result<Attribute> decodeAttribute(const BerReader& parent, const Tlv& tlv);
// SET OF Attribute under `tag` (e.g. [6] IMPLICIT); the order given is kept.
void writeAttributeList(BerWriter& w, const std::vector<Attribute>& list, Tag tag);
Result<std::vector<Attribute>> readAttributeList(BerReader& r, Tag tag);

// CMIP-A-ASSOCIATE-Information (X.711 §7.2):
//   CMIPUserInfo ::= SEQUENCE {
//     protocolVersion [0] IMPLICIT ProtocolVersion DEFAULT {version1},
//     functionalUnits [1] IMPLICIT FunctionalUnits DEFAULT {},
//     accessControl   [2] EXTERNAL OPTIONAL,
//     userInfo        [3] EXTERNAL OPTIONAL }
//   ProtocolVersion ::= BIT STRING { version1(0), version2(1) }
//   FunctionalUnits ::= BIT STRING { multipleObjectSelection(0), filter(1),
//                                    multipleReply(2), extendedService(3), cancelGet(4) }
// The abstract syntax that carries it in an ACSE EXTERNAL is CMIP's, 2.9.1.1.4.
inline constexpr size_t kCmipVersion1Bit = 0;
inline constexpr size_t kCmipVersion2Bit = 1;
namespace functional_unit {
inline constexpr size_t kMultipleObjectSelection = 0;
inline constexpr size_t kFilter = 1;
inline constexpr size_t kMultipleReply = 2;
inline constexpr size_t kExtendedService = 3;
inline constexpr size_t kCancelGet = 4;
}  // namespace functional_unit

struct CmipUserInfo {
  // Decoded value of the bit strings; absent = the DEFAULT.
  std::optional<BitString> protocolVersion;  // DEFAULT {version1}
  std::optional<BitString> functionalUnits;  // DEFAULT {}
  std::optional<External> accessControl;
  std::optional<External> userInfo;

  bool supportsVersion2() const;  // the protocol version npacd speaks (X.711 §7.2)
  bool operator==(const CmipUserInfo&) const = default;
};
void encodeCmipUserInfo(const CmipUserInfo& info, BerWriter& w);
std::vector<uint8_t> encodeCmipUserInfo(const CmipUserInfo& info);
// kAcseBadUserInformation for a structurally wrong CMIPUserInfo.
Result<CmipUserInfo> decodeCmipUserInfo(std::span<const uint8_t> in,
                                        const DecodeLimits& limits = DecodeLimits{});

// CMIPAbortInfo ::= SEQUENCE { abortSource [0] IMPLICIT CMIPAbortSource,
//   userInfo [1] EXTERNAL OPTIONAL }
// CMIPAbortSource ::= ENUMERATED { cmiseServiceUser(0), cmiseServiceProvider(1) }
enum class CmipAbortSource : int32_t { kServiceUser = 0, kServiceProvider = 1 };
struct CmipAbortInfo {
  CmipAbortSource source = CmipAbortSource::kServiceUser;
  std::optional<External> userInfo;
  bool operator==(const CmipAbortInfo&) const = default;
};
void encodeCmipAbortInfo(const CmipAbortInfo& info, BerWriter& w);
std::vector<uint8_t> encodeCmipAbortInfo(const CmipAbortInfo& info);
Result<CmipAbortInfo> decodeCmipAbortInfo(std::span<const uint8_t> in,
                                          const DecodeLimits& limits = DecodeLimits{});

}  // namespace npac::cmip
