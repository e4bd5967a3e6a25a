// libFuzzer target: the binary PDU batch of POST /v1/pdu-batches (npac/npacd/api/pdu_batch.h).
// Any input is either refused with a code and a message, or accepted; an accepted batch
// encodes back to exactly the input (appendPduBatchRecord), so nothing was skipped or
// misread, and every accepted PDU is an Invoke whose stored facts agree with X.711.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "cmip/cmip.h"
#include "npac/npacd/api/pdu_batch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace npac;
  const std::span<const std::uint8_t> body(data, size);
  auto parsed = npacd::parsePduBatch(body);
  if (!parsed.isOk()) {
    if (parsed.status().layer() != StatusLayer::kRequest || parsed.status().message().empty()) std::abort();
    return 0;
  }
  std::vector<std::uint8_t> again;
  for (const npacd::OutboundMessage& m : parsed.value()) {
    if (m.message.confirmed != cmip::isConfirmedCmipOpcode(m.opcode)) std::abort();
    npacd::appendPduBatchRecord(again, m.message.spid, static_cast<std::uint8_t>(m.message.function_mask),
                                static_cast<std::uint8_t>(m.message.priority),
                                m.message.idempotency_key.value_or(""), m.message.pdu);
  }
  if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
  return 0;
}
