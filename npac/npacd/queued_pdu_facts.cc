#include "npac/npacd/queued_pdu_facts.h"

#include <variant>

#include "cmip/cmip.h"
#include "cmip/rose.h"

namespace npac::npacd {

std::optional<db::MessageFacts> classifyQueuedPdu(std::span<const std::uint8_t> pdu) {
  cmip::Result<cmip::RoseApdu> apdu = cmip::decodeRoseApdu(pdu);
  if (!apdu.isOk()) return std::nullopt;
  if (const auto* invoke = std::get_if<cmip::RoseInvoke>(&*apdu)) {
    if (!invoke->opcode.isLocal() || !cmip::isKnownCmipOpcode(invoke->opcode.localValue())) return std::nullopt;
    const int opcode = invoke->opcode.localValue();
    return db::MessageFacts{db::MessageKind::kPush, opcode,
                            cmip::isConfirmedCmipOpcode(static_cast<cmip::CmipOpcode>(opcode))};
  }
  if (const auto* result = std::get_if<cmip::RoseReturnResult>(&*apdu)) {
    int opcode = db::kUnknownOpcode;
    if (result->result && result->result->opcode.isLocal()) opcode = result->result->opcode.localValue();
    return db::MessageFacts{db::MessageKind::kResponse, opcode, false};
  }
  if (std::holds_alternative<cmip::RoseReturnError>(*apdu)) {
    return db::MessageFacts{db::MessageKind::kResponse, db::kUnknownOpcode, false};
  }
  return std::nullopt;  // a Reject is never queued by npacd
}

}  // namespace npac::npacd
