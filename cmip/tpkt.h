// TPKT framing, RFC 1006 §6: ISO transport over TCP.
//
// A TPKT packet is a 4-octet header — version 3, a reserved 0 octet, and the 16-bit
// packet length including the header — followed by one TPDU. RFC 1006 §6 bounds the
// length to 7 (header plus the smallest class 0 TPDU) .. 65535 (TPDU of at most 65531).
//
// parseFrame() checks one complete packet and returns the TPDU view (zero-copy).
// prependHeader() turns an EncodeBuffer holding a TPDU into a packet in place.
// Deframer turns arbitrary TCP byte chunks into complete packets: partial packets are
// buffered, a bad header is a sticky error (the connection must be dropped, RFC 1006
// has no resynchronisation).
//
// Threading: functions are pure; a Deframer belongs to one connection and one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cmip/ber.h"
#include "cmip/result.h"

namespace npac::cmip::tpkt {

inline constexpr uint8_t kVersion = 3;          // RFC 1006 §6 "vrsn"
inline constexpr uint8_t kReserved = 0;         // RFC 1006 §6 "reserved"
inline constexpr size_t kHeaderLength = 4;
inline constexpr size_t kMinPacketLength = 7;   // header + 3-octet class 0 DT TPDU
inline constexpr size_t kMaxPacketLength = 65535;
inline constexpr size_t kMaxTpduLength = kMaxPacketLength - kHeaderLength;  // 65531

// Validates a header (at least 4 octets) and returns the packet length it announces.
// `max_packet_length` lets a server accept less than RFC 1006 allows (kTpktLengthTooLong).
Result<size_t> parseHeader(Bytes header, size_t max_packet_length = kMaxPacketLength);

// Validates exactly one complete packet and returns its TPDU.
Result<Bytes> parseFrame(Bytes packet, size_t max_packet_length = kMaxPacketLength);

// Prepends 03 00 LL LL to `tpdu`; kTpktLengthTooLong if the TPDU exceeds kMaxTpduLength.
Status prependHeader(EncodeBuffer& tpdu);

class Deframer {
 public:
  explicit Deframer(size_t max_packet_length = kMaxPacketLength) : max_packet_length_(max_packet_length) {}
  Deframer(const Deframer&) = delete;
  Deframer& operator=(const Deframer&) = delete;

  // Appends bytes received from TCP.
  void feed(Bytes chunk);

  // The next complete packet (header included), std::nullopt if more bytes are needed,
  // or the header error. The view is valid until the next feed() or next() call.
  Result<std::optional<Bytes>> next();

  size_t bufferedBytes() const { return buffer_.size() - read_; }

 private:
  std::vector<uint8_t> buffer_;
  size_t read_ = 0;
  size_t max_packet_length_;
  Status error_;
};

}  // namespace npac::cmip::tpkt
