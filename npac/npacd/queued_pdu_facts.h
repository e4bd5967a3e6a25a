// classifyQueuedPdu: what a stored outbound_queue PDU is (push or response, its CMIP
// operation, whether the provider answers it), read from its ROSE APDU (X.880 / X.711
// §7.4). npacd hands it to the database's schema-4 migration (db/migrations.h
// MigrationOptions::classify_queued_pdu) to type the rows queued before the queue stored
// these facts itself; nothing else decodes a queued PDU to learn them.
//
// Threading: a pure function; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "db/outbound_queue.h"

namespace npac::npacd {

// Invoke → push of its local opcode, confirmed as X.711 defines that operation;
// ReturnResult / ReturnError → response (unconfirmed), with the result's opcode when it
// names one; anything else (a Reject, undecodable bytes, a global opcode) → nullopt.
std::optional<db::MessageFacts> classifyQueuedPdu(std::span<const std::uint8_t> pdu);

}  // namespace npac::npacd
