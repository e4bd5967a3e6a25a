// npac-pdu's frame codec: a byte stream of TPKT packets <-> a JSON document with one
// object per packet showing every layer (tpkt, cotp, session, presentation, acse or rose
// with its typed cmip view).
//
// DT segments: a DT TPDU without EOT shows its user data as "cotp.user_data" (hex); the
// DT with EOT carries the upper layers of the reassembled SDU, and encoding re-cuts the
// SDU at the same boundaries. One presentation PDV per PPDU is supported.
//
// Both directions answer errors as values: decodeFrames() a codec Status (the stream is
// untrusted input), encodeFrames() and sampleJson() a kBadDocument naming the frame and
// the field.
//
// Threading: pure functions.
#pragma once

#include <string>
#include <vector>

#include "cmip/result.h"
#include "npac/npac-pdu/json_upper.h"

namespace npac::pdu {

// `stream`: concatenated TPKT packets. The result is {"frames": [...]}.
cmip::Result<Json> decodeFrames(std::span<const uint8_t> stream);

// The inverse: concatenated TPKT packets.
Result<std::vector<uint8_t>> encodeFrames(const Json& doc);

// The canonical sample frames (documented in docs/PROTOCOL.md, "npac-pdu").
const std::vector<std::string>& sampleKinds();
// JSON of the sample `kind` ({"frames": [one frame]}); kBadDocument for an unknown kind.
Result<Json> sampleJson(const std::string& kind);

}  // namespace npac::pdu
