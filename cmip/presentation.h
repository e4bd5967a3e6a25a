// X.226 (ISO 8823-1) connection-oriented presentation protocol, normal mode, kernel
// functional unit, BER-encoded PPDUs.
//
// PPDUs and where they travel (X.226 §8.1, §8.2):
//   CP  (CP-type SET)              session CN user data
//   CPA (CPA-PPDU SET)             session AC user data
//   CPR (CPR-PPDU, normal SEQUENCE) session RF reason data
//   TD  (User-data)                session DT user information  (P-DATA)
//   User-data                      session FN / DN user data    (P-RELEASE)
//   ARU ([0] SEQUENCE) / ARP (SEQUENCE)  session AB user data   (P-U/P-P-ABORT)
// User data is always fully-encoded-data ([APPLICATION 1], §8.4.2): a list of PDVs, each
// naming its presentation context and holding one single-ASN1-type value (or
// octet-aligned bytes). Decoded PDVs view the input; encoders prepend the PPDU around
// the APDU already in the EncodeBuffer.
//
// Context negotiation (respondToConnect, §6.2.2 / result list §8.2 Result-list): a
// proposed context is accepted when its abstract syntax is ACSE 2.2.1.0.1 or CMIP
// 2.9.1.1.4 and BER 2.1.1 is among its transfer syntaxes; otherwise it is refused with
// provider-rejection and provider-reason abstract-syntax-not-supported (1) or
// proposed-transfer-syntaxes-not-supported (2). A CP with no acceptable ACSE context,
// a non-normal mode or without protocol version 1 is answered with a CPR.
// DefinedContexts remembers what was accepted; data on any other context id is
// kPresentationContextNotNegotiated.
//
// Threading: pure functions over values; DefinedContexts belongs to one connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cmip/ber.h"
#include "cmip/result.h"

namespace npac::cmip::presentation {

// Mode-selector mode-value, §8.2 CP-type.
inline constexpr int64_t kNormalMode = 1;
// Result, §8.2 Result-list.
inline constexpr int64_t kAcceptance = 0;
inline constexpr int64_t kUserRejection = 1;
inline constexpr int64_t kProviderRejection = 2;
// provider-reason in Result-list, §8.2.
inline constexpr int64_t kResultReasonNotSpecified = 0;
inline constexpr int64_t kAbstractSyntaxNotSupported = 1;
inline constexpr int64_t kTransferSyntaxesNotSupported = 2;
inline constexpr int64_t kLocalLimitOnDcsExceeded = 3;
// Provider-reason of CPR, §8.2 CPR-PPDU.
inline constexpr int64_t kCprReasonNotSpecified = 0;
inline constexpr int64_t kCprTemporaryCongestion = 1;
inline constexpr int64_t kCprLocalLimitExceeded = 2;
inline constexpr int64_t kCprAddressUnknown = 3;
inline constexpr int64_t kCprProtocolVersionNotSupported = 4;
inline constexpr int64_t kCprDefaultContextNotSupported = 5;
// Abort-reason of ARP, §8.2 ARP-PPDU.
inline constexpr int64_t kAbortReasonNotSpecified = 0;
inline constexpr int64_t kAbortUnrecognizedPpdu = 1;
inline constexpr int64_t kAbortUnexpectedPpdu = 2;
inline constexpr int64_t kAbortUnrecognizedParameter = 4;
inline constexpr int64_t kAbortInvalidParameterValue = 6;

// One presentation data value (PDV-list, §8.4.2).
struct Pdv {
  int64_t context_id = 0;
  std::optional<Oid> transfer_syntax;
  Bytes value;  // single-ASN1-type: the whole TLV; octet-aligned: the octets
};
using UserData = std::vector<Pdv>;

struct ContextProposal {
  int64_t id = 0;
  Oid abstract_syntax;
  std::vector<Oid> transfer_syntaxes;
  bool operator==(const ContextProposal&) const = default;
};

struct ContextResult {
  int64_t result = kAcceptance;
  std::optional<Oid> transfer_syntax;
  std::optional<int64_t> provider_reason;
  bool operator==(const ContextResult&) const = default;
};

struct ConnectRequest {  // CP
  bool version1 = true;  // protocol-version includes version-1
  int64_t mode = kNormalMode;
  std::vector<uint8_t> calling_selector;
  std::vector<uint8_t> called_selector;
  std::vector<ContextProposal> contexts;
  UserData user_data;
};

struct ConnectAccept {  // CPA
  std::vector<uint8_t> responding_selector;
  std::vector<ContextResult> results;
  UserData user_data;
};

struct ConnectReject {  // CPR
  std::vector<uint8_t> responding_selector;
  std::vector<ContextResult> results;
  std::optional<int64_t> provider_reason;
  UserData user_data;
};

struct Abort {  // ARU (user_abort) or ARP
  bool user_abort = true;
  UserData user_data;                      // ARU
  std::optional<int64_t> provider_reason;  // ARP
  std::optional<int64_t> event_identifier; // ARP
};

// Decoders. Offsets in errors are relative to the PPDU.
Result<ConnectRequest> decodeConnectRequest(Bytes ppdu, const DecodeLimits& limits = {});
Result<ConnectAccept> decodeConnectAccept(Bytes ppdu, const DecodeLimits& limits = {});
Result<ConnectReject> decodeConnectReject(Bytes ppdu, const DecodeLimits& limits = {});
Result<Abort> decodeAbort(Bytes ppdu, const DecodeLimits& limits = {});
Result<UserData> decodeUserData(Bytes ppdu, const DecodeLimits& limits = {});  // TD, release

// Encoders: `buf` holds the APDU (one TLV) for context `context_id`, or is empty when
// there is no user data. Each wraps it in place.
void prependUserData(EncodeBuffer& buf, int64_t context_id);  // TD and release user data
void prependConnectRequest(EncodeBuffer& buf, const ConnectRequest& cp, int64_t context_id);
void prependConnectAccept(EncodeBuffer& buf, const ConnectAccept& cpa, int64_t context_id);
void prependConnectReject(EncodeBuffer& buf, const ConnectReject& cpr, int64_t context_id);
void prependUserAbort(EncodeBuffer& buf, int64_t context_id);  // ARU
void encodeProviderAbort(EncodeBuffer& buf, int64_t reason);  // ARP (buf empty)

// Contexts accepted on one connection.
class DefinedContexts {
 public:
  void add(int64_t id, const Oid& abstract_syntax);
  const Oid* abstractSyntaxOf(int64_t id) const;  // nullptr if not defined
  std::optional<int64_t> idFor(const Oid& abstract_syntax) const;
  // kPresentationContextNotNegotiated unless every PDV's context is defined.
  Status check(const UserData& ud) const;
  void clear() { contexts_.clear(); }
  size_t size() const { return contexts_.size(); }

 private:
  std::vector<std::pair<int64_t, Oid>> contexts_;
};

struct ConnectDecision {
  bool accepted = false;
  ConnectAccept accept;     // results filled; user data to be added by the caller
  ConnectReject reject;     // results and provider reason
  DefinedContexts contexts; // what was accepted
  Status reason;            // why rejected
};
ConnectDecision respondToConnect(const ConnectRequest& cp);

// Initiator: the contexts a CPA accepted, matching results to the CP's proposals in order
// (§8.2: the result list is in the order of the definition list).
Result<DefinedContexts> contextsFromAccept(const ConnectRequest& cp, const ConnectAccept& cpa);

}  // namespace npac::cmip::presentation
