// The PDU batch: a binary submission body for POST /v1/pdu-batches (docs/API.md "PDU
// batches") — messages the application has already encoded as ROSE Invoke APDUs, so the
// API neither parses JSON nor encodes CMIP per message. It is the fast path beside
// POST /v1/messages, with the same guarantees: every record is checked before anything
// is queued, and the answer comes only after the commit.
//
//   batch   = "NPB1" record{1..kMaxBatchMessages}
//   record  = spid       4 octets, ASCII letters or digits
//             functions  1 octet: the association functions the message needs (NANC 111;
//                        bit n = common::AssociationFunction n, at least one bit)
//             priority   1 octet, 0..9 (higher leaves first)
//             key_length 1 octet, 0..128; then key_length octets of idempotency key
//                        (visible ASCII 0x21..0x7e; 0 = none)
//             pdu_length 2 octets, big-endian, 1..kMaxBatchPduLength; then the PDU:
//                        exactly one BER ROSE Invoke (X.880 [1]) of a CMIP operation
//                        (X.711 §7.4) whose argument decodes. Its invoke id is a
//                        placeholder: the core gives each send its own (withInvokeId).
//
// What the row stores about the message (db::MessageKind push, the opcode, confirmed
// when X.711 defines the operation with a RESULT) is read from the Invoke here, once.
//
// Threading: pure functions, no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "npac/npacd/api/json.h"
#include "npac/npacd/core/core_service.h"

namespace npac::npacd {

// The media type of the body (Content-Type).
inline constexpr std::string_view kPduBatchMediaType = "application/vnd.npacd.pdu-batch";
inline constexpr std::string_view kPduBatchMagic = "NPB1";
// Whether a Content-Type value names kPduBatchMediaType (case-insensitive, parameters
// such as "; charset" ignored: RFC 9110 §8.3.1).
bool isPduBatchMediaType(std::string_view content_type);
inline constexpr std::size_t kMaxBatchPduLength = 16 * 1024;
// Priorities 0..9, the range POST /v1/messages takes.
inline constexpr std::uint8_t kMaxBatchPriority = 9;

// The records of `body`, in order, or the first problem: code invalid_pdu_batch with the
// record index and octet offset, invalid_spid, invalid_idempotency_key,
// repeated_idempotency_key (one key twice for one provider), or invalid_pdu (the PDU is
// not one ROSE Invoke of a CMIP operation, with the decoder's reason).
Result<std::vector<OutboundMessage>> parsePduBatch(std::span<const std::uint8_t> body);

// The encoding of one record (for clients written in C++, the bench load generator and
// tests): the inverse of one record of parsePduBatch.
void appendPduBatchRecord(std::vector<std::uint8_t>& out, std::string_view spid,
                          std::uint8_t functions, std::uint8_t priority,
                          std::string_view idempotency_key, std::span<const std::uint8_t> pdu);

}  // namespace npac::npacd
