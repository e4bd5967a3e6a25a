// X.225 (ISO 8327-1) connection-oriented session protocol: kernel and duplex functional
// units, protocol version 2, basic concatenation.
//
// One TSDU carries one SPDU (CN, AC, RF, FN, DN, AB, AA) or the concatenation GT + DT
// used for all data (X.225 §6.3.7: a category 2 DT travels behind a category 0 GT).
// decode() parses a TSDU into an Spdu whose user data is a view into the input.
// The encoders prepend the SPDU header in front of the user data already in an
// EncodeBuffer (the presentation PPDU), so the payload is never copied.
//
// Parameters are PI units (code, length, value) and PGI units grouping PIs (X.225 §8.2).
// Lengths are one octet, or 0xFF followed by two octets for 255..65535 (§8.2.5). CN user
// data longer than 512 octets goes in Extended User Data (PGI 194, up to 10240, version 2
// only, §8.3.1.19); other SPDUs carry User Data (PGI 193).
//
// Threading: pure functions over values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cmip/ber.h"
#include "cmip/result.h"

namespace npac::cmip::session {

// SPDU identifiers (SI), X.225 §8.3 table 11.
enum class SpduType : uint8_t {
  kDataTransfer = 1,  // DT (category 2), §8.3.11; GT (category 0) shares SI 1, §8.3.15
  kFinish = 9,        // FN §8.3.6
  kDisconnect = 10,   // DN §8.3.7
  kRefuse = 12,       // RF §8.3.5
  kConnect = 13,      // CN §8.3.1
  kAccept = 14,       // AC §8.3.4
  kAbort = 25,        // AB §8.3.9
  kAbortAccept = 26,  // AA §8.3.10
};
const char* spduName(SpduType t);

// PI / PGI codes, X.225 §8.3 (the tables of each SPDU).
inline constexpr uint8_t kPgiConnectionIdentifier = 1;   // §8.3.1.3
inline constexpr uint8_t kPgiConnectAcceptItem = 5;      // §8.3.1.4
inline constexpr uint8_t kPiReflectParameter = 11;       // §8.3.9.4 (AB)
inline constexpr uint8_t kPiTokenItem = 16;              // §8.3.15.3 (GT)
inline constexpr uint8_t kPiTransportDisconnect = 17;    // §8.3.6.3, §8.3.9.3
inline constexpr uint8_t kPiProtocolOptions = 19;        // §8.3.1.5
inline constexpr uint8_t kPiSessionUserRequirements = 20;  // §8.3.1.12
inline constexpr uint8_t kPiTsduMaximumSize = 21;        // §8.3.1.6
inline constexpr uint8_t kPiVersionNumber = 22;          // §8.3.1.7
inline constexpr uint8_t kPiInitialSerialNumber = 23;    // §8.3.1.8
inline constexpr uint8_t kPiEnclosureItem = 25;          // §8.3.11.3
inline constexpr uint8_t kPiTokenSettingItem = 26;       // §8.3.1.9
inline constexpr uint8_t kPiReasonCode = 50;             // §8.3.5.7 (RF)
inline constexpr uint8_t kPiCallingSessionSelector = 51;   // §8.3.1.13
inline constexpr uint8_t kPiCalledSessionSelector = 52;    // §8.3.1.14; AC: responding
inline constexpr uint8_t kPiDataOverflow = 60;           // §8.3.1.16
inline constexpr uint8_t kPgiUserData = 193;             // §8.3.1.18
inline constexpr uint8_t kPgiExtendedUserData = 194;     // §8.3.1.19

inline constexpr uint8_t kVersion1 = 0x01;  // Version Number bit 1, §8.3.1.7
inline constexpr uint8_t kVersion2 = 0x02;  // bit 2
// Session User Requirements bits, §8.3.1.12 (kernel is always implied).
inline constexpr uint16_t kHalfDuplex = 0x0001;
inline constexpr uint16_t kDuplex = 0x0002;
// Transport Disconnect PI bits, §8.3.6.3 / §8.3.9.3.
inline constexpr uint8_t kReleaseTransport = 0x01;
inline constexpr uint8_t kUserAbort = 0x02;
inline constexpr uint8_t kProtocolError = 0x04;
inline constexpr uint8_t kNoReason = 0x08;
// RF Reason Code values, §8.3.5.7.
inline constexpr uint8_t kRefuseByUserNotSpecified = 0;
inline constexpr uint8_t kRefuseByUserCongestion = 1;
inline constexpr uint8_t kRefuseByUserWithData = 2;  // presentation CPR follows
inline constexpr uint8_t kRefuseSelectorUnknown = 128 + 1;
inline constexpr uint8_t kRefuseUserNotAttached = 128 + 2;
inline constexpr uint8_t kRefuseVersionNotSupported = 128 + 4;
inline constexpr uint8_t kRefuseBySpm = 128 + 5;

inline constexpr size_t kMaxUserData = 512;           // PGI 193 in CN, §8.3.1.18
inline constexpr size_t kMaxExtendedUserData = 10240; // PGI 194, §8.3.1.19
inline constexpr size_t kMaxSelectorLength = 16;      // §8.3.1.13

struct Connect {  // CN and AC
  uint8_t protocol_options = 0;
  uint8_t version = kVersion2;  // CN: proposed versions (bit mask); AC: the chosen one
  uint16_t user_requirements = kDuplex;
  std::vector<uint8_t> calling_selector;
  std::vector<uint8_t> called_selector;  // AC: responding session selector
  bool operator==(const Connect&) const = default;
};

struct Refuse {
  uint8_t reason = kRefuseByUserWithData;
  uint8_t transport_disconnect = kReleaseTransport;
  uint16_t user_requirements = kDuplex;
  uint8_t version = kVersion2;
  bool operator==(const Refuse&) const = default;
};

struct Spdu {
  SpduType type = SpduType::kDataTransfer;
  Connect connect;              // CN, AC
  Refuse refuse;                // RF
  uint8_t transport_disconnect = kReleaseTransport;  // FN, AB
  Bytes user_data;              // CN/AC/FN/DN/AB user data, RF reason data, DT user information
};

Result<Spdu> decode(Bytes tsdu);

// Each prepends the SPDU in front of the user data held in `buf`.
Status prependConnect(EncodeBuffer& buf, const Connect& cn);   // CN
Status prependAccept(EncodeBuffer& buf, const Connect& ac);    // AC
Status prependRefuse(EncodeBuffer& buf, const Refuse& rf);     // RF (reason + data)
void prependFinish(EncodeBuffer& buf, uint8_t transport_disconnect = kReleaseTransport);
void prependDisconnect(EncodeBuffer& buf);                     // DN
void prependAbort(EncodeBuffer& buf, uint8_t transport_disconnect = kReleaseTransport | kUserAbort);
void prependAbortAccept(EncodeBuffer& buf);                    // AA (buf must be empty)
void prependData(EncodeBuffer& buf);                           // GT + DT

// Responder's decision on a CN: the AC to send (version 2, duplex, selectors echoed), or
// the RF reason code with the Status saying why (kSessionUnsupportedVersion when version
// 2 is not proposed, kSessionBadParameter when the duplex functional unit is not).
struct ConnectDecision {
  bool accepted = false;
  Connect accept;
  uint8_t refuse_reason = kRefuseBySpm;
  Status reason;
};
ConnectDecision respondToConnect(const Connect& cn);

}  // namespace npac::cmip::session
