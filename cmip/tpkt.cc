#include "cmip/tpkt.h"

#include <string>

namespace npac::cmip::tpkt {

Result<size_t> parseHeader(Bytes h, size_t max_packet_length) {
  if (h.size() < kHeaderLength)
    return Status::error(ErrorCode::kTpktTruncated, h.size(), "TPKT header needs 4 octets, " + std::to_string(h.size()) + " present");
  if (h[0] != kVersion)
    return Status::error(ErrorCode::kTpktBadVersion, 0, "TPKT version " + std::to_string(h[0]) + ", RFC 1006 §6 requires 3");
  if (h[1] != kReserved)
    return Status::error(ErrorCode::kTpktBadReserved, 1, "TPKT reserved octet is " + std::to_string(h[1]) + ", must be 0");
  const size_t len = (size_t{h[2]} << 8) | h[3];
  if (len < kMinPacketLength)
    return Status::error(ErrorCode::kTpktLengthTooShort, 2, "TPKT length " + std::to_string(len) + " is below the minimum of 7");
  if (len > max_packet_length)
    return Status::error(ErrorCode::kTpktLengthTooLong, 2, "TPKT length " + std::to_string(len) + " exceeds the limit of " + std::to_string(max_packet_length));
  return len;
}

Result<Bytes> parseFrame(Bytes p, size_t max_packet_length) {
  NPAC_ASSIGN_OR_RETURN(size_t len, parseHeader(p, max_packet_length));
  if (p.size() < len)
    return Status::error(ErrorCode::kTpktTruncated, p.size(), "TPKT announces " + std::to_string(len) + " octets, " + std::to_string(p.size()) + " present");
  if (p.size() > len)
    return Status::error(ErrorCode::kTpktTrailingData, len, std::to_string(p.size() - len) + " octets after the TPKT packet");
  return p.subspan(kHeaderLength);
}

Status prependHeader(EncodeBuffer& tpdu) {
  if (tpdu.size() > kMaxTpduLength)
    return Status::error(ErrorCode::kTpktLengthTooLong, 0, "TPDU of " + std::to_string(tpdu.size()) + " octets exceeds RFC 1006's 65531");
  const size_t len = tpdu.size() + kHeaderLength;
  uint8_t* h = tpdu.prependUninitialized(kHeaderLength);
  h[0] = kVersion;
  h[1] = kReserved;
  h[2] = static_cast<uint8_t>(len >> 8);
  h[3] = static_cast<uint8_t>(len);
  return Status::ok();
}

void Deframer::feed(Bytes chunk) {
  if (read_ > 0 && read_ == buffer_.size()) {
    buffer_.clear();
    read_ = 0;
  } else if (read_ > 4096 && read_ * 2 > buffer_.size()) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(read_));
    read_ = 0;
  }
  buffer_.insert(buffer_.end(), chunk.begin(), chunk.end());
}

Result<std::optional<Bytes>> Deframer::next() {
  if (!error_.isOk()) return error_;
  const Bytes avail(buffer_.data() + read_, buffer_.size() - read_);
  if (avail.size() < kHeaderLength) {
    // Check what is there already so a bad first octet fails fast.
    if (!avail.empty() && avail[0] != kVersion) {
      error_ = Status::error(ErrorCode::kTpktBadVersion, 0, "TPKT version " + std::to_string(avail[0]) + ", RFC 1006 §6 requires 3");
      return error_;
    }
    return std::optional<Bytes>();
  }
  Result<size_t> len = parseHeader(avail, max_packet_length_);
  if (!len.isOk()) {
    error_ = len.status();
    return error_;
  }
  if (avail.size() < *len) return std::optional<Bytes>();
  read_ += *len;
  return std::optional<Bytes>(avail.first(*len));
}

}  // namespace npac::cmip::tpkt
