// X.224 (ISO 8073) connection-oriented transport protocol, class 0 only, as carried by
// RFC 1006 over TCP.
//
// decode() parses one TPDU (the payload of one TPKT packet) into a Tpdu: CR, CC, DR, DT
// or ER (X.224 §13.3-13.7, §13.12). Other TPDU codes are kCotpUnknownTpdu; a DT's user
// data is a view into the input. The encoders write a TPDU into an EncodeBuffer; the DT
// header is prepended to a payload already in the buffer (no copy).
//
// Class 0 connection establishment (X.224 §6.5, §14): respondToConnect() picks the class
// (0 only) and the TPDU size (the smaller of the proposal and our maximum, at most 2048
// in class 0, default 128 when the CR has no size parameter) and yields either the CC to
// send or the DR refusal. Data transfer (§6.3, §6.4): frameUserData() splits one
// transport SDU into DT TPDUs of the negotiated size, the last with EOT, each inside a
// TPKT packet; DtReassembler joins DT TPDUs back to one SDU, with a size cap.
//
// Threading: functions are pure; a DtReassembler belongs to one connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cmip/ber.h"
#include "cmip/result.h"

namespace npac::cmip::cotp {

// TPDU codes, X.224 §13.1 table 8 (high nibble of the second header octet).
enum class TpduCode : uint8_t {
  kConnectionRequest = 0xE0,  // CR §13.3
  kConnectionConfirm = 0xD0,  // CC §13.4
  kDisconnectRequest = 0x80,  // DR §13.5
  kData = 0xF0,               // DT §13.7
  kError = 0x70,              // ER §13.12
};

// Parameter codes in the variable part, X.224 §13.3.4.
inline constexpr uint8_t kParamTpduSize = 0xC0;            // §13.3.4 b
inline constexpr uint8_t kParamCallingTsap = 0xC1;         // §13.3.4 a
inline constexpr uint8_t kParamCalledTsap = 0xC2;          // §13.3.4 a
inline constexpr uint8_t kParamAlternativeClasses = 0xC7;  // §13.3.4 g
inline constexpr uint8_t kParamInvalidTpdu = 0xC1;         // in ER, §13.12.4

// TPDU size codes: size = 2^code; class 0 allows 128 (7) .. 2048 (11), §13.3.4 b.
inline constexpr uint8_t kMinTpduSizeCode = 7;
inline constexpr uint8_t kMaxTpduSizeCodeClass0 = 11;
inline constexpr uint8_t kMaxTpduSizeCodeAny = 13;  // 8192, other classes
inline constexpr size_t kDefaultTpduSize = 128;
inline constexpr size_t kMaxTpduSizeClass0 = 2048;
inline constexpr size_t kDtHeaderLength = 3;         // LI, code, EOT|NR
inline constexpr uint8_t kEotBit = 0x80;             // §13.7.3 c

// DR reasons, X.224 §13.5.3 d.
inline constexpr uint8_t kReasonNotSpecified = 0x00;
inline constexpr uint8_t kReasonSessionNotAttached = 0x02;
inline constexpr uint8_t kReasonNormal = 0x80;
inline constexpr uint8_t kReasonNegotiationFailed = 0x82;
inline constexpr uint8_t kReasonProtocolError = 0x85;
// ER reject causes, X.224 §13.12.3 d.
inline constexpr uint8_t kCauseNotSpecified = 0x00;
inline constexpr uint8_t kCauseInvalidParameterCode = 0x01;
inline constexpr uint8_t kCauseInvalidTpduType = 0x02;
inline constexpr uint8_t kCauseInvalidParameterValue = 0x03;

struct Connect {  // CR or CC
  uint16_t dst_ref = 0;
  uint16_t src_ref = 0;
  uint8_t protocol_class = 0;  // high nibble of the class/option octet
  uint8_t options = 0;         // low nibble
  std::optional<uint8_t> tpdu_size_code;
  std::vector<uint8_t> calling_tsap;
  std::vector<uint8_t> called_tsap;
  std::vector<uint8_t> alternative_classes;  // high nibbles as sent
  bool operator==(const Connect&) const = default;
};

struct Disconnect {
  uint16_t dst_ref = 0;
  uint16_t src_ref = 0;
  uint8_t reason = kReasonNotSpecified;
  bool operator==(const Disconnect&) const = default;
};

struct Data {
  bool eot = true;
  Bytes user_data;  // view into the decoded input
};

struct Error {
  uint16_t dst_ref = 0;
  uint8_t cause = kCauseNotSpecified;
  std::vector<uint8_t> invalid_tpdu;  // header octets of the rejected TPDU
  bool operator==(const Error&) const = default;
};

struct Tpdu {
  TpduCode code = TpduCode::kData;
  Connect connect;        // kConnectionRequest, kConnectionConfirm
  Disconnect disconnect;  // kDisconnectRequest
  Data data;              // kData
  Error error;            // kError
};

Result<Tpdu> decode(Bytes tpdu);

// Encoders append a whole TPDU (CR, CC, DR, ER) to `out`.
void encodeConnect(TpduCode code, const Connect& c, EncodeBuffer& out);
void encodeDisconnect(const Disconnect& d, EncodeBuffer& out);
void encodeError(const Error& e, EncodeBuffer& out);
// Prepends the 3-octet DT header to the payload in `out`.
void prependDataHeader(EncodeBuffer& out, bool eot);

inline size_t tpduSizeFromCode(uint8_t code) { return size_t{1} << code; }

// Outcome of a CR for a class 0 responder.
struct ConnectResponse {
  bool accepted = false;
  Connect confirm;          // the CC when accepted
  Disconnect refusal;       // the DR when not
  size_t tpdu_size = kDefaultTpduSize;
  Status reason;            // why refused (kCotpClassNotSupported ...)
};
ConnectResponse respondToConnect(const Connect& cr, uint16_t local_ref,
                                 size_t max_tpdu_size = kMaxTpduSizeClass0);
// For the initiator: the TPDU size a received CC settles on (kCotpBadTpduSize when the
// responder chose more than we proposed, kCotpClassNotSupported for a class other than 0).
Result<size_t> confirmedTpduSize(const Connect& cr, const Connect& cc);

// Turns the transport SDU in `sdu` into TPKT packets of DT TPDUs no larger than
// `tpdu_size`. One packet: headers are prepended in place. Several: rebuilt once.
Status frameUserData(EncodeBuffer& sdu, size_t tpdu_size);

class DtReassembler {
 public:
  explicit DtReassembler(size_t max_sdu_size = 64 * 1024) : max_sdu_size_(max_sdu_size) {}
  // Adds one DT. Returns the complete SDU on EOT (a view valid until the next add()),
  // std::nullopt while more segments are expected, kCotpReassemblyTooLarge past the cap.
  Result<std::optional<Bytes>> add(const Data& dt);
  size_t pendingBytes() const { return pending_.size(); }
  void reset() { pending_.clear(); }

 private:
  size_t max_sdu_size_;
  std::vector<uint8_t> pending_;
  std::vector<uint8_t> complete_;
};

}  // namespace npac::cmip::cotp
